package nat44

import (
	"net/netip"
	"slices"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// kube-proxy applies externalTrafficPolicy Local only to clients outside the
// cluster: a pod of this node, or the node itself, that reaches a NodePort,
// external IP or LoadBalancer IP of such a service goes to the cluster-wide
// endpoints instead. NAT44-ED cannot tell those clients apart: it has one
// mapping per external address, port and protocol, looked up in FIB 0
// whatever the interface. cnat's feature node cnat-input-ip4 can: it runs
// only on the interfaces it is enabled on, before the input ACL and NAT44-ED.
// So on the internal frontend interfaces it rewrites an external frontend of
// a Local service to the service's ClusterIP, whose NAT44-ED mapping then
// balances over every endpoint (with the ClusterIP's own hairpin handling);
// cnat-output-ip4 on the same interfaces turns the reply's source back into
// the frontend. Clients on the uplink never meet the rewrite.

const (
	cnatInputFeature  = "cnat-input-ip4"
	cnatOutputFeature = "cnat-output-ip4"
)

// shortCircuitEnabled tells whether internal clients are short-circuited.
func (c *Config) shortCircuitEnabled() bool { return len(c.UplinkInterfaces) > 0 }

// isUplink reports whether ifName carries clients outside the cluster.
func (c *Config) isUplink(ifName string) bool {
	return slices.Contains(c.UplinkInterfaces, ifName) || (c.EgressSNAT.Enabled && c.EgressSNAT.Interface == ifName)
}

// internalFrontendIfs are the frontend interfaces of internal clients. None
// while no uplink is among the frontends: a wrong uplink name must not turn
// external clients into internal ones.
func internalFrontendIfs(node Node, cfg *Config) []string {
	if !cfg.shortCircuitEnabled() || !slices.ContainsFunc(node.FrontendIfs, cfg.isUplink) {
		return nil
	}
	var out []string
	for _, ifName := range node.FrontendIfs {
		if !cfg.isUplink(ifName) {
			out = append(out, ifName)
		}
	}
	return out
}

// shortCircuitFeatures enables the rewrite and its reverse on ifName.
func shortCircuitFeatures(ifName string) []vppcfg.Item {
	return []vppcfg.Item{
		&vppcfg.InterfaceFeature{Interface: ifName, Arc: "ip4-unicast", Feature: cnatInputFeature},
		&vppcfg.InterfaceFeature{Interface: ifName, Arc: "ip4-output", Feature: cnatOutputFeature},
	}
}

// shortCircuits returns the cnat translations that send internal clients of
// the external frontends of an externalTrafficPolicy Local service to its
// IPv4 ClusterIP with the same port. A LoadBalancer IP with IPv4 source
// ranges is left out: cnat rewrites before the input ACL, so the ranges
// would no longer be checked for pods; those keep the local endpoints and
// the ranges.
func shortCircuits(svc *model.ContivService, frontends []renderer.Frontend, cfg *Config) []vppcfg.Item {
	if !cfg.shortCircuitEnabled() || svc.ExternalTrafficPolicy != model.TrafficPolicyLocal {
		return nil
	}
	clusterIP := map[string]netip.AddrPort{}
	for _, fe := range frontends {
		if fe.Kind == renderer.ClusterIPFrontend {
			if _, ok := clusterIP[fe.PortName+fe.Protocol.String()]; !ok {
				clusterIP[fe.PortName+fe.Protocol.String()] = fe.Addr
			}
		}
	}
	ranged := slices.ContainsFunc(svc.LoadBalancerSourceRanges, func(p netip.Prefix) bool { return p.Addr().Is4() })
	var out []vppcfg.Item
	for _, fe := range frontends {
		if !fe.Kind.External() || (fe.Kind == renderer.LoadBalancerFrontend && ranged) {
			continue
		}
		to, ok := clusterIP[fe.PortName+fe.Protocol.String()]
		if !ok {
			continue
		}
		out = append(out, &vppcfg.CNATTranslation{
			VIP: fe.Addr, Protocol: fe.Protocol, IsRealIP: true,
			Paths: []vppcfg.CNATPath{{Dst: to}},
		})
	}
	return out
}

// Claims attributes the IPv4 cnat translations and the short-circuit's
// features found in VPP, which carry no owner tag, to this renderer
// (engine.Options.Claims), so that those of services (or interfaces) gone
// while the agent was down are removed at resync.
func Claims() map[string]vppcfg.UntaggedClaimFunc {
	claim := vppcfg.UntaggedClaim{Features: []string{cnatInputFeature, cnatOutputFeature}}
	return map[string]vppcfg.UntaggedClaimFunc{Name: claim.Func()}
}

// needsShortCircuit tells whether a service may get short-circuit
// translations: externalTrafficPolicy Local with an IPv4 ClusterIP and an
// external frontend (node port, external IP or LoadBalancer IP). It may
// say yes for a service that gets none (an IPv6 external IP only); then
// the features merely run idle.
func needsShortCircuit(svc *model.ContivService) bool {
	if svc == nil || svc.ExternalTrafficPolicy != model.TrafficPolicyLocal || !slices.ContainsFunc(svc.ClusterIPs, netip.Addr.Is4) {
		return false
	}
	return svc.HasNodePort() || len(svc.ExternalIPs.IPv4()) > 0 || len(svc.LoadBalancerIPs.IPv4()) > 0
}

// shortCircuitDemand switches the node's ShortCircuit on while some
// service needs it (renderer.NodeDemand): the core flips it in the
// transaction of the first service that needs it and of the last one that
// stops, so the features come and go with the translations.
func shortCircuitDemand() *renderer.NodeDemand[Node] {
	return &renderer.NodeDemand[Node]{
		Needs: needsShortCircuit,
		Set: func(node Node, on bool) Node {
			node.ShortCircuit = on
			return node
		},
	}
}
