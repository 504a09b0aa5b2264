package cnat

import (
	"net/netip"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// RenderService translates one service into what implements its frontends
// of family f. It is a pure function of the service, the node context and the
// configuration:
//
//   - Items: one cnat translation per frontend that has a usable backend
//     (translationFor), load-balancing over the backends its traffic policy
//     allows (renderer.Backends), and the flow keeper that holds the
//     backends only one of them tracks (flowKeeper), sorted by key;
//   - a frontend without a usable backend gets no translation. cnat drops
//     its packets by itself when the address stays an exclusive VIP, that
//     is when another frontend of the service on the same address is
//     translated (a translation with another port or protocol keeps the VIP
//     in cnat). Otherwise cnat would not see the packets at all, or, on a
//     node IP, would hand them to the host, so they are denied by a filter
//     rule;
//   - an external frontend of an externalTrafficPolicy: Local service
//     without a local endpoint serves the node's own clients from the
//     cluster-wide set when the configuration names them (ownClientsOnly);
//   - Rules: those denies, the loadBalancerSourceRanges of its
//     LoadBalancer frontends (renderer.FilterRules), and the filter that
//     keeps other clients off the frontends served to the node's own
//     (ownClientsRules), which go into the service's filter shard.
//
// A service without a ClusterIP of the family, SCTP ports and addresses of
// the other family yield nothing. The node-wide items the service relies on come from RenderNode.
func RenderService(f Family, svc *model.ContivService, node Node, cfg *Config) renderer.Rendering {
	r := renderService(nil, f, svc, node, cfg)
	r.Items = renderer.SortItems(r.Items)
	return r
}

// renderService is RenderService with the items appended to items[:0]
// (renderer.CoreConfig.RenderService) in no particular order: the core
// orders them by claim itself.
func renderService(items []vppcfg.Item, f Family, svc *model.ContivService, node Node, cfg *Config) renderer.Rendering {
	r := renderer.Rendering{Items: items[:0]}
	// The frontends and their sorts are listed on the stack while they
	// fit (most services have one or two): renderService is called for
	// every service of a resync, and they are not kept.
	var room, servedRoom [4]Frontend
	served, unserved, ownOnly := servedRoom[:0], []Frontend(nil), []Frontend(nil)
	translated := map[netip.Addr]bool{} // addresses that stay cnat VIPs
	for _, fe := range appendFrontends(room[:0], f, svc, node.IPs) {
		backends := renderer.Backends(svc, fe.Frontend, f.IP)
		own := ownClientsOnly(f, svc, fe, backends, cfg)
		if own {
			backends = ownClientsBackends(f, svc, fe)
		}
		t := translationFor(svc, fe, backends, cfg)
		switch {
		case t != nil && own:
			ownOnly = append(ownOnly, fe)
		case t != nil:
			served = append(served, fe)
		default:
			unserved = append(unserved, fe)
			continue
		}
		r.Items = append(r.Items, t)
		translated[fe.Addr.Addr()] = true
	}
	var denied []renderer.Frontend
	for _, fe := range unserved {
		switch {
		case fe.Protocol == vppcfg.ProtoSCTP && fe.RealIP:
			// A rule cannot tell SCTP ports apart (renderer.FrontendRule),
			// so it would drop the address's served SCTP ports too; VPP
			// itself has no SCTP stack and drops what reaches a node IP.
		case fe.RealIP || !translated[fe.Addr.Addr()]:
			denied = append(denied, fe.Frontend)
		}
	}
	if k := flowKeeper(f, svc, r.Items); k != nil {
		r.Items = append(r.Items, k)
	}
	var plainRoom [4]renderer.Frontend
	plain := appendPlain(plainRoom[:0], served)
	var filter []vppcfg.ACLRule
	if f.SCTP {
		filter = renderer.FilterRulesWithSCTP(svc, denied, plain, f.IP, node.IPs, cfg.NodeSources)
	} else {
		filter = renderer.FilterRules(svc, denied, plain, f.IP, node.IPs, cfg.NodeSources)
	}
	r.Rules = append(ownClientsRules(f, svc, ownOnly, node.IPs, cfg), filter...)
	if len(r.Rules) == 0 {
		r.Rules = nil
	}
	return r
}

// Plain returns the frontends without their cnat address kind.
func Plain(fes []Frontend) []renderer.Frontend {
	return appendPlain(make([]renderer.Frontend, 0, len(fes)), fes)
}

// appendPlain is Plain appended to dst.
func appendPlain(dst []renderer.Frontend, fes []Frontend) []renderer.Frontend {
	for _, fe := range fes {
		dst = append(dst, fe.Frontend)
	}
	return dst
}

// RenderNode returns the node-wide items of the renderer of family f: a
// drop route per service CIDR of the family and, with hairpinSNAT
// "hairpin-only", cnat's K8S SNAT policy and feature nodes on the internal
// frontend interfaces (HairpinOnlyItems). cnat's VIP path needs no node-wide configuration (it
// works on every interface without a feature to enable), and renderer.Core
// adds the filter ACLs, bound on every frontend interface with the shared
// permit-all ACL after them.
func RenderNode(f Family, node Node, cfg *Config) []vppcfg.Item {
	return append(renderer.ServiceCIDRDropRoutes(renderer.EffectiveServiceCIDRs(cfg.ServiceCIDRs, node.ServiceCIDRs), f.IP), HairpinOnlyItems(f, node, cfg)...)
}
