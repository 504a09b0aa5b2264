package nat44

import (
	"testing"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/vppcfg"
)

func TestTwiceNATMode(t *testing.T) {
	cluster := service("c", "10.96.0.1")
	local := service("l", "10.96.0.2", func(s *model.ContivService) { s.ExternalTrafficPolicy = model.TrafficPolicyLocal })
	tests := []struct {
		svc  *model.ContivService
		kind renderer.FrontendKind
		want vppcfg.TwiceNATMode
	}{
		{cluster, renderer.ClusterIPFrontend, vppcfg.TwiceNATSelf},
		{local, renderer.ClusterIPFrontend, vppcfg.TwiceNATSelf},
		{cluster, renderer.NodePortFrontend, vppcfg.TwiceNATAlways},
		{cluster, renderer.ExternalIPFrontend, vppcfg.TwiceNATAlways},
		{cluster, renderer.LoadBalancerFrontend, vppcfg.TwiceNATAlways},
		{local, renderer.NodePortFrontend, vppcfg.TwiceNATOff},
		{local, renderer.LoadBalancerFrontend, vppcfg.TwiceNATOff},
	}
	for _, tt := range tests {
		if got := twiceNATMode(tt.svc, tt.kind); got != tt.want {
			t.Errorf("%s %s: %s, want %s", tt.svc.ExternalTrafficPolicy, tt.kind, got, tt.want)
		}
	}
}

func TestMappingKindByBackendCount(t *testing.T) {
	cfg := testConfig()
	svc := service("m", "10.96.0.1")
	fe := renderer.Frontend{Kind: renderer.ClusterIPFrontend, Addr: ap("10.96.0.1:80"), Protocol: vppcfg.ProtoTCP}
	if m := mappingFor(svc, fe, nil, renderer.ServiceLabel(svc.ID), &cfg); m != nil {
		t.Fatalf("no backend: %s, want none", m)
	}
	// One backend is an LB mapping too: scaling to two and back then
	// changes locals in place instead of swapping mappings.
	if m, ok := mappingFor(svc, fe, []model.ServiceBackend{be("10.1.2.2:80")}, renderer.ServiceLabel(svc.ID), &cfg).(*vppcfg.NAT44LBMapping); !ok || !m.Out2InOnly || len(m.Locals) != 2 || m.Locals[0] != vppcfg.LBPlaceholder(m) {
		t.Fatalf("one backend: %v, want an out2in-only LB mapping of one local and the placeholder", m)
	}
	if m, ok := mappingFor(svc, fe, []model.ServiceBackend{be("10.1.2.2:80"), be("10.1.2.3:80")}, renderer.ServiceLabel(svc.ID), &cfg).(*vppcfg.NAT44LBMapping); !ok || !m.Out2InOnly {
		t.Fatalf("two backends: %v, want an out2in-only LB mapping", m)
	}
}
