package main

import (
	"context"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/vppsvc/vppsvc/cmd/vppsvc/internal/sample"
	"github.com/vppsvc/vppsvc/fakevpp"
)

// serviceCIDRList is `kubectl get servicecidrs -o yaml` of a dual-stack
// cluster with a second IPv4 range being deleted, an element that is no
// CIDR, and an object whose Ready condition is False.
const serviceCIDRList = `apiVersion: v1
kind: List
items:
- apiVersion: networking.k8s.io/v1
  kind: ServiceCIDR
  metadata: {name: kubernetes}
  spec:
    cidrs: [10.96.0.0/12, "fd00:96::/108"]
  status:
    conditions:
    - {type: Ready, status: "True", reason: "", message: "", lastTransitionTime: "2026-01-01T00:00:00Z"}
- apiVersion: networking.k8s.io/v1
  kind: ServiceCIDR
  metadata:
    name: leaving
    deletionTimestamp: "2026-01-02T00:00:00Z"
    finalizers: [networking.k8s.io/service-cidr-finalizer]
  spec:
    cidrs: [172.30.0.0/16]
- apiVersion: networking.k8s.io/v1
  kind: ServiceCIDR
  metadata: {name: typo}
  spec:
    cidrs: [10.200.0.0/33]
- apiVersion: networking.k8s.io/v1
  kind: ServiceCIDR
  metadata: {name: unready}
  spec:
    cidrs: [10.201.0.0/16]
  status:
    conditions:
    - {type: Ready, status: "False", reason: Terminating, message: "", lastTransitionTime: "2026-01-01T00:00:00Z"}
`

// clusterWithServiceCIDRs writes the sample cluster followed by the
// ServiceCIDR list, as one multi-document dump.
func clusterWithServiceCIDRs(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cluster.yaml")
	dump := string(sample.ClusterYAML) + "\n---\n" + serviceCIDRList
	require.NoError(t, os.WriteFile(path, []byte(dump), 0o600))
	return path
}

// TestRenderServiceCIDRsFromFile: render and trace take the service CIDRs
// of the ServiceCIDR objects in the dump when no service CIDR is
// configured: one drop route per CIDR in force replaces the ClusterIPs'
// own; an object being deleted or not Ready counts for nothing; a bad
// element is skipped with a warning naming object and field. A configured
// range wins over the objects.
func TestRenderServiceCIDRsFromFile(t *testing.T) {
	file := clusterWithServiceCIDRs(t)
	tests := []struct {
		name      string
		args      []string
		has, hasn []string
	}{
		{name: "from the objects",
			has:  []string{"ip route add 10.96.0.0/12 table 0 via drop", "ip route add fd00:96::/108 table 0 via drop"},
			hasn: []string{"ip route add 10.96.0.10/32", "ip route add 10.96.0.53/32", "172.30.0.0/16", "10.201.0.0/16", "10.200.0.0"}},
		{name: "the flag wins", args: []string{"--service-cluster-ip-range", "10.96.0.0/28"},
			has:  []string{"ip route add 10.96.0.0/28 table 0 via drop", "ip route add 10.96.0.53/32 table 0 via drop"},
			hasn: []string{"10.96.0.0/12", "fd00:96::/108", "ip route add 10.96.0.10/32"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, err := runCLI(t, append([]string{"render", "-o", "vppcli", "-f", file}, tt.args...)...)
			require.NoError(t, err, errOut)
			for _, s := range tt.has {
				assert.Contains(t, out, s)
			}
			for _, s := range tt.hasn {
				assert.NotContains(t, out, s)
			}
		})
	}

	_, errOut, err := runCLI(t, "render", "-o", "vppcli", "-f", file)
	require.NoError(t, err)
	var warning string
	for _, line := range strings.Split(errOut, "\n") {
		if strings.Contains(line, "10.200.0.0/33") {
			warning = line
		}
	}
	for _, s := range []string{"ServiceCIDR", "key=typo", "spec.cidrs[]"} {
		assert.Contains(t, warning, s, "the bad element's warning: %q", errOut)
	}

	out, _, err := runCLI(t, "trace", "-f", file, "--src", "10.1.1.9", "--dst", "10.96.0.250:80")
	require.NoError(t, err)
	assert.Contains(t, out, "verdict:   drop", "a free address of the ServiceCIDR: %s", out)
	out, _, err = runCLI(t, "trace", "-f", file, "--src", "10.1.1.9", "--dst", "172.30.0.9:80")
	require.NoError(t, err)
	assert.Contains(t, out, "verdict:   forward", "a range being deleted is no service CIDR any more: %s", out)
}

// TestRunServiceCIDRs: `run` without a configured service CIDR watches the
// cluster's ServiceCIDR objects and drops their free addresses by one route
// per CIDR; with --service-cluster-ip-range it does not even list them, and
// the flag's range is the one dropped.
func TestRunServiceCIDRs(t *testing.T) {
	tests := []struct {
		name  string
		flags configFlags
		// lists is whether servicecidrs are listed; dropped* the route that
		// drops a free address of 10.96.0.0/12 and 10.97.0.0/24, "" for
		// none.
		lists                    bool
		dropped9696, dropped1097 string
	}{
		{name: "from the objects", lists: true, dropped9696: "10.96.0.0/12", dropped1097: "10.97.0.0/24"},
		{name: "the flag wins", flags: configFlags{serviceCIDRs: []string{"10.96.0.0/16"}}, dropped9696: "10.96.0.0/16"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client, _ := sampleClientset(t)
			require.NoError(t, client.Tracker().Add(&networkingv1.ServiceCIDR{
				ObjectMeta: metav1.ObjectMeta{Name: "kubernetes"}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.96.0.0/12", "10.97.0.0/24"}}}))
			var lists atomic.Int32
			client.PrependReactor("list", "servicecidrs", func(k8stesting.Action) (bool, runtime.Object, error) {
				lists.Add(1)
				return false, nil, nil
			})
			vpp := fakevpp.New(fakevpp.WithSeed(1))
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			cfg := nodeConfig{Node: "node-a", FrontendInterfaces: []string{"uplink0", "host0"}, ConfigFlags: tt.flags,
				RetryMin: time.Millisecond, RetryMax: 20 * time.Millisecond, SyncPoll: 5 * time.Millisecond}
			go func() {
				done <- runNode(ctx, cfg, nodeDeps{Client: client, VPP: vpp, Fake: vpp, HTTP: ln, Log: quietLogger()})
			}()
			defer func() {
				cancel()
				assert.NoError(t, <-done)
			}()
			reason := func(dst string) string {
				return vpp.Trace(fakevpp.Packet{Ingress: "uplink0", Protocol: 6,
					Src: netip.MustParseAddrPort("198.51.100.7:20000"), Dst: netip.MustParseAddrPort(dst)}).Reason
			}
			require.Eventually(t, func() bool { return strings.Contains(reason("10.96.0.250:80"), "matches drop route "+tt.dropped9696) },
				wait, tick, "a free address of 10.96.0.0/12: last reason %q", reason("10.96.0.250:80"))
			// The node's routes are written in one transaction: the other
			// range's is there too, or never.
			if tt.dropped1097 != "" {
				assert.Contains(t, reason("10.97.0.250:80"), "matches drop route "+tt.dropped1097)
			} else {
				assert.NotContains(t, reason("10.97.0.250:80"), "drop route")
			}
			assert.Equal(t, tt.lists, lists.Load() > 0, "servicecidrs listed")
		})
	}
}
