package core

// DesiredItems is the store's one map from key to desired item and its
// owners. A map of items next to a map of owner lists cost a second key
// and map slot per item (about 60 bytes); the diff reads it through get.
type DesiredItems map[Key]DesiredEntry

// DesiredEntry is one desired item and its owners.
type DesiredEntry struct {
	Item   Item
	Owners Owners
}

// Get returns the desired item at k.
func (d DesiredItems) Get(k Key) (Item, bool) {
	e, ok := d[k]
	return e.Item, ok
}

// Has reports whether k is desired.
func (d DesiredItems) Has(k Key) bool {
	_, ok := d[k]
	return ok
}
