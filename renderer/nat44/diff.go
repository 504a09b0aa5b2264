package nat44

import (
	"slices"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// diff is what one change writes through the vppcfg client.
type diff struct {
	puts    []vppcfg.Item
	deletes []vppcfg.Key
	// recreate are LB mappings with session affinity that lose an endpoint.
	// They are deleted in a transaction of their own before the new value
	// is put. Deleting an LB mapping flushes its affinity records; removing
	// only the local (what the VPP layer does for a changed local set)
	// would leave records that still point at the removed endpoint's slot,
	// which VPP then dereferences as if it were live: pinned clients would
	// keep being sent to the gone endpoint (or to whichever endpoint later
	// reuses the slot) until the affinity timeout, three hours by default.
	recreate []vppcfg.Key
	// owners names the service each key is written for (node items have
	// none), for the logs.
	owners map[vppcfg.Key]model.ServiceID
}

// add records the change of one key (or claim) from before to after; either
// may be nil. owner is the service the change is made for, if any.
func (d *diff) add(before, after vppcfg.Item, owner model.ServiceID) {
	if owner != (model.ServiceID{}) {
		if d.owners == nil {
			d.owners = map[vppcfg.Key]model.ServiceID{}
		}
		for _, it := range []vppcfg.Item{before, after} {
			if it != nil {
				d.owners[it.Key()] = owner
			}
		}
	}
	switch {
	case after == nil && before == nil:
	case after == nil:
		d.deletes = append(d.deletes, before.Key())
	case before == nil:
		d.puts = append(d.puts, after)
	case before.Key() != after.Key():
		// Static ↔ LB at the same external key: the VPP layer deletes
		// before it creates, so VPP never sees two mappings for one key.
		d.deletes = append(d.deletes, before.Key())
		d.puts = append(d.puts, after)
	case !before.Equal(after):
		d.puts = append(d.puts, after)
		if losesAffinityTarget(before, after) {
			d.recreate = append(d.recreate, before.Key())
		}
	}
}

// losesAffinityTarget reports whether an LB mapping with session affinity,
// kept with the same affinity, loses or changes one of its locals (a
// changed weight is applied as remove and add, so it counts too). When the
// affinity itself changes the VPP layer re-creates the mapping anyway.
func losesAffinityTarget(before, after vppcfg.Item) bool {
	b, ok1 := before.(*vppcfg.NAT44LBMapping)
	a, ok2 := after.(*vppcfg.NAT44LBMapping)
	if !ok1 || !ok2 || b.Affinity == 0 || b.Affinity != a.Affinity {
		return false
	}
	for _, l := range b.Locals {
		if !slices.Contains(a.Locals, l) {
			return true
		}
	}
	return false
}

// claimMap indexes items by claim (claimOf).
func claimMap(items []vppcfg.Item) map[vppcfg.Key]vppcfg.Item {
	m := make(map[vppcfg.Key]vppcfg.Item, len(items))
	for _, it := range items {
		m[claimOf(it)] = it
	}
	return m
}

func sortedKeys[V any](m map[vppcfg.Key]V) []vppcfg.Key {
	keys := make([]vppcfg.Key, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, vppcfg.Key.Compare)
	return keys
}

func unionKeys(a, b map[vppcfg.Key]vppcfg.Item) map[vppcfg.Key]bool {
	u := make(map[vppcfg.Key]bool, len(a)+len(b))
	for k := range a {
		u[k] = true
	}
	for k := range b {
		u[k] = true
	}
	return u
}

// sameMap reports whether two item maps hold equal items at the same keys.
func sameMap(a, b map[vppcfg.Key]vppcfg.Item) bool {
	if len(a) != len(b) {
		return false
	}
	for k, x := range a {
		if y, ok := b[k]; !ok || !x.Equal(y) {
			return false
		}
	}
	return true
}
