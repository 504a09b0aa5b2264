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
	lb4b := fe(renderer.LoadBalancerFrontend, "198.51.100.2:80")
	cip4 := fe(renderer.ClusterIPFrontend, "10.96.0.10:80")
	tests := []struct {
		name           string
		svc            *model.ContivService
		denied, served []renderer.Frontend
		fam            renderer.Family
		nodeIPs        []string
		nodeSources    []netip.Prefix
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
		{name: "a range holds the node's address: the LoadBalancer IPs are permitted as sources (traffic the node sends as the LB IP)",
			svc: svc("rn", nil, func(s *model.ContivService) {
				s.LoadBalancerSourceRanges = []netip.Prefix{pfx("192.168.16.0/24")}
			}), served: []renderer.Frontend{cip4, lb4, lb4b}, fam: renderer.IPv4, nodeIPs: []string{"2001:db8:16::1", "192.168.16.1"},
			want: []vppcfg.ACLRule{
				rule(vppcfg.ACLPermit, "192.168.16.0/24", lb4), rule(vppcfg.ACLPermit, "198.51.100.1/32", lb4), rule(vppcfg.ACLPermit, "198.51.100.2/32", lb4),
				rule(vppcfg.ACLDeny, "0.0.0.0/0", lb4),
				rule(vppcfg.ACLPermit, "192.168.16.0/24", lb4b), rule(vppcfg.ACLPermit, "198.51.100.1/32", lb4b), rule(vppcfg.ACLPermit, "198.51.100.2/32", lb4b),
				rule(vppcfg.ACLDeny, "0.0.0.0/0", lb4b)}},
		{name: "a range holds the node's address: the node's own sources (its host link, as VPP sees it) are permitted too, of the family only",
			svc: svc("rns", nil, func(s *model.ContivService) {
				s.LoadBalancerSourceRanges = []netip.Prefix{pfx("192.168.16.0/24")}
			}), served: []renderer.Frontend{lb4}, fam: renderer.IPv4, nodeIPs: []string{"192.168.16.1"},
			nodeSources: []netip.Prefix{pfx("172.30.1.2/32"), pfx("fd00:ffff::2/128"), pfx("172.30.1.0/24")},
			want: []vppcfg.ACLRule{
				rule(vppcfg.ACLPermit, "192.168.16.0/24", lb4), rule(vppcfg.ACLPermit, "198.51.100.1/32", lb4),
				rule(vppcfg.ACLPermit, "172.30.1.2/32", lb4), rule(vppcfg.ACLPermit, "172.30.1.0/24", lb4),
				rule(vppcfg.ACLDeny, "0.0.0.0/0", lb4)}},
		{name: "node sources without a range holding the node: not permitted", svc: svc("rx", nil, ranges),
			served: []renderer.Frontend{lb4}, fam: renderer.IPv4, nodeIPs: []string{"192.168.16.1"}, nodeSources: []netip.Prefix{pfx("172.30.1.2/32")},
			want: []vppcfg.ACLRule{
				rule(vppcfg.ACLPermit, "100.64.1.0/24", lb4), rule(vppcfg.ACLPermit, "100.64.2.0/24", lb4),
				rule(vppcfg.ACLDeny, "0.0.0.0/0", lb4)}},
		{name: "a range holds only the node's address of the other family: nothing more", svc: svc("rn6", nil, func(s *model.ContivService) {
			s.LoadBalancerSourceRanges = []netip.Prefix{pfx("100.64.1.0/24"), pfx("2001:db8:16::/64")}
		}), served: []renderer.Frontend{lb4}, fam: renderer.IPv4, nodeIPs: []string{"2001:db8:16::1", "192.168.16.1"},
			want: []vppcfg.ACLRule{rule(vppcfg.ACLPermit, "100.64.1.0/24", lb4), rule(vppcfg.ACLDeny, "0.0.0.0/0", lb4)}},
		{name: "SCTP ports: SCTP to the external and LoadBalancer IPs is dropped, every port", svc: svc("sc", model.NewIPAddresses(netip.MustParseAddr("10.96.0.1")), func(s *model.ContivService) {
			s.SetPort("sctp", model.ServicePort{Protocol: model.ProtocolSCTP, Port: 9000})
			s.ExternalIPs = model.NewIPAddresses(netip.MustParseAddr("203.0.113.9"), netip.MustParseAddr("2001:db8:e::9"))
			s.LoadBalancerIPs = model.NewIPAddresses(netip.MustParseAddr("198.51.100.1"))
		}), served: []renderer.Frontend{cip4, lb4}, fam: renderer.IPv4,
			want: []vppcfg.ACLRule{
				{Action: vppcfg.ACLDeny, Src: pfx("0.0.0.0/0"), Dst: pfx("203.0.113.9/32"), Protocol: vppcfg.ProtoSCTP, SrcPorts: vppcfg.AnyPort, DstPorts: vppcfg.AnyPort},
				{Action: vppcfg.ACLDeny, Src: pfx("0.0.0.0/0"), Dst: pfx("198.51.100.1/32"), Protocol: vppcfg.ProtoSCTP, SrcPorts: vppcfg.AnyPort, DstPorts: vppcfg.AnyPort}}},
		{name: "ranges of the other family only restrict nothing", svc: svc("r4", nil, func(s *model.ContivService) {
			s.LoadBalancerSourceRanges = []netip.Prefix{pfx("100.64.1.0/24")}
		}), served: []renderer.Frontend{lb6}, fam: renderer.IPv6, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var nodeIPs []netip.Addr
			for _, a := range tt.nodeIPs {
				nodeIPs = append(nodeIPs, netip.MustParseAddr(a))
			}
			got := renderer.FilterRules(tt.svc, tt.denied, tt.served, tt.fam, model.NewIPAddresses(nodeIPs...), tt.nodeSources)
			if !slices.Equal(got, tt.want) {
				t.Fatalf("FilterRules =\n  %v\nwant\n  %v", got, tt.want)
			}
		})
	}
	if r := renderer.FrontendRule(vppcfg.ACLDeny, pfx("::/0"), lb6); r.Dst != pfx("2001:db8:1b::1/128") || r.DstPorts != vppcfg.SinglePort(80) {
		t.Fatalf("FrontendRule = %s, want the frontend's /128 and port", r)
	}
}
