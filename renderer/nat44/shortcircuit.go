package nat44

import (
	"net/netip"
	"slices"
	"sync"

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

// shortCircuitSet is the services that need the short-circuit, so that the
// feature nodes are enabled while there is one and disabled with the last.
type shortCircuitSet struct {
	mu  sync.Mutex
	ids map[model.ServiceID]struct{}
}

// after returns whether the set is non-empty after setting id's membership,
// and whether that differs from now (the features must follow).
func (s *shortCircuitSet) after(id model.ServiceID, in bool) (nonEmpty, flips bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, was := s.ids[id]
	before := len(s.ids) > 0
	n := len(s.ids)
	switch {
	case in && !was:
		n++
	case !in && was:
		n--
	}
	return n > 0, (n > 0) != before
}

func (s *shortCircuitSet) set(id model.ServiceID, in bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if in {
		s.ids[id] = struct{}{}
	} else {
		delete(s.ids, id)
	}
}

func (s *shortCircuitSet) reset(services []*model.ContivService) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids = map[model.ServiceID]struct{}{}
	for _, svc := range services {
		if needsShortCircuit(svc) {
			s.ids[svc.ID] = struct{}{}
		}
	}
}

// change applies one service change through the core. When it makes the
// first service need the short-circuit, or the last one stop, the node's
// ShortCircuit flips in the same transaction (Reconfigure), so the features
// come and go with the translations.
func (r *Renderer) change(what string, svc *model.ContivService, changes []renderer.Change, viaCore func() error) error {
	in := needsShortCircuit(svc)
	nonEmpty, flips := r.shortCircuit.after(changes[0].ID, in)
	var err error
	if flips {
		err = r.Reconfigure(what, func(node Node, _ []*model.ContivService) (Node, []renderer.Change) {
			node.ShortCircuit = nonEmpty
			return node, changes
		})
	} else {
		err = viaCore()
	}
	if err == nil {
		for _, c := range changes[1:] {
			r.shortCircuit.set(c.ID, false)
		}
		r.shortCircuit.set(changes[0].ID, in)
	}
	return err
}

// AddService renders a service (renderer.Core), switching the short-circuit
// features on with the first service that needs them.
func (r *Renderer) AddService(svc *model.ContivService) error {
	return r.change("add service", svc, []renderer.Change{{ID: svc.ID, Service: svc}}, func() error { return r.Core.AddService(svc) })
}

// UpdateService re-renders a service (renderer.Core), switching the
// short-circuit features as the set of services needing them empties or
// fills.
func (r *Renderer) UpdateService(oldService, newService *model.ContivService) error {
	changes := []renderer.Change{{ID: newService.ID, Service: newService}}
	if oldService != nil && oldService.ID != newService.ID {
		changes = append(changes, renderer.Change{ID: oldService.ID})
	}
	return r.change("update service", newService, changes, func() error { return r.Core.UpdateService(oldService, newService) })
}

// DeleteService removes a service (renderer.Core), switching the
// short-circuit features off with the last service that needed them.
func (r *Renderer) DeleteService(svc *model.ContivService) error {
	return r.change("delete service", nil, []renderer.Change{{ID: svc.ID}}, func() error { return r.Core.DeleteService(svc) })
}

// Resync replaces the whole state (renderer.Core); nodeOf derives the
// node's ShortCircuit from the same services.
func (r *Renderer) Resync(ev *model.ResyncEventData) error {
	if err := r.Core.Resync(ev); err != nil {
		return err
	}
	r.shortCircuit.reset(ev.Services)
	return nil
}
