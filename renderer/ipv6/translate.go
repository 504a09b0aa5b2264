package ipv6

import (
	"net/netip"
	"slices"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// RenderService translates one service into the VPP items that implement
// its IPv6 frontends, sorted by key. It is a pure function of the service,
// the node context and the configuration:
//
//   - one cnat translation per frontend that has a usable backend
//     (translationFor), load-balancing over the backends its traffic policy
//     allows (ServingBackends);
//   - a frontend without a usable backend gets no translation. cnat drops
//     its packets by itself when the address stays an exclusive VIP, that
//     is when another frontend of the service on the same address is
//     translated (a translation with another port or protocol keeps the VIP
//     in cnat). Otherwise cnat would not see the packets at all, or, on a
//     node IP, would hand them to the host, so they are denied by the
//     service ACL (serviceACL), bound on input of every frontend interface
//     together with the LoadBalancer source-range rules.
//
// SCTP ports and IPv4 addresses yield nothing. The node-wide items the
// service relies on come from RenderNode.
func RenderService(svc *model.ContivService, node Node, cfg *Config) []vppcfg.Item {
	var items []vppcfg.Item
	var served, unserved []Frontend
	translated := map[netip.Addr]bool{} // addresses that stay cnat VIPs
	for _, fe := range Frontends(svc, node.IPs) {
		backends := ServingBackends(svc.Backends[fe.PortName], localOnly(svc, fe.Kind))
		if t := translationFor(svc, fe, backends, cfg); t != nil {
			items = append(items, t)
			served = append(served, fe)
			translated[fe.Addr.Addr()] = true
		} else {
			unserved = append(unserved, fe)
		}
	}
	var denied []Frontend
	for _, fe := range unserved {
		if fe.RealIP || !translated[fe.Addr.Addr()] {
			denied = append(denied, fe)
		}
	}
	if acl := serviceACL(svc, denied, served); acl != nil {
		items = append(items, acl)
		items = append(items, aclBindings(acl.Name, node.FrontendIfs)...)
	}
	return sortItems(items)
}

// RenderNode returns the node-wide items of the renderer, sorted by key:
// while filtering (at least one service ACL exists), the shared permit-all
// ACL bound last on every frontend interface, so that the service ACLs drop
// only their own traffic. cnat itself needs no node-wide configuration: its
// VIP path works on every interface without a feature to enable.
func RenderNode(node Node, filtering bool) []vppcfg.Item {
	if !filtering {
		return nil
	}
	items := []vppcfg.Item{renderer.PermitAllACL()}
	for _, ifName := range node.FrontendIfs {
		items = append(items, renderer.PermitAllBinding(ifName))
	}
	return sortItems(items)
}

// sortItems sorts items by key, the canonical order of every item list the
// translation returns.
func sortItems(items []vppcfg.Item) []vppcfg.Item {
	slices.SortFunc(items, func(a, b vppcfg.Item) int { return a.Key().Compare(b.Key()) })
	return items
}
