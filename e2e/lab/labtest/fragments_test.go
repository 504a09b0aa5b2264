package labtest

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/vppsvc/vppsvc/e2e/lab/netexec"
)

// TestFragmentedUDP: a UDP datagram larger than the links' MTU (2,000
// bytes of payload, so fragmented at 1500 both ways) through a ClusterIP is
// echoed back whole, as a DNS answer over EDNS0 or a large syslog message
// would be. The client pod is on node-a, an endpoint on each node, so both
// the local and the remote path are tried.
func TestFragmentedUDP(t *testing.T) {
	l := needLab(t)
	ns := newNamespace(t)
	a := l.Nodes[0].Name
	backends := createPods(t, ns, "frag", 2, a, l.Nodes[1].Name)
	clients := createPods(t, ns, "client", 1, a)
	svc := createService(t, ns, webService("frag", "frag"))
	// "echo " and 1995 bytes: a 2,000-byte datagram, within netexec's
	// (and agnhost's) 2,048-byte read.
	msg := strings.Repeat("0123456789", 200)[:2000-len(netexec.CmdEcho)-1]
	for _, f := range families {
		t.Run(famName(f), func(t *testing.T) {
			addr := hostPort(svcIP(svc, f), 90)
			reachAll(t, fromPod(clients[0]), netexec.ProtoUDP, addr, names(backends))
			var fails []error
			tries := 0
			for ; tries < 6 && len(fails) < 2; tries++ {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				got, err := netexec.UDPEcho(ctx, fromPod(clients[0]), addr, msg)
				cancel()
				if err == nil && got != msg {
					t.Fatalf("echo of %d bytes came back as %d bytes", len(msg), len(got))
				}
				if err != nil {
					fails = append(fails, err)
				}
			}
			if len(fails) == 0 {
				return
			}
			// The client's node translates the datagram: a skip is VPP's.
			if f == corev1.IPv4Protocol && onCNAT(f) && !l.Node(a).IsKernel() {
				t.Skipf("VPP 25.10's cnat does not translate IPv4 fragments after the first: cnat_session_make_key (cnat_node.h) "+
					"reads the ports right after the IPv4 header of every fragment, whatever its offset, so a later fragment's key "+
					"holds payload bytes, matches no session or translation, and the exclusive VIP drops it "+
					"(docs/renderer-cnat4.md, Fragments); here %d of %d echoes unanswered: %v", len(fails), tries, fails[0])
			}
			if f == corev1.IPv6Protocol && !l.Node(a).IsKernel() {
				t.Skipf("VPP 25.10's cnat does not translate IPv6 fragments: it reads the L4 header right after the IPv6 header, "+
					"finds the fragment header instead and leaves the packet to the VIP's FIB entry, which drops it "+
					"(docs/renderer-ipv6.md, Fragments); here %d of %d echoes unanswered: %v", len(fails), tries, fails[0])
			}
			t.Errorf("%d of %d echoes of a %d-byte datagram unanswered: %v", len(fails), tries, len(msg)+len(netexec.CmdEcho)+1, fails)
		})
	}
}
