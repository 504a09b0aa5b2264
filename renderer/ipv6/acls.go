package ipv6

import (
	"net/netip"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// anyIPv6 matches every IPv6 address.
var anyIPv6 = netip.PrefixFrom(netip.IPv6Unspecified(), 0)

// ACLName is the name (and VPP tag) of the input ACL the renderer owns for a
// service; see renderer.ServiceACLName for its shape and bound. The prefix
// differs from the NAT44 renderer's, so a dual-stack service has one ACL per
// renderer.
func ACLName(id model.ServiceID) string { return renderer.ServiceACLName(Name, id) }

// serviceACL returns the input ACL of a service, or nil when the service
// needs no filtering. Its rules match only the service's own frontends
// (destination address, protocol and port), so traffic to anything else,
// ICMPv6 neighbour discovery included, falls through to the shared
// permit-all ACL bound after it:
//
//   - every frontend in denied (no usable backend, and cnat would not drop
//     it by itself: see RenderService) is denied. kube-proxy rejects such
//     packets; VPP's ACL plugin has no reject action, so clients see a
//     timeout instead of a refusal;
//   - with loadBalancerSourceRanges, each served LoadBalancer frontend
//     permits the listed IPv6 client prefixes and denies every other
//     client. As in kube-proxy, ranges are taken per address family: a
//     service listing only IPv4 ranges does not restrict its IPv6
//     frontends.
//
// The ACL is applied on input, before cnat translates at FIB lookup, so it
// sees the frontend as destination and the client's own address as source.
func serviceACL(svc *model.ContivService, denied, served []Frontend) *vppcfg.ACL {
	var rules []vppcfg.ACLRule
	for _, fe := range denied {
		rules = append(rules, frontendRule(vppcfg.ACLDeny, anyIPv6, fe))
	}
	var ranges []netip.Prefix
	for _, p := range svc.LoadBalancerSourceRanges {
		if a := p.Addr(); a.Is6() && !a.Is4In6() {
			ranges = append(ranges, p.Masked())
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
			rules = append(rules, frontendRule(vppcfg.ACLDeny, anyIPv6, fe))
		}
	}
	if len(rules) == 0 {
		return nil
	}
	return &vppcfg.ACL{Name: ACLName(svc.ID), Rules: rules}
}

// frontendRule matches packets from src to one frontend.
func frontendRule(action vppcfg.ACLAction, src netip.Prefix, fe Frontend) vppcfg.ACLRule {
	return vppcfg.ACLRule{
		Action:   action,
		Src:      src,
		Dst:      netip.PrefixFrom(fe.Addr.Addr(), 128),
		Protocol: fe.Protocol,
		SrcPorts: vppcfg.AnyPort,
		DstPorts: vppcfg.SinglePort(fe.Addr.Port()),
	}
}

// aclBindings binds a service ACL on input of every frontend interface, at
// the priority shared by all renderers' service ACLs: clients (local pods,
// the host, remote pods and external clients on the uplink) reach the
// frontends only through them.
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
