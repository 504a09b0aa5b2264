package ipv6

import (
	"maps"
	"slices"

	"github.com/vppsvc/vppsvc/vppcfg"
)

// diff is what one change writes through the vppcfg client. A changed
// translation is a plain put: the VPP layer updates it in place (cnat keeps
// its ID and the sessions already made) or, when the LB type or flow hash
// changed, deletes and re-creates it (vppcfg.CNATTranslation.NeedsRecreate).
type diff struct {
	puts    []vppcfg.Item
	deletes []vppcfg.Key
}

// add records the change of one key from before to after; either may be nil.
func (d *diff) add(before, after vppcfg.Item) {
	switch {
	case after == nil && before == nil:
	case after == nil:
		d.deletes = append(d.deletes, before.Key())
	case before == nil || !before.Equal(after):
		d.puts = append(d.puts, after)
	}
}

func (d *diff) empty() bool { return len(d.puts)+len(d.deletes) == 0 }

// itemMap indexes items by key.
func itemMap(items []vppcfg.Item) map[vppcfg.Key]vppcfg.Item {
	m := make(map[vppcfg.Key]vppcfg.Item, len(items))
	for _, it := range items {
		m[it.Key()] = it
	}
	return m
}

// sortedKeys returns the keys of the given maps, sorted and without repeats.
func sortedKeys[V any](ms ...map[vppcfg.Key]V) []vppcfg.Key {
	var keys []vppcfg.Key
	for _, m := range ms {
		keys = slices.AppendSeq(keys, maps.Keys(m))
	}
	slices.SortFunc(keys, vppcfg.Key.Compare)
	return slices.Compact(keys)
}
