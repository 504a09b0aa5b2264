package engine

import (
	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
)

// keyChange is one desired key that VPP does not hold as desired, with
// what its ops are made of: the diff reads each map once per key, and a
// cold sync's 50,000 creates are neither put in a map nor looked up again
// after the sort.
type keyChange struct {
	key     vppcfg.Key
	desired vppcfg.Item
	// owners are the desired item's owners.
	owners core.Owners
	// applied is VPP's value of an update or a recreate.
	applied vppcfg.Item
	change  change
}

// changeSet is how the desired keys of a diff differ from VPP: a list,
// and the keys to recreate, which the deletes and the gates look up.
type changeSet struct {
	list     []keyChange
	recreate map[vppcfg.Key]bool
	// at indexes list by key once set is called (gate resets only).
	at map[vppcfg.Key]int
}

func (cs *changeSet) add(k vppcfg.Key, e core.DesiredEntry, applied vppcfg.Item, c change) {
	if cs.at != nil {
		cs.at[k] = len(cs.list)
	}
	cs.list = append(cs.list, keyChange{key: k, desired: e.Item, owners: e.Owners, applied: applied, change: c})
	if c == changeRecreate {
		if cs.recreate == nil {
			cs.recreate = map[vppcfg.Key]bool{}
		}
		cs.recreate[k] = true
	}
}

// recreates reports whether k is deleted and created again.
func (cs *changeSet) recreates(k vppcfg.Key) bool { return cs.recreate[k] }

// create makes k a create, whatever its change was (a gate's reset
// creates every item of its plugin again: rare, so the list is indexed
// only then).
func (cs *changeSet) create(k vppcfg.Key, e core.DesiredEntry) {
	if cs.at == nil {
		cs.at = make(map[vppcfg.Key]int, len(cs.list))
		for i, x := range cs.list {
			cs.at[x.key] = i
		}
	}
	delete(cs.recreate, k)
	if i, ok := cs.at[k]; ok {
		cs.list[i].change = changeCreate
		return
	}
	cs.add(k, e, nil, changeCreate)
}

// order returns the indexes of the changes in key order (orderByKey).
func (cs *changeSet) order() []int32 { return orderByKey(cs.list) }
