package nat44

import (
	"net/netip"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// anyIPv4 matches every IPv4 address.
var anyIPv4 = netip.PrefixFrom(netip.IPv4Unspecified(), 0)

// ACLName is the name (and VPP tag) of the input ACL the renderer owns for a
// service; see renderer.ServiceACLName for its shape and bound.
func ACLName(id model.ServiceID) string { return renderer.ServiceACLName(Name, id) }

// serviceACL returns the input ACL of a service, or nil when the service
// needs no filtering. Its rules match only the service's own frontends
// (destination address, protocol and port), so traffic to anything else
// falls through to the shared permit-all ACL bound after it:
//
//   - every frontend without a usable backend is denied. Without the rule
//     NAT44-ED (forwarding on) would pass the packet untranslated: a packet
//     to a ClusterIP would follow the default route out of the node, a
//     packet to a node port would reach the host. kube-proxy rejects such
//     packets (ICMP port unreachable, TCP reset); VPP has no reject action,
//     so clients see a timeout instead of a refusal;
//   - with loadBalancerSourceRanges, each LoadBalancer frontend permits the
//     listed IPv4 client prefixes and denies every other client. As in
//     kube-proxy, ranges are taken per address family: a service listing
//     only IPv6 ranges does not restrict its IPv4 frontends.
//
// The ACL is applied on input, before NAT, so it sees the frontend as
// destination and the client's own address as source.
func serviceACL(svc *model.ContivService, denied, served []Frontend) *vppcfg.ACL {
	var rules []vppcfg.ACLRule
	for _, fe := range denied {
		rules = append(rules, frontendRule(vppcfg.ACLDeny, anyIPv4, fe))
	}
	var ranges []netip.Prefix
	for _, p := range svc.LoadBalancerSourceRanges {
		if v4, ok := ipv4Prefix(p); ok {
			ranges = append(ranges, v4)
		}
	}
	if len(ranges) > 0 {
		for _, fe := range served {
			if fe.Kind != LoadBalancerFrontend {
				continue
			}
			for _, src := range ranges {
				rules = append(rules, frontendRule(vppcfg.ACLPermit, src, fe))
			}
			rules = append(rules, frontendRule(vppcfg.ACLDeny, anyIPv4, fe))
		}
	}
	if len(rules) == 0 {
		return nil
	}
	return &vppcfg.ACL{Name: ACLName(svc.ID), Rules: rules}
}

// ipv4Prefix returns p as a masked IPv4 prefix: IPv4 prefixes as they are,
// IPv4-mapped IPv6 prefixes (::ffff:a.b.c.d/96+n) as a.b.c.d/n; false for
// other IPv6 prefixes.
func ipv4Prefix(p netip.Prefix) (netip.Prefix, bool) {
	a := p.Addr()
	switch {
	case !p.IsValid():
		return netip.Prefix{}, false
	case a.Is4():
		return p.Masked(), true
	case a.Is4In6() && p.Bits() >= 96:
		return netip.PrefixFrom(a.Unmap(), p.Bits()-96).Masked(), true
	}
	return netip.Prefix{}, false
}

// frontendRule matches packets from src to one frontend.
func frontendRule(action vppcfg.ACLAction, src netip.Prefix, fe Frontend) vppcfg.ACLRule {
	return vppcfg.ACLRule{
		Action:   action,
		Src:      src,
		Dst:      netip.PrefixFrom(fe.Addr.Addr(), 32),
		Protocol: fe.Protocol,
		SrcPorts: vppcfg.AnyPort,
		DstPorts: vppcfg.SinglePort(fe.Addr.Port()),
	}
}

// aclBindings binds a service ACL on input of every frontend interface:
// clients (local pods, the host, remote pods and external clients on the
// uplink) reach the frontends only through them.
func aclBindings(aclName string, frontendIfs model.Interfaces) []vppcfg.Item {
	items := make([]vppcfg.Item, 0, len(frontendIfs))
	for _, ifName := range frontendIfs {
		items = append(items, &vppcfg.ACLBinding{
			Interface: ifName,
			Direction: vppcfg.ACLInput,
			ACL:       aclName,
			Priority:  renderer.ServiceACLPriority,
		})
	}
	return items
}
