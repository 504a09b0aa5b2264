package renderer_test

import (
	"net/netip"
	"slices"
	"testing"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// TestSCTPForARendererThatTranslatesIt: FrontendsWithSCTP adds the SCTP
// ports' frontends; FilterRulesWithSCTP filters them as any frontend, every
// SCTP port of the address (the ACL plugin reads no SCTP ports), and drops
// none of the service's SCTP wholesale, which FilterRules does.
func TestSCTPForARendererThatTranslatesIt(t *testing.T) {
	s := svc("sc", ips("10.96.0.1"), func(s *model.ContivService) {
		s.DeletePort("")
		s.SetPort("sctp", model.ServicePort{Protocol: model.ProtocolSCTP, Port: 9000, NodePort: 30900})
		s.LoadBalancerIPs = ips("198.51.100.1")
		s.LoadBalancerSourceRanges = []netip.Prefix{pfx("100.64.1.0/24")}
	})
	nodeIPs := ips("192.168.16.1")
	var got []string
	for _, fe := range renderer.FrontendsWithSCTP(s, nodeIPs, renderer.IPv4) {
		got = append(got, fe.String())
	}
	want := []string{"cluster-ip 10.96.0.1:9000/sctp", "load-balancer 198.51.100.1:9000/sctp", "node-port 192.168.16.1:30900/sctp"}
	if !slices.Equal(got, want) {
		t.Fatalf("FrontendsWithSCTP = %v, want %v", got, want)
	}
	if fes := renderer.Frontends(s, nodeIPs, renderer.IPv4); len(fes) != 0 {
		t.Fatalf("Frontends = %v, want no SCTP frontend", fes)
	}

	lb := renderer.FrontendsWithSCTP(s, nodeIPs, renderer.IPv4)[1]
	anyPort := func(action vppcfg.ACLAction, src string) vppcfg.ACLRule {
		return vppcfg.ACLRule{Action: action, Src: pfx(src), Dst: pfx("198.51.100.1/32"), Protocol: vppcfg.ProtoSCTP, SrcPorts: vppcfg.AnyPort, DstPorts: vppcfg.AnyPort}
	}
	rules := renderer.FilterRulesWithSCTP(s, nil, []renderer.Frontend{lb}, renderer.IPv4, nodeIPs, nil)
	if want := []vppcfg.ACLRule{anyPort(vppcfg.ACLPermit, "100.64.1.0/24"), anyPort(vppcfg.ACLDeny, "0.0.0.0/0")}; !slices.Equal(rules, want) {
		t.Fatalf("FilterRulesWithSCTP =\n  %v\nwant\n  %v", rules, want)
	}
	if rules := renderer.FilterRules(s, nil, nil, renderer.IPv4, nodeIPs, nil); len(rules) != 1 || rules[0] != anyPort(vppcfg.ACLDeny, "0.0.0.0/0") {
		t.Fatalf("FilterRules = %v, want SCTP to the LoadBalancer IP dropped", rules)
	}
}
