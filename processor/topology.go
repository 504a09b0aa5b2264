package processor

import (
	"github.com/vppsvc/vppsvc/model"
)

// filterByZoneHints applies topology-aware routing to the ready endpoints of
// one service port, following kube-proxy's same-zone rule: hints are used only
// when every endpoint carries zone hints and at least one is hinted for this
// node's zone; then only the endpoints hinted for this zone are kept. In any
// other case (no zone label on this node, an endpoint without hints, no
// endpoint for this zone) hints are ignored, because obeying partial hints
// could overload the few hinted endpoints or leave none at all.
//
// When keepLocal is set (either traffic policy is Local), endpoints on this
// node are kept whatever their hints: a Local policy serves only them, so the
// renderer must see them. kube-proxy reaches the same result by computing its
// local endpoint set separately from the topology-filtered cluster set.
func filterByZoneHints(ready []model.ServiceBackend, zone string, keepLocal bool) []model.ServiceBackend {
	if zone == "" || len(ready) == 0 {
		return ready
	}
	zoneHinted := false
	for _, b := range ready {
		if b.ZoneHints.Len() == 0 {
			return ready
		}
		if b.ZoneHints.Has(zone) {
			zoneHinted = true
		}
	}
	if !zoneHinted {
		return ready
	}
	out := make([]model.ServiceBackend, 0, len(ready))
	for _, b := range ready {
		if b.ZoneHints.Has(zone) || (keepLocal && b.Local) {
			out = append(out, b)
		}
	}
	return out
}
