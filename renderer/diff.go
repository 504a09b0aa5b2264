package renderer

import (
	"maps"
	"slices"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// diff is what one change writes through the vppcfg client. Each list has
// a parallel list of the services its entries are written for (the zero
// ID for node items and shard ACLs), for the logs; the puts have their
// claims too (vppcfg.PutKeyed).
type diff struct {
	puts    []vppcfg.Item
	putKeys []vppcfg.Key
	putFor  []model.ServiceID
	deletes []vppcfg.Key
	delFor  []model.ServiceID
}

// add records the change of one claim from before to after; either may be
// nil. claim is after's claim as the index holds it (the zero Key for a
// shard ACL). owner is the service the change is made for, if any. Keys
// are built from the items' fields, so each is computed once.
func (d *diff) add(before, after vppcfg.Item, claim vppcfg.Key, owner model.ServiceID) {
	switch {
	case after == nil && before == nil:
	case after == nil:
		d.del(before.Key(), owner)
	case before == nil:
		d.put(after, claim, owner)
	default:
		bk := before.Key()
		switch {
		case bk != after.Key():
			// Two kinds under one claim (NAT44 static ↔ LB mapping): the VPP
			// layer deletes before it creates, so VPP never holds both.
			d.del(bk, owner)
			d.put(after, claim, owner)
		case !before.Equal(after):
			// The VPP layer re-creates what VPP cannot change in place
			// (the kind's descriptor says what).
			d.put(after, claim, owner)
		}
	}
}

func (d *diff) put(it vppcfg.Item, claim vppcfg.Key, owner model.ServiceID) {
	d.puts = append(d.puts, it)
	d.putKeys = append(d.putKeys, claim)
	d.putFor = append(d.putFor, owner)
}

func (d *diff) del(k vppcfg.Key, owner model.ServiceID) {
	d.deletes = append(d.deletes, k)
	d.delFor = append(d.delFor, owner)
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
