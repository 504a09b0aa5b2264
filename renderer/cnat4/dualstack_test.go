package cnat4_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/vppsvc/vppsvc/renderer/cnat"
	"github.com/vppsvc/vppsvc/renderer/internal/cnattrace"
	"github.com/vppsvc/vppsvc/renderer/internal/tracetest"
	"github.com/vppsvc/vppsvc/renderer/ipv6"
)

// TestTraceDualStack registers both cnat renderers: the IPv4 half of a
// dual-stack service goes through this one, the IPv6 half through the IPv6
// renderer, each through cnat, in every hairpinSNAT mode. In hairpin-only
// both need cnat's one set of global SNAT settings, each with its own
// family's address: the VPP layer merges their halves
// (vppcfg.CNATSnatConfig), so that each pod reaching itself is source-NATed
// to its own family's SNAT address.
func TestTraceDualStack(t *testing.T) {
	pod2, remote2 := "10.1.1.2:8080", "10.1.2.2:8080" // port "http" 8080
	svc := tracetest.Service("dual", "10.96.0.28", tracetest.LoadBalancer(30089, "198.51.100.28", "2001:db8:1b::28"), tracetest.DualStack("10.96.0.28", "fd00:96::28"))
	v4 := k8sSlice("dual", tracetest.Local("10.1.1.2"), tracetest.Remote("10.1.2.2"))
	v6 := tracetest.Slice("dual", discoveryv1.AddressTypeIPv6, tracetest.Local("fd00:1:1::2"), tracetest.Remote("fd00:1:2::2"))
	v6.Name = "dual-v6"
	pod2v6 := tracetest.Client{Name: "pod 2 (IPv6)", Ingress: "tap2", Addr: ip("fd00:1:1::2")}
	for _, mode := range []cnat.HairpinSNAT{cnat.HairpinSNATLocalPaths, cnat.HairpinSNATOnly} {
		t.Run("hairpinSNAT "+string(mode), func(t *testing.T) {
			cfg4 := testConfig()
			cfg4.HairpinSNAT = mode
			cfg6 := ipv6.DefaultConfig()
			cfg6.SNATAddress, cfg6.HairpinSNAT = tracetest.NodeIP6, mode
			e := faceWith(agentOptions{ipv6: &cfg6}).NewEnvWith(t, cfg4, cnattrace.Cluster{
				Services: []*corev1.Service{svc},
				Slices:   []*discoveryv1.EndpointSlice{v4, v6},
			})
			tr := e.Check(podClient(2), tracetest.TCP, "10.96.0.28:80", tracetest.Reaches(pod2, remote2).SNATTo(pod2))
			if tr.Out.Dst.String() == pod2 && tr.Out.Src.Addr() != tracetest.NodeIP4 {
				t.Fatalf("IPv4 hairpin source-NATed to %s, want %s", tr.Out.Src, tracetest.NodeIP4)
			}
			tr = e.Trace(pod2v6, tracetest.TCP, "[fd00:96::28]:80")
			if steps := strings.Join(tr.Steps, "\n"); !tr.ReplyOK || !strings.Contains(steps, "cnat") {
				t.Fatalf("IPv6 ClusterIP flow not translated by cnat: %s to %s (%s)\n%s", tr.Verdict, tr.Out.Dst, tr.Reason, steps)
			}
			if tr.Out.Dst.Addr() == pod2v6.Addr && tr.Out.Src.Addr() != tracetest.NodeIP6 {
				t.Fatalf("IPv6 hairpin source-NATed to %s, want %s", tr.Out.Src, tracetest.NodeIP6)
			}
			// The uplink's clients: every path source-NATed by default, only
			// the remote one in hairpin-only (snatPath).
			want := tracetest.Reaches(pod2, remote2).SNATAll()
			if mode == cnat.HairpinSNATOnly {
				want = tracetest.Reaches(pod2, remote2).SNATTo(remote2)
			}
			e.Check(external, tracetest.TCP, "198.51.100.28:80", want)
		})
	}
}
