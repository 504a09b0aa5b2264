package nat44

import (
	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// RenderService translates one service into what implements its IPv4
// frontends. It is a pure function of the service, the node context and the
// configuration:
//
//   - Items: one out2in-only mapping per frontend that has a usable backend
//     (mappingFor), load-balancing over the backends its traffic policy
//     allows (renderer.Backends); for externalTrafficPolicy Local, the
//     cnat translations that short-circuit internal clients to the ClusterIP
//     (shortCircuits); and, for a service this renderer serves, the drop
//     routes of its IPv4 ClusterIPs outside the service CIDRs in force, in
//     the pod and host VRFs (renderer.ClusterIPDropRoutes), so that a
//     ClusterIP's other ports are dropped as kube-proxy drops them; sorted
//     by key;
//   - Rules: the service's filter rules (renderer.FilterRules): a deny for
//     every frontend without a usable backend, which NAT44-ED (forwarding
//     on) would otherwise pass untranslated (a packet to a ClusterIP would
//     follow the default route out of the node, a packet to a node port
//     would reach the host), and the loadBalancerSourceRanges of its
//     LoadBalancer frontends. They go into the service's filter shard.
//
// A service without an IPv4 ClusterIP, SCTP ports and IPv6 addresses yield
// nothing (renderer.Frontends). The node-wide items the service relies on
// come from RenderNode.
func RenderService(svc *model.ContivService, node Node, cfg *Config) renderer.Rendering {
	r := renderService(nil, svc, node, cfg)
	r.Items = renderer.SortItems(r.Items)
	return r
}

// renderService is RenderService with the items appended to items[:0]
// (renderer.CoreConfig.RenderService) in no particular order: the core
// orders them by claim itself, and the keys sorting by key would make are
// thrown away (three allocations a service with a drop route).
func renderService(items []vppcfg.Item, svc *model.ContivService, node Node, cfg *Config) renderer.Rendering {
	r := renderer.Rendering{Items: items[:0]}
	var denied, served []renderer.Frontend
	var room [4]renderer.Frontend // most services have one or two
	frontends := renderer.AppendFrontends(room[:0], svc, node.IPs, renderer.IPv4)
	var label string // of every mapping of the service, made once
	for _, fe := range frontends {
		backends := renderer.Backends(svc, fe, renderer.IPv4)
		if len(backends) > 0 && label == "" {
			label = renderer.ServiceLabel(svc.ID)
		}
		if m := mappingFor(svc, fe, backends, label, cfg); m != nil {
			r.Items = append(r.Items, m)
			if fe.Kind == renderer.LoadBalancerFrontend {
				served = append(served, fe) // FilterRules reads only these
			}
		} else {
			denied = append(denied, fe)
		}
	}
	r.Items = append(r.Items, shortCircuits(svc, frontends, cfg)...)
	if renderer.Serves(svc, renderer.IPv4) {
		r.Items = renderer.AppendClusterIPDropRoutes(r.Items, svc, serviceCIDRs(node, cfg), renderer.IPv4, cfg.PodVRF, cfg.HostVRF)
	}
	r.Rules = renderer.FilterRules(svc, denied, served, renderer.IPv4, node.IPs, cfg.NodeSources)
	return r
}
