package nat44

import (
	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// ServingBackends returns the IPv4 backends of one service port that may
// serve a frontend: all of them, or only those on this node when localOnly
// (traffic policy Local). Among those, ready endpoints are preferred and
// serving-but-terminating ones are used only when none is ready, as
// kube-proxy does (KEP-1669): a rolling update of a Local service then does
// not black-hole the node while its last local pod drains. The processor
// already passes terminating endpoints only for a port without ready ones;
// applying the rule per policy keeps it right for the local subset too.
func ServingBackends(backends []model.ServiceBackend, localOnly bool) []model.ServiceBackend {
	var ready, terminating []model.ServiceBackend
	for _, b := range backends {
		if !b.IP.Unmap().Is4() || b.Port == 0 || (localOnly && !b.Local) {
			continue
		}
		b.IP = b.IP.Unmap()
		if b.Terminating {
			terminating = append(terminating, b)
		} else {
			ready = append(ready, b)
		}
	}
	if len(ready) > 0 {
		return ready
	}
	return terminating
}

// localOnly reports whether a frontend of this kind may only use endpoints
// on this node: externalTrafficPolicy Local for external frontends,
// internalTrafficPolicy Local for ClusterIPs.
func localOnly(svc *model.ContivService, kind FrontendKind) bool {
	if kind.External() {
		return svc.ExternalTrafficPolicy == model.TrafficPolicyLocal
	}
	return svc.InternalTrafficPolicy == model.TrafficPolicyLocal
}

// backendVRF is the VRF in which VPP forwards translated packets to b:
// host-network endpoints live in the host VRF, pods in the pod VRF.
func backendVRF(b model.ServiceBackend, cfg *Config) uint32 {
	if b.HostNetwork {
		return cfg.HostVRF
	}
	return cfg.PodVRF
}

// backendWeight is b's relative chance of being picked for a new session.
func backendWeight(b model.ServiceBackend, cfg *Config) uint8 {
	if b.Local {
		return uint8(cfg.LocalEndpointWeight)
	}
	return uint8(cfg.RemoteEndpointWeight)
}

// lbLocals returns the locals of a load-balancing mapping, in canonical
// order and without duplicates (VPP does not reject a duplicate local, but
// one would double that endpoint's weight).
func lbLocals(backends []model.ServiceBackend, cfg *Config) []vppcfg.NAT44LBLocal {
	locals := make([]vppcfg.NAT44LBLocal, 0, len(backends))
	for _, b := range backends {
		locals = append(locals, vppcfg.NAT44LBLocal{
			Addr: b.AddrPort(), Probability: backendWeight(b, cfg), VRF: backendVRF(b, cfg),
		})
	}
	vppcfg.SortLBLocals(locals)
	out := locals[:0]
	for i, l := range locals {
		if i > 0 && l.Addr == out[len(out)-1].Addr && l.VRF == out[len(out)-1].VRF {
			continue
		}
		out = append(out, l)
	}
	return out
}
