package model

// ClusterBackends returns the endpoints of the named port that a frontend
// under traffic policy Cluster sends new connections to, in Backends order:
// the ready endpoints or, for an address family without any, that family's
// serving-terminating ones. This is kube-proxy's cluster category
// (CategorizeEndpoints): a service whose endpoints are all terminating, as
// during a rolling update that replaced every pod at once, keeps serving
// until they are gone instead of dropping new connections (KEP-1669), while
// a single ready endpoint takes all new connections away from terminating
// ones. The fallback is decided per family because kube-proxy runs one
// proxier per family: the IPv6 half of a dual-stack service falls back even
// when its IPv4 half has ready endpoints.
func (s *ContivService) ClusterBackends(port string) []ServiceBackend {
	return servingSet(s.Backends(port), false)
}

// LocalBackends returns the endpoints of the named port that a frontend
// under traffic policy Local uses, in Backends order: the ready endpoints
// on this node or, for an address family without any, that family's
// serving-terminating endpoints on this node. The fallback is independent
// of the cluster category, as in kube-proxy: while its last local pod
// drains, a node keeps serving its Local frontends from that pod even if
// ready endpoints exist on other nodes, so that a load balancer whose
// health check has not noticed yet does not see connections dropped.
func (s *ContivService) LocalBackends(port string) []ServiceBackend {
	return servingSet(s.Backends(port), true)
}

// servingSet picks, per address family, the ready members of list (only the
// local ones when localOnly) or, when that family has no ready member, its
// terminating ones. It never modifies list; when it keeps every member it
// returns list itself (model values are immutable), and nil for an empty
// set. Resync renders every service, so this avoids a copy per frontend.
func servingSet(list []ServiceBackend, localOnly bool) []ServiceBackend {
	var ready, terminating [2]int // by family: 0 IPv4, 1 IPv6
	for _, b := range list {
		switch {
		case localOnly && !b.Local:
		case b.Terminating:
			terminating[familyIndex(b)]++
		default:
			ready[familyIndex(b)]++
		}
	}
	n := 0
	for f := range ready {
		if ready[f] > 0 {
			n += ready[f]
		} else {
			n += terminating[f]
		}
	}
	switch n {
	case 0:
		return nil
	case len(list):
		return list
	}
	out := make([]ServiceBackend, 0, n)
	for _, b := range list {
		// A family with ready members keeps them; any other family has
		// only terminating members, and keeps those.
		if (b.Local || !localOnly) && b.Terminating == (ready[familyIndex(b)] == 0) {
			out = append(out, b)
		}
	}
	return out
}

func familyIndex(b ServiceBackend) int {
	if b.IP.Unmap().Is4() {
		return 0
	}
	return 1
}
