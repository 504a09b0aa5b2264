package nat44

import (
	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// twiceNATMode decides whether sessions of a frontend get their client
// source rewritten to the twice-NAT address:
//
//   - ClusterIP: only when the client is the chosen backend itself (self
//     twice-NAT). A pod reaching itself through its service would otherwise
//     get a reply from itself to itself, which its stack does not match to
//     the connection it opened to the ClusterIP.
//   - External frontends with externalTrafficPolicy Cluster: always. The
//     backend may be on another node; replying to the twice-NAT address
//     (this node) brings the reply back through this node's session, which
//     turns it back into a reply from the frontend.
//   - externalTrafficPolicy Local: never. Only local backends serve, so the
//     reply comes back anyway, and the client IP is preserved as the policy
//     promises.
func twiceNATMode(svc *model.ContivService, kind renderer.FrontendKind) vppcfg.TwiceNATMode {
	switch {
	case !kind.External():
		return vppcfg.TwiceNATSelf
	case svc.ExternalTrafficPolicy == model.TrafficPolicyLocal:
		return vppcfg.TwiceNATOff
	}
	return vppcfg.TwiceNATAlways
}

// mappingAndTwoLocals is a mapping with room for its locals, for a
// service of one or two backends (one and the placeholder, or two).
type mappingAndTwoLocals struct {
	mapping vppcfg.NAT44LBMapping
	locals  [2]vppcfg.NAT44LBLocal
}

// mappingFor returns the NAT mapping of one frontend served by backends, or
// nil when there is no backend (the frontend is then dropped by a filter
// rule).
//
// Every mapping is out2in-only: sessions are created only by clients
// reaching the frontend, never by the backend opening a connection (which
// must keep its own source address), one endpoint may sit behind many
// frontends (VPP allows that only for out2in-only mappings), and the
// frontend need not be a pool address (VPP requires that of an LB mapping
// otherwise).
//
// Every mapping is a load-balancing one, one backend included (with
// vppcfg.LBPlaceholder beside it). A static mapping would be a different
// VPP object, so scaling between one backend and two would delete it and
// every open connection with it; an LB mapping changes one local at a time
// and keeps the sessions of the backends that stay. It also leaves the
// frontend out of the outside interfaces' FIBs, where a static mapping
// registers it as a local address (a frontend's unknown port then reaches
// its drop route instead of VPP's host stack), and adds at a flat cost.
//
// label is the service's (renderer.ServiceLabel), made once for all its
// mappings.
func mappingFor(svc *model.ContivService, fe renderer.Frontend, backends []model.ServiceBackend, label string, cfg *Config) vppcfg.Item {
	if len(backends) == 0 {
		return nil
	}
	// A mapping of one or two backends and its two locals are made in one
	// allocation (the same 160 bytes as apart, one allocation a service
	// fewer); more locals get a list of their own.
	var m *vppcfg.NAT44LBMapping
	var locals []vppcfg.NAT44LBLocal
	if len(backends) <= 2 {
		both := &mappingAndTwoLocals{}
		m, locals = &both.mapping, both.locals[:0]
	} else {
		m = &vppcfg.NAT44LBMapping{}
	}
	locals, _ = lbLocals(backends, cfg, locals) // those left out: warnLBCapacity
	*m = vppcfg.NAT44LBMapping{
		External:   fe.Addr,
		Protocol:   fe.Protocol,
		Locals:     locals,
		Affinity:   svc.SessionAffinityTimeout,
		Out2InOnly: true,
		TwiceNAT:   twiceNATMode(svc, fe.Kind),
		Label:      label,
	}
	if len(locals) == 1 {
		// The layer pads a single local with the placeholder and would
		// copy the item to do it; padded here, where the item is made,
		// the renderer's index and the layer's store share one item
		// (176 B a one-backend service at 50,000 services).
		m.Locals = append(m.Locals, vppcfg.LBPlaceholder(m))
		vppcfg.SortLBLocals(m.Locals)
	}
	return m
}
