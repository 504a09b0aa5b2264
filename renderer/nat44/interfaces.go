package nat44

import (
	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// egressLabel tags the identity mappings of egress SNAT.
const egressLabel = "vppsvc-egress-snat"

// RenderNode returns the node-wide items of the renderer, sorted by key:
//
//   - the NAT44-ED plugin, with forwarding on: traffic that matches no
//     mapping (pod to pod across nodes, traffic to the host) enters outside
//     interfaces and must pass untranslated, and a reply from a backend on
//     another node, arriving on an outside interface, is translated back
//     only with forwarding on;
//   - the twice-NAT pool address;
//   - the outside role on every frontend interface and the inside role on
//     every backend interface (a local pod that is both gets both, and
//     NAT44-ED's classifier then handles a pod reaching a service it
//     serves);
//   - with egress SNAT: the node address in the normal pool, the output
//     role on the uplink instead of outside/inside (VPP rejects both on one
//     interface), and identity mappings for the configured ports.
//
// renderer.Core adds the filter ACLs, bound on every frontend interface
// with the shared permit-all ACL after them.
func RenderNode(node Node, cfg *Config) []vppcfg.Item {
	items := []vppcfg.Item{
		&vppcfg.NAT44Global{
			InsideVRF:    cfg.PodVRF,
			OutsideVRF:   cfg.HostVRF,
			SessionLimit: cfg.SessionLimit,
			Forwarding:   true,
			Timeouts: vppcfg.NAT44Timeouts{
				UDP:            cfg.Timeouts.UDP,
				TCPEstablished: cfg.Timeouts.TCPEstablished,
				TCPTransitory:  cfg.Timeouts.TCPTransitory,
				ICMP:           cfg.Timeouts.ICMP,
			},
		},
		&vppcfg.NAT44Address{Addr: cfg.TwiceNATAddress, TwiceNAT: true, VRF: vppcfg.AnyVRF},
	}
	egressIf := ""
	if e := cfg.EgressSNAT; e.Enabled {
		egressIf = e.Interface
		items = append(items,
			&vppcfg.NAT44Address{Addr: e.Address, VRF: vppcfg.AnyVRF},
			&vppcfg.NAT44Interface{Interface: e.Interface, Role: vppcfg.NAT44Output})
		for _, p := range e.IdentityPorts {
			proto, _ := p.vppProtocol()
			items = append(items, &vppcfg.NAT44IdentityMapping{
				Addr: e.Address, Port: p.Port, Protocol: proto, VRF: cfg.HostVRF, Label: egressLabel,
			})
		}
	}
	for _, ifName := range node.FrontendIfs {
		if ifName != egressIf {
			items = append(items, &vppcfg.NAT44Interface{Interface: ifName, Role: vppcfg.NAT44Outside})
		}
	}
	for _, ifName := range node.BackendIfs {
		if ifName != egressIf {
			items = append(items, &vppcfg.NAT44Interface{Interface: ifName, Role: vppcfg.NAT44Inside})
		}
	}
	items = append(items, renderer.ServiceCIDRDropRoutes(serviceCIDRs(node, cfg), renderer.IPv4, cfg.PodVRF, cfg.HostVRF)...)
	for _, ifName := range internalFrontendIfs(node, cfg) {
		if !node.ShortCircuit {
			break
		}
		items = append(items, shortCircuitFeatures(ifName)...)
	}
	return renderer.SortItems(dedupItems(items))
}

// dedupItems drops later items whose key an earlier item already has (for
// example two identity ports configured twice), keeping the first.
func dedupItems(items []vppcfg.Item) []vppcfg.Item {
	seen := make(map[vppcfg.Key]bool, len(items))
	out := items[:0]
	for _, it := range items {
		if k := it.Key(); !seen[k] {
			seen[k] = true
			out = append(out, it)
		}
	}
	return out
}
