package labtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"testing"
	"time"

	"go.fd.io/govpp/binapi/ip_types"
	"go.fd.io/govpp/binapi/nat44_ed"
	corev1 "k8s.io/api/core/v1"

	"github.com/vppsvc/vppsvc/e2e/lab/netexec"
	"github.com/vppsvc/vppsvc/e2e/lab/topology"
	"github.com/vppsvc/vppsvc/e2e/lab/vppnode"
)

// Bounds of TestNodePortManyConnections: enough connections for the
// translating node to hold thousands of recent flows to one endpoint at
// once, the way a busy NodePort does, and a time limit well above what
// they take (about 1,000 a second on either kind of node).
const (
	manyConnections     = 8000
	manyConnectionsTime = 60 * time.Second
	manyConnectionWait  = 2 * time.Second
	manyConnectionsFail = 3 // failures after which the loop stops
)

// TestNodePortManyConnections: an external client opens new connections
// to a NodePort (externalTrafficPolicy Cluster, one endpoint on the other
// node), one after another, each with one request; every one completes,
// promptly. The node masquerades each to its own address: kube-proxy
// through conntrack, which never gives two live flows to one endpoint the
// same source port, VPP through NAT44-ED's twice-NAT (IPv4) or cnat.
func TestNodePortManyConnections(t *testing.T) {
	l := needLab(t)
	ns := newNamespace(t)
	a, b := l.Nodes[0], l.Nodes[1]
	backend := createPods(t, ns, "many", 1, b.Name)
	svc := webService("many", "many")
	svc.Spec.Type = corev1.ServiceTypeNodePort
	svc = createService(t, ns, svc)
	for _, f := range families {
		t.Run(famName(f), func(t *testing.T) {
			ext := fromExternal(externalClient(f))
			addr := hostPort(nodeIP(a, f), svc.Spec.Ports[0].NodePort)
			reachAll(t, ext, netexec.ProtoHTTP, addr, names(backend))
			var failed []string
			start := time.Now()
			n := 0
			for ; n < manyConnections && time.Since(start) < manyConnectionsTime && len(failed) < manyConnectionsFail; n++ {
				ctx, cancel := context.WithTimeout(context.Background(), manyConnectionWait)
				t0 := time.Now()
				_, err := netexec.Hostname(ctx, ext, addr)
				cancel()
				if err != nil {
					failed = append(failed, fmt.Sprintf("connection %d after %s: %v", n+1, time.Since(t0).Round(time.Millisecond), err))
				}
			}
			t.Logf("%d connections through %s's NodePort in %s, %d failed", n, a.Name, time.Since(start).Round(time.Millisecond), len(failed))
			if len(failed) == 0 {
				return
			}
			if !a.IsKernel() {
				if onCNAT(f) {
					t.Skipf("VPP 25.10's cnat frees a source-NATed flow's port wrongly (cnat_free_port clears the bit of the "+
						"byte-swapped number: docs/renderer-ipv6.md, Source ports), so after some thousands of connections a NodePort "+
						"under eTP Cluster runs out of ports or hands a new flow a live flow's port; here: %v", failed)
				}
				if shared := sharedTwiceNATPorts(t, a, podIP(backend[0], f)); shared > 0 {
					t.Skipf("VPP 25.10's NAT44-ED gave a new flow a source port another flow to the same endpoint holds: "+
						"the twice-NAT allocation of an out2in session (nat44_ed_alloc_i2o_port, nat44_ed_out2in.c) adds the "+
						"reverse flow with is_add 1, which overwrites an existing key (bihash_template.c) instead of failing "+
						"and trying another port, so the older flow's replies go to the newer one "+
						"(docs/renderer-nat44.md, Twice-NAT ports); %d sessions to the endpoint share a port; here: %v", shared, failed)
				}
			}
			t.Errorf("%d of %d connections through the NodePort failed: %v", len(failed), n, failed)
		})
	}
}

// sharedTwiceNATPorts counts the NAT44-ED sessions of node's VPP toward
// endpoint whose twice-NAT source (address and port) another of them has
// too.
func sharedTwiceNATPorts(t *testing.T, node topology.Node, endpoint netip.Addr) int {
	t.Helper()
	v, err := theLab.VPP(node.Name)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := vppnode.Connect(ctx, v.APISocket())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st, err := nat44_ed.NewServiceClient(c.Conn()).Nat44UserSessionV3Dump(ctx,
		&nat44_ed.Nat44UserSessionV3Dump{IPAddress: ip_types.IP4Address(endpoint.As4())})
	if err != nil {
		t.Fatal(err)
	}
	type source struct {
		addr ip_types.IP4Address
		port uint16
	}
	holders := map[source]int{}
	for {
		d, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("NAT44-ED sessions of %s on %s: %v", endpoint, node.Name, err)
		}
		if d.ExtHostNatAddress != (ip_types.IP4Address{}) { // twice-NATed
			holders[source{d.ExtHostNatAddress, d.ExtHostNatPort}]++
		}
	}
	shared := 0
	for _, n := range holders {
		if n > 1 {
			shared += n
		}
	}
	return shared
}
