package nat44

import (
	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/vppcfg"
)

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
