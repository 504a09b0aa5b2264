package renderer

import "github.com/vppsvc/vppsvc/model"

// LocalOnly reports whether a frontend of this kind may only use endpoints
// on this node: externalTrafficPolicy Local for external frontends,
// internalTrafficPolicy Local for ClusterIPs.
func LocalOnly(svc *model.ContivService, kind FrontendKind) bool {
	if kind.External() {
		return svc.ExternalTrafficPolicy == model.TrafficPolicyLocal
	}
	return svc.InternalTrafficPolicy == model.TrafficPolicyLocal
}

// Backends returns the endpoints of family f that may serve fe: the
// service's local set (model.ContivService.LocalBackends) when the traffic
// policy of fe's kind is Local, its cluster set (ClusterBackends)
// otherwise, so the terminating fallback is kube-proxy's, per category.
// Addresses are unmapped; endpoints without a port are dropped (a
// translation would rewrite the destination port to 0). The result keeps
// the model's IP:port order and may hold duplicates, which the renderers
// collapse where VPP would count them twice. Like the model value it may
// share memory with, it must not be modified.
func Backends(svc *model.ContivService, fe Frontend, f Family) []model.ServiceBackend {
	set := svc.ClusterBackends(fe.PortName)
	if LocalOnly(svc, fe.Kind) {
		set = svc.LocalBackends(fe.PortName)
	}
	usable := func(b model.ServiceBackend) bool { return f.Has(b.IP) && b.Port != 0 }
	n, unmapped := 0, true
	for _, b := range set {
		if usable(b) {
			n++
			unmapped = unmapped && !b.IP.Is4In6()
		}
	}
	if n == len(set) && unmapped {
		return set // the common case: nothing to drop or rewrite, no copy
	}
	out := make([]model.ServiceBackend, 0, n)
	for _, b := range set {
		if usable(b) {
			b.IP = b.IP.Unmap()
			out = append(out, b)
		}
	}
	return out
}
