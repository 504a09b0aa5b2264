package engine

import (
	"slices"

	"github.com/vppsvc/vppsvc/vppcfg"
)

// OwnedItem is one desired item with the owners that want it.
type OwnedItem struct {
	Key    vppcfg.Key
	Item   vppcfg.Item
	Owners []string
}

// DesiredOwned returns every desired item with its owners, in key order:
// what an inspector shows per renderer and what a drift check compares with
// VPP. It holds the store's read lock only while copying references (items
// are immutable once committed), and sorts after releasing it, so it never
// waits for a pass to VPP and holds back a commit for a copy only.
func (r *Reconciler) DesiredOwned() []OwnedItem {
	r.storeMu.RLock()
	out := make([]OwnedItem, 0, len(r.store.Items))
	for k, e := range r.store.Items {
		out = append(out, OwnedItem{Key: k, Item: e.Item, Owners: slices.Clone(e.Owners.Names())})
	}
	r.storeMu.RUnlock()
	slices.SortFunc(out, func(a, b OwnedItem) int { return a.Key.Compare(b.Key) })
	return out
}
