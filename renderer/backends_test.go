package renderer_test

import (
	"strings"
	"testing"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer"
)

func TestBackendsFollowTrafficPolicyAndFamily(t *testing.T) {
	mixed := []model.ServiceBackend{
		be("10.1.1.2:80", "local", "term"), be("10.1.2.2:80"),
		be("[fd00:1:1::2]:80", "local"), be("[fd00:1:2::2]:80", "term"),
		be("[::ffff:10.1.2.3]:80"), {IP: ap("10.1.2.4:1").Addr()},
	}
	etpLocal := func(s *model.ContivService) { s.ExternalTrafficPolicy = model.TrafficPolicyLocal }
	itpLocal := func(s *model.ContivService) { s.InternalTrafficPolicy = model.TrafficPolicyLocal }
	tests := []struct {
		name   string
		mutate func(*model.ContivService)
		kind   renderer.FrontendKind
		fam    renderer.Family
		want   string
	}{
		{"cluster set, IPv4: ready only, mapped address unmapped, port 0 dropped", nil, renderer.ClusterIPFrontend, renderer.IPv4, "10.1.2.2:80 10.1.2.3:80"},
		{"cluster set, IPv6", nil, renderer.NodePortFrontend, renderer.IPv6, "[fd00:1:1::2]:80"},
		{"externalTrafficPolicy Local, IPv4: the local terminating endpoint (per-category fallback)", etpLocal, renderer.NodePortFrontend, renderer.IPv4, "10.1.1.2:80"},
		{"externalTrafficPolicy Local does not govern ClusterIPs", etpLocal, renderer.ClusterIPFrontend, renderer.IPv4, "10.1.2.2:80 10.1.2.3:80"},
		{"internalTrafficPolicy Local, IPv6", itpLocal, renderer.ClusterIPFrontend, renderer.IPv6, "[fd00:1:1::2]:80"},
		{"internalTrafficPolicy Local does not govern LoadBalancer IPs", itpLocal, renderer.LoadBalancerFrontend, renderer.IPv4, "10.1.2.2:80 10.1.2.3:80"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := svc("b", ips("10.96.0.10", "fd00:96::10"), func(s *model.ContivService) { s.SetBackends("", mixed) })
			if tt.mutate != nil {
				tt.mutate(s)
			}
			var got []string
			for _, b := range renderer.Backends(s, renderer.Frontend{Kind: tt.kind}, tt.fam) {
				got = append(got, b.AddrPort().String())
			}
			if g := strings.Join(got, " "); g != tt.want {
				t.Fatalf("Backends = %s, want %s", g, tt.want)
			}
		})
	}
}

func TestFrontendKindPolicy(t *testing.T) {
	if renderer.ClusterIPFrontend.External() {
		t.Fatal("a ClusterIP is governed by internalTrafficPolicy")
	}
	for _, k := range []renderer.FrontendKind{renderer.ExternalIPFrontend, renderer.LoadBalancerFrontend, renderer.NodePortFrontend} {
		if !k.External() {
			t.Fatalf("%s is governed by externalTrafficPolicy", k)
		}
	}
}
