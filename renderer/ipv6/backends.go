package ipv6

import "github.com/vppsvc/vppsvc/model"

// ServingBackends returns the IPv6 backends of one service port that may
// serve a frontend: all of them, or only those on this node when localOnly
// (traffic policy Local). Among those, ready endpoints are preferred and
// serving-but-terminating ones are used only when none is ready, as
// kube-proxy does (KEP-1669), so that a rolling update of a Local service
// does not black-hole the node while its last local pod drains. Backends
// without a port are dropped: cnat would rewrite the destination port to 0.
func ServingBackends(backends []model.ServiceBackend, localOnly bool) []model.ServiceBackend {
	var ready, terminating []model.ServiceBackend
	for _, b := range backends {
		if b.IP = b.IP.Unmap(); !b.IP.Is6() || b.Port == 0 || (localOnly && !b.Local) {
			continue
		}
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
