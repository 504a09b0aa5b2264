package cnat

import (
	"net/netip"
	"slices"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// ownClientsOnly tells whether fe is served to this node's own clients
// alone: an external frontend of an externalTrafficPolicy: Local service
// with no usable endpoint on this node, on a node whose own clients the
// configuration names (Config.ownClients).
//
// kube-proxy drops such a frontend's traffic from outside the node and
// sends this node's pods and the node itself to every endpoint of the
// cluster. cnat keys a translation by VIP, port and protocol alone, so one
// frontend cannot have a local set for the uplink and a cluster set for
// pods (the renderer's document, "externalTrafficPolicy: Local from
// inside the cluster"). Without a local endpoint there is no local set to keep:
// the translation takes the cluster set and the filter admits only the
// node's own clients (ownClientsRules), which matches kube-proxy exactly.
// backends are the frontend's own (renderer.Backends).
func ownClientsOnly(f Family, svc *model.ContivService, fe Frontend, backends []model.ServiceBackend, cfg *Config) bool {
	return len(backends) == 0 && fe.Kind.External() && svc.ExternalTrafficPolicy == model.TrafficPolicyLocal &&
		len(cfg.OwnClients(f)) > 0
}

// ownClientsBackends is the set an ownClientsOnly frontend load-balances
// over: the cluster-wide one its ClusterIP uses.
func ownClientsBackends(f Family, svc *model.ContivService, fe Frontend) []model.ServiceBackend {
	cluster := fe.Frontend
	cluster.Kind = renderer.ClusterIPFrontend
	return renderer.Backends(svc, cluster, f.IP)
}

// ownClientsRules admits the node's own clients to fes and denies every
// other client. Under loadBalancerSourceRanges a LoadBalancer frontend
// admits a pod prefix only as far as the ranges hold it, and the node's
// sources only when a range holds a node IP, as for every other
// LoadBalancer frontend (renderer.FilterRules).
func ownClientsRules(f Family, svc *model.ContivService, fes []Frontend, nodeIPs model.IPAddresses, cfg *Config) []vppcfg.ACLRule {
	var rules []vppcfg.ACLRule
	ranges := renderer.SourceRanges(svc, f.IP)
	anySrc := netip.PrefixFrom(f.unspecified(), 0)
	for _, fe := range fes {
		for _, src := range ownSources(f, fe, ranges, nodeIPs, cfg) {
			rules = append(rules, renderer.FrontendRule(vppcfg.ACLPermit, src, fe.Frontend))
		}
		rules = append(rules, renderer.FrontendRule(vppcfg.ACLDeny, anySrc, fe.Frontend))
	}
	return rules
}

// ownSources are the source prefixes admitted to fe.
func ownSources(f Family, fe Frontend, ranges []netip.Prefix, nodeIPs model.IPAddresses, cfg *Config) []netip.Prefix {
	if fe.Kind != renderer.LoadBalancerFrontend || len(ranges) == 0 {
		return cfg.OwnClients(f)
	}
	var out []netip.Prefix
	add := func(p netip.Prefix) {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, p := range f.Prefixes(cfg.LocalClients) {
		for _, r := range ranges {
			switch {
			case r.Bits() <= p.Bits() && r.Contains(p.Addr()):
				add(p)
			case p.Bits() < r.Bits() && p.Contains(r.Addr()):
				add(r)
			}
		}
	}
	if renderer.RangesHoldNode(ranges, nodeIPs, f.IP) {
		for _, p := range f.Prefixes(cfg.NodeSources) {
			add(p)
		}
	}
	return out
}

// OwnClients are the prefixes of family f this node's own clients send
// from: its pods (LocalClients) and its kernel (NodeSources).
func (c *Config) OwnClients(f Family) []netip.Prefix {
	return append(f.Prefixes(c.LocalClients), f.Prefixes(c.NodeSources)...)
}
