package vppcfg

// desiredItems is the store's one map from key to desired item and its
// owners. A map of items next to a map of owner lists cost a second key
// and map slot per item (about 60 bytes); the diff reads it through get.
type desiredItems map[Key]desiredEntry

// desiredEntry is one desired item and its owners, sorted. The owner list
// is never changed in place (store.setOwners).
type desiredEntry struct {
	item   Item
	owners []string
}

// get returns the desired item at k.
func (d desiredItems) get(k Key) (Item, bool) {
	e, ok := d[k]
	return e.item, ok
}

// has reports whether k is desired.
func (d desiredItems) has(k Key) bool {
	_, ok := d[k]
	return ok
}
