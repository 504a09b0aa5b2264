package renderer

import (
	"maps"
	"slices"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// RecreateFunc reports whether an item that changes from before to after
// (same key) must be deleted and put again instead of updated, because the
// update VPP would make leaves stale state behind (see the NAT44 renderer's
// session affinity). nil means never.
type RecreateFunc func(before, after vppcfg.Item) bool

// diff is what one change writes through the vppcfg client.
type diff struct {
	puts    []vppcfg.Item
	deletes []vppcfg.Key
	// recreate are keys deleted in a transaction of their own before the
	// new values are put (RecreateFunc).
	recreate []vppcfg.Key
	// owners names the service each key is written for (node items and
	// shard ACLs have none), for the logs.
	owners map[vppcfg.Key]model.ServiceID
}

// add records the change of one claim from before to after; either may be
// nil. owner is the service the change is made for, if any.
func (d *diff) add(before, after vppcfg.Item, owner model.ServiceID, recreate RecreateFunc) {
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
		// Two kinds under one claim (NAT44 static ↔ LB mapping): the VPP
		// layer deletes before it creates, so VPP never holds both.
		d.deletes = append(d.deletes, before.Key())
		d.puts = append(d.puts, after)
	case !before.Equal(after):
		d.puts = append(d.puts, after)
		if recreate != nil && recreate(before, after) {
			d.recreate = append(d.recreate, before.Key())
		}
	}
}

func (d *diff) empty() bool { return len(d.puts)+len(d.deletes) == 0 }

// sortedKeys returns the keys of the given maps, sorted and without repeats.
func sortedKeys[V any](ms ...map[vppcfg.Key]V) []vppcfg.Key {
	var keys []vppcfg.Key
	for _, m := range ms {
		keys = slices.AppendSeq(keys, maps.Keys(m))
	}
	slices.SortFunc(keys, vppcfg.Key.Compare)
	return slices.Compact(keys)
}
