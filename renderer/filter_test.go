package renderer_test

import (
	"net/netip"
	"slices"
	"testing"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/vppcfg"
)

func TestFilterRules(t *testing.T) {
	ranges := func(s *model.ContivService) {
		s.LoadBalancerSourceRanges = []netip.Prefix{pfx("100.64.1.0/24"), pfx("::ffff:100.64.2.0/120"), pfx("2001:db8:c:1::/64")}
	}
	rule := func(action vppcfg.ACLAction, src string, f renderer.Frontend) vppcfg.ACLRule {
		return renderer.FrontendRule(action, pfx(src), f)
	}
	lb4, lb6 := fe(renderer.LoadBalancerFrontend, "198.51.100.1:80"), fe(renderer.LoadBalancerFrontend, "[2001:db8:1b::1]:80")
	cip4 := fe(renderer.ClusterIPFrontend, "10.96.0.10:80")
	tests := []struct {
		name           string
		svc            *model.ContivService
		denied, served []renderer.Frontend
		fam            renderer.Family
		want           []vppcfg.ACLRule
	}{
		{name: "nothing to filter", svc: svc("open", nil), served: []renderer.Frontend{cip4, lb4}, fam: renderer.IPv4, want: nil},
		{name: "denied frontends first, from any client", svc: svc("d", nil, ranges), denied: []renderer.Frontend{cip4, lb4}, fam: renderer.IPv4,
			want: []vppcfg.ACLRule{rule(vppcfg.ACLDeny, "0.0.0.0/0", cip4), rule(vppcfg.ACLDeny, "0.0.0.0/0", lb4)}},
		{name: "IPv4 source ranges, the IPv4-mapped one as IPv4, on served LoadBalancer frontends only", svc: svc("r", nil, ranges),
			served: []renderer.Frontend{cip4, lb4}, fam: renderer.IPv4,
			want: []vppcfg.ACLRule{
				rule(vppcfg.ACLPermit, "100.64.1.0/24", lb4), rule(vppcfg.ACLPermit, "100.64.2.0/24", lb4),
				rule(vppcfg.ACLDeny, "0.0.0.0/0", lb4)}},
		{name: "IPv6 source ranges", svc: svc("r6", nil, ranges), served: []renderer.Frontend{lb6}, fam: renderer.IPv6,
			want: []vppcfg.ACLRule{rule(vppcfg.ACLPermit, "2001:db8:c:1::/64", lb6), rule(vppcfg.ACLDeny, "::/0", lb6)}},
		{name: "ranges of the other family only restrict nothing", svc: svc("r4", nil, func(s *model.ContivService) {
			s.LoadBalancerSourceRanges = []netip.Prefix{pfx("100.64.1.0/24")}
		}), served: []renderer.Frontend{lb6}, fam: renderer.IPv6, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := renderer.FilterRules(tt.svc, tt.denied, tt.served, tt.fam)
			if !slices.Equal(got, tt.want) {
				t.Fatalf("FilterRules =\n  %v\nwant\n  %v", got, tt.want)
			}
		})
	}
	if r := renderer.FrontendRule(vppcfg.ACLDeny, pfx("::/0"), lb6); r.Dst != pfx("2001:db8:1b::1/128") || r.DstPorts != vppcfg.SinglePort(80) {
		t.Fatalf("FrontendRule = %s, want the frontend's /128 and port", r)
	}
}
