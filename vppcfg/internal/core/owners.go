package core

import "slices"

// Owners is a key's owner list, sorted, behind one pointer. A list is
// never changed once made (a changed list is a new one), so every key of
// a sole owner shares one (Store.soleList), and an entry holds 8 bytes
// where a slice header took 24: the store's map has a slot a desired key,
// and a plan's changes and tasks carry the owners of each.
type Owners struct{ list *[]string }

// NewOwners returns the list names as Owners; names must be sorted, and
// nobody may change them afterwards.
func NewOwners(names ...string) Owners {
	if len(names) == 0 {
		return Owners{}
	}
	return Owners{list: &names}
}

// Names returns the owners, sorted. The slice is shared: read it only.
func (o Owners) Names() []string {
	if o.list == nil {
		return nil
	}
	return *o.list
}

// Len is how many owners there are.
func (o Owners) Len() int { return len(o.Names()) }

// Has reports whether name is one of the owners.
func (o Owners) Has(name string) bool { return slices.Contains(o.Names(), name) }

// First is the first owner ("" when there is none).
func (o Owners) First() string {
	if names := o.Names(); len(names) > 0 {
		return names[0]
	}
	return ""
}
