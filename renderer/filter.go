package renderer

import (
	"net/netip"
	"slices"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// FilterRules returns the filter rules of one service in family f, in the
// order they must be evaluated. They match only the service's own
// frontends (destination address, protocol and port), so traffic to
// anything else falls through to the shared permit-all ACL:
//
//   - every frontend in denied is denied from any client. A renderer lists
//     there the frontends without a usable endpoint that its translation
//     would not drop by itself; kube-proxy rejects such packets (ICMP
//     unreachable, TCP reset), but VPP's ACL plugin has no reject action,
//     so clients see a timeout instead of a refusal;
//   - with loadBalancerSourceRanges, each LoadBalancer frontend of served
//     permits the listed client prefixes of family f and then denies every
//     other client. As in kube-proxy, ranges are taken per address family:
//     a service listing only ranges of the other family does not restrict
//     these frontends. When a range holds one of nodeIPs (this node's
//     addresses of family f), the service's LoadBalancer IPs are permitted
//     as sources too, before the deny: a node that owns the LoadBalancer IP
//     (a VIP-style load balancer) sends to it from that address, as
//     kube-proxy allows; and so are nodeSources, the addresses the node's
//     own kernel sends from as VPP sees it (its host-link address: on a VPP
//     node the node IPs are VPP's, so the kernel's traffic never carries
//     them, while kube-proxy's node sends from an address the range holds).
//
// The rules are applied on input, before NAT44-ED and before cnat's
// translation at FIB lookup, so they see the frontend as destination and the
// client's own address as source.
func FilterRules(svc *model.ContivService, denied, served []Frontend, f Family, nodeIPs model.IPAddresses, nodeSources []netip.Prefix) []vppcfg.ACLRule {
	return append(filterRules(svc, denied, served, f, nodeIPs, nodeSources), sctpDenies(svc, f)...)
}

// FilterRulesWithSCTP is FilterRules for a renderer that translates SCTP
// (FrontendsWithSCTP): its SCTP frontends are among denied and served, and
// no rule drops the service's SCTP wholesale.
func FilterRulesWithSCTP(svc *model.ContivService, denied, served []Frontend, f Family, nodeIPs model.IPAddresses, nodeSources []netip.Prefix) []vppcfg.ACLRule {
	return filterRules(svc, denied, served, f, nodeIPs, nodeSources)
}

func filterRules(svc *model.ContivService, denied, served []Frontend, f Family, nodeIPs model.IPAddresses, nodeSources []netip.Prefix) []vppcfg.ACLRule {
	var rules []vppcfg.ACLRule
	anySrc := netip.PrefixFrom(f.unspecified(), 0)
	for _, fe := range denied {
		rules = append(rules, FrontendRule(vppcfg.ACLDeny, anySrc, fe))
	}
	ranges := SourceRanges(svc, f)
	if len(ranges) == 0 {
		return rules
	}
	var fromNode []netip.Prefix
	if RangesHoldNode(ranges, nodeIPs, f) {
		for _, fe := range served {
			if p := HostPrefix(fe.Addr.Addr()); fe.Kind == LoadBalancerFrontend && !slices.Contains(fromNode, p) {
				fromNode = append(fromNode, p)
			}
		}
		for _, p := range nodeSources {
			if p = p.Masked(); f.Has(p.Addr()) && !slices.Contains(fromNode, p) {
				fromNode = append(fromNode, p)
			}
		}
	}
	for _, fe := range served {
		if fe.Kind != LoadBalancerFrontend {
			continue
		}
		for _, src := range ranges {
			rules = append(rules, FrontendRule(vppcfg.ACLPermit, src, fe))
		}
		for _, src := range fromNode {
			rules = append(rules, FrontendRule(vppcfg.ACLPermit, src, fe))
		}
		rules = append(rules, FrontendRule(vppcfg.ACLDeny, anySrc, fe))
	}
	return rules
}

// sctpDenies drops SCTP to the service's external IPs and LoadBalancer IPs
// of family f when the service has SCTP ports: neither NAT44-ED (SCTP is an
// unknown protocol to it: a port mapping never matches) nor vppsvc's cnat
// translates them, and an address no mapping holds would otherwise forward
// the packet out of the node. The ACL plugin reads no SCTP ports, so the
// rule covers every port of the address. ClusterIPs need none (their drop
// route, or an exclusive cnat VIP, ends SCTP), nor node IPs (VPP, which has
// no SCTP stack, drops what reaches it).
func sctpDenies(svc *model.ContivService, f Family) []vppcfg.ACLRule {
	if len(SCTPPorts(svc)) == 0 || !Serves(svc, f) {
		return nil
	}
	var out []vppcfg.ACLRule
	var seen []netip.Addr
	for _, ip := range append(slices.Clone(svc.ExternalIPs), svc.LoadBalancerIPs...) {
		if ip = ip.Unmap(); !f.Has(ip) || ip.IsUnspecified() || slices.Contains(seen, ip) {
			continue
		}
		seen = append(seen, ip)
		out = append(out, vppcfg.ACLRule{Action: vppcfg.ACLDeny, Src: netip.PrefixFrom(f.unspecified(), 0), Dst: HostPrefix(ip),
			Protocol: vppcfg.ProtoSCTP, SrcPorts: vppcfg.AnyPort, DstPorts: vppcfg.AnyPort})
	}
	return out
}

// RangesHoldNode tells whether a source range holds one of the node's
// addresses of family f.
func RangesHoldNode(ranges []netip.Prefix, nodeIPs model.IPAddresses, f Family) bool {
	for _, ip := range nodeIPs {
		if !f.Has(ip) {
			continue
		}
		for _, r := range ranges {
			if r.Contains(ip) {
				return true
			}
		}
	}
	return false
}

// SourceRanges returns the service's loadBalancerSourceRanges of family f,
// masked. An IPv4-mapped IPv6 prefix (::ffff:a.b.c.d/96+n) counts as the
// IPv4 prefix a.b.c.d/n, which is what the ACL plugin can match.
func SourceRanges(svc *model.ContivService, f Family) []netip.Prefix {
	var out []netip.Prefix
	for _, p := range svc.LoadBalancerSourceRanges {
		a := p.Addr()
		switch {
		case !p.IsValid():
		case a.Is4In6() && p.Bits() >= 96:
			if f == IPv4 {
				out = append(out, netip.PrefixFrom(a.Unmap(), p.Bits()-96).Masked())
			}
		case f.Has(a) && !a.Is4In6():
			out = append(out, p.Masked())
		}
	}
	return out
}

// FrontendRule matches packets from src to one frontend.
func FrontendRule(action vppcfg.ACLAction, src netip.Prefix, fe Frontend) vppcfg.ACLRule {
	r := vppcfg.ACLRule{
		Action:   action,
		Src:      src,
		Dst:      HostPrefix(fe.Addr.Addr()),
		Protocol: fe.Protocol,
		SrcPorts: vppcfg.AnyPort,
		DstPorts: vppcfg.SinglePort(fe.Addr.Port()),
	}
	if fe.Protocol == vppcfg.ProtoSCTP {
		// The ACL plugin reads no SCTP ports (acl_fill_5tuple_l4_and_pkt_data
		// leaves them 0): the rule covers every SCTP port of the address.
		r.DstPorts = vppcfg.AnyPort
	}
	return r
}
