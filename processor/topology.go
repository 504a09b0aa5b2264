package processor

import (
	"github.com/vppsvc/vppsvc/model"
)

// zoneFilter is topology-aware routing for the ready endpoints of one
// service port and address family, following kube-proxy's same-zone rule:
// hints are used only when every endpoint carries zone hints and at least
// one is hinted for this node's zone; then only the endpoints hinted for
// this zone are kept. In any other case (no zone label on this node, an
// endpoint without hints, no endpoint for this zone) hints are ignored,
// because obeying partial hints could overload the few hinted endpoints or
// leave none at all. It sees every ready endpoint first (see), then says
// which it keeps.
//
// When keepLocal is set (either traffic policy is Local), endpoints on this
// node are kept whatever their hints: a Local policy serves only them, so the
// renderer must see them. kube-proxy reaches the same result by computing its
// local endpoint set separately from the topology-filtered cluster set.
type zoneFilter struct {
	zone      string
	keepLocal bool
	// unhinted: some endpoint has no hints; zoneHinted: some is hinted for
	// zone.
	unhinted, zoneHinted bool
}

// see counts a ready endpoint into the decision.
func (f *zoneFilter) see(b model.ServiceBackend) {
	if f.zone == "" {
		return // hints are ignored
	}
	if b.ZoneHints.Len() == 0 {
		f.unhinted = true
	} else if !f.zoneHinted && b.ZoneHints.Has(f.zone) {
		f.zoneHinted = true
	}
}

// keeps reports whether a ready endpoint seen before serves this node.
func (f *zoneFilter) keeps(b model.ServiceBackend) bool {
	if f.zone == "" || f.unhinted || !f.zoneHinted {
		return true
	}
	return b.ZoneHints.Has(f.zone) || (f.keepLocal && b.Local)
}
