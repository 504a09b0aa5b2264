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

// backendWeight is b's relative chance of being picked for a new session,
// as configured.
func backendWeight(b model.ServiceBackend, cfg *Config) int {
	if b.Local {
		return cfg.LocalEndpointWeight
	}
	return cfg.RemoteEndpointWeight
}

// weightSpread multiplies the weights of a mapping whose sum allows it. VPP
// draws a backend as 1 + random_u32() % (sum of probabilities) from a
// linear congruential generator whose lowest bit alternates, and draws
// twice-NAT ports from the same seed (nat44_ed.c, nat44_ed_inlines.h).
// When the sum is a power of two only the low bits decide: a pod that is
// one of two equally weighted endpoints, once it picks itself (a pick that
// costs a port draw), picks itself on every new connection (19 of 20 on
// VPP 25.10). An odd factor in the sum brings every bit of the draw in
// (10 of 20 with weights 3:3); the ratio of the weights is unchanged.
const weightSpread = 3

// lbLocals returns the locals of a load-balancing mapping, in canonical
// order and without duplicates (VPP does not reject a duplicate local, but
// one would double that endpoint's weight), and how many endpoints did not
// fit: VPP keeps the running sum of the probabilities in 8 bits
// (vppcfg.MaxLBProbabilitySum), so the endpoints past that sum are left
// out. The weights are spread (weightSpread) when the sum allows it.
// Crossing that bound rewrites every local's weight, which VPP can only do
// by removing and adding each local; a service crosses it at 86 endpoints
// with the default weights. The locals go to buf[:0] when it has room for
// them and the placeholder a single backend gets (mappingFor).
func lbLocals(backends []model.ServiceBackend, cfg *Config, buf []vppcfg.NAT44LBLocal) (locals []vppcfg.NAT44LBLocal, left int) {
	locals = buf[:0]
	if n := max(len(backends), 2); cap(locals) < n {
		locals = make([]vppcfg.NAT44LBLocal, 0, n)
	}
	for _, b := range backends {
		locals = append(locals, vppcfg.NAT44LBLocal{
			Addr: b.AddrPort(), Probability: uint8(backendWeight(b, cfg)), VRF: backendVRF(b, cfg),
		})
	}
	vppcfg.SortLBLocals(locals)
	out := locals[:0]
	sum := 0
	for i, l := range locals {
		if i > 0 && l.Addr == out[len(out)-1].Addr && l.VRF == out[len(out)-1].VRF {
			continue
		}
		if sum+int(l.Probability) > vppcfg.MaxLBProbabilitySum {
			left++
			continue
		}
		sum += int(l.Probability)
		out = append(out, l)
	}
	if sum*weightSpread <= vppcfg.MaxLBProbabilitySum {
		for i := range out {
			out[i].Probability *= weightSpread
		}
	}
	return out, left
}
