package cnat

import "net/netip"

// backendRoute is the FIB entry of a backend's host prefix (/32, /128) as
// cnat's path trackers see it (cnat_tracker_track → fib_entry_track). A new
// flow's session stores that entry's load-balance index without a lock
// (cs_lbi, cnat_node_vip.c and cnat_node_feature.c), so the session forwards
// for as long as the entry exists, and into a freed object once it is gone
// (README.md#backend-routes).
//
// The entry exists while a path tracker holds it (children) or while the FIB
// has another source for the same host prefix: a /128 route to a pod, an
// interface address. A tracker only adds the entry (source RR) when it is
// missing and removes it when the last tracker goes and no other source
// holds it (fib_entry_track_last_lock_gone).
type backendRoute struct {
	children int
}

// trackRoute is fib_entry_track for a's host prefix: the existing entry when
// one exists, else a new one.
func (p *Plugin) trackRoute(a netip.Addr) *backendRoute {
	r := p.routes[a]
	if r == nil || (r.children == 0 && !p.hostEntry(a)) {
		r = &backendRoute{}
		p.routes[a] = r
	}
	r.children++
	return r
}

// untrackRoute is fib_entry_untrack: the last tracker of an entry no other
// source holds removes it, and with it the load balance sessions stored.
func (p *Plugin) untrackRoute(a netip.Addr, r *backendRoute) {
	if r == nil {
		return
	}
	r.children--
	if r.children <= 0 && p.routes[a] == r && !p.hostEntry(a) {
		delete(p.routes, a)
	}
}

// hostEntry tells whether the core's table 0 holds a's host prefix from a
// source other than cnat.
func (p *Plugin) hostEntry(a netip.Addr) bool {
	return p.ifs != nil && p.ifs.HostEntry(a)
}

// trackPaths tracks the backend entry of every active path of t
// (the track half of cnat_translation_update).
func (p *Plugin) trackPaths(t *translation) {
	for i := range t.paths {
		pa := &t.paths[i]
		if pa.active() {
			pa.route = p.trackRoute(pa.dst.addr)
		}
	}
}

// releasePaths releases what trackPaths took (cnat_tracker_release for every
// path, on update and on delete).
func (p *Plugin) releasePaths(t *translation) {
	for i := range t.paths {
		pa := &t.paths[i]
		p.untrackRoute(pa.dst.addr, pa.route)
		pa.route = nil
	}
}

// released tells whether s forwards into a load balance that no longer
// exists: the backend entry it stored was removed (and maybe re-created as
// another object) since the flow began.
func (p *Plugin) released(s *session) bool {
	if s.route == nil {
		return false
	}
	a := s.newDst.Addr()
	return p.routes[a] != s.route || (s.route.children <= 0 && !p.hostEntry(a))
}
