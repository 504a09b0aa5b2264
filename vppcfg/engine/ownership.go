package engine

import (
	"fmt"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
)

// desiredLookup is what classification needs to know about desired state.
type desiredLookup interface {
	// get returns the desired value of key and its owners (sorted).
	get(k vppcfg.Key) (vppcfg.Item, []string, bool)
	// keyByTag finds the desired item of a kind keyed by label
	// (vppcfg's kindSpec.KeyedByLabel) whose tag, for one of its owners, is tag.
	keyByTag(tag string) (vppcfg.Key, bool)
}

// viewOf returns the desiredLookup of a store, with an index of the tags
// of desired items keyed by label.
func viewOf(s *core.Store) desiredLookup {
	v := &storeView{Store: s, tags: map[string]vppcfg.Key{}}
	for k, e := range s.Items {
		if core.Describe(k.Kind).KeyedByLabel {
			for _, o := range e.Owners.Names() {
				v.tags[core.Tag(o, core.ItemLabel(e.Item))] = k
			}
		}
	}
	return v
}

type storeView struct {
	*core.Store
	tags map[string]vppcfg.Key
}

func (v *storeView) get(k vppcfg.Key) (vppcfg.Item, []string, bool) { return v.Get(k) }

func (v *storeView) keyByTag(tag string) (vppcfg.Key, bool) {
	k, ok := v.tags[tag]
	return k, ok
}

// classified is a dump sorted into what the layer owns and what it must not touch.
type classified struct {
	// applied are objects this layer made (tagged ours) or that an owner
	// claims; orphans among them are not desired by anybody.
	applied map[vppcfg.Key]appliedEntry
	// tags are the tags of applied objects that differ from the one the
	// layer would write for them.
	tags oddTags
	// unowned are untagged objects nobody claims; one is adopted when an
	// owner comes to desire its key.
	unowned map[vppcfg.Key]appliedEntry
	// owners share one copy of each owner name among the entries.
	owners ownerRefs
	// foreign are tagged objects of others (or untagged objects of taggable
	// kinds); they block desired items at the same VPP identity.
	foreign map[vppcfg.Key]vppcfg.Item
	// names are the names of the objects of kinds keyed by label, by kind
	// and VPP index: merged values refer to them by index.
	names map[vppcfg.Kind]map[uint32]string
	// merged are the merged kinds' own states of what was found.
	merged mergedStates
}

// classify maps a dump back to items and owners.
func classify(st *driverapi.State, desired desiredLookup, claims map[string]vppcfg.UntaggedClaimFunc) *classified {
	c := &classified{
		applied: map[vppcfg.Key]appliedEntry{},
		tags:    oddTags{},
		unowned: map[vppcfg.Key]appliedEntry{},
		owners:  ownerRefs{},
		foreign: map[vppcfg.Key]vppcfg.Item{},
		names:   map[vppcfg.Kind]map[uint32]string{},
		merged:  newMergedStates(),
	}
	var mergedObjs []driverapi.Observed
	for _, o := range st.Objects {
		kind := o.Item.Key().Kind
		d := core.Describe(kind)
		switch {
		case d.Merge != nil:
			mergedObjs = append(mergedObjs, o) // once the objects they refer to are known
		case !d.Taggable():
			c.addUntagged(o, desired, claims)
		default:
			c.addTagged(o, d, desired)
		}
	}
	for _, o := range mergedObjs {
		kind := o.Item.Key().Kind
		core.Describe(kind).Merge.Observe(dumpView{c: c, desired: desired, state: c.merged[kind]}, o)
	}
	return c
}

// addTagged classifies an object of a taggable kind by its tag.
func (c *classified) addTagged(o driverapi.Observed, d *core.Descriptor, desired desiredLookup) {
	owner, label, ours := core.ParseTag(o.Tag)
	if !ours {
		if !d.KeyedByLabel {
			c.foreign[o.Item.Key()] = o.Item
		}
		return
	}
	var key vppcfg.Key
	if d.KeyedByLabel {
		if k, ok := desired.keyByTag(o.Tag); ok {
			key = k
			label = k.Name
		} else {
			key = vppcfg.Key{Kind: d.Kind, Name: label}
		}
	} else {
		key = o.Item.Key()
		if di, owners, ok := desired.get(key); ok {
			for _, ow := range owners {
				if core.Tag(ow, core.ItemLabel(di)) == o.Tag {
					label = core.ItemLabel(di)
					break
				}
			}
		}
	}
	item := core.WithLabel(o.Item, label)
	e := appliedEntry{Item: item, Handle: o.Handle, Owner: c.owners.of(owner)}
	if di, owners, ok := desired.get(key); ok {
		e.Item = core.WithUnobservable(item, di)
		e.Owner = c.owners.of(owners[0])
	} else {
		e.Orphan = true
	}
	if _, dup := c.applied[key]; dup {
		// A second object with the same identity (an interrupted create
		// retried by an earlier run): keep it under a key of its own so
		// that it is pruned like any stale object.
		key = vppcfg.Key{Kind: key.Kind, Name: fmt.Sprintf("%s#dup%d", key.Name, o.Handle)}
		e.Orphan = true
	}
	c.applied[key] = e
	c.tags.keep(key, e, o.Tag)
	if d.KeyedByLabel {
		if c.names[d.Kind] == nil {
			c.names[d.Kind] = map[uint32]string{}
		}
		c.names[d.Kind][o.Handle] = key.Name
	}
}

func (c *classified) addUntagged(o driverapi.Observed, desired desiredLookup, claims map[string]vppcfg.UntaggedClaimFunc) {
	key := o.Item.Key()
	e := appliedEntry{Item: o.Item, Handle: o.Handle}
	if d, owners, ok := desired.get(key); ok {
		e.Item = core.WithUnobservable(o.Item, d)
		e.Owner = c.owners.of(owners[0])
		c.applied[key] = e
		return
	}
	for _, owner := range core.SortedKeys(claims) {
		if claims[owner](o.Item) {
			e.Owner, e.Orphan = c.owners.of(owner), true
			c.applied[key] = e
			return
		}
	}
	c.unowned[key] = e
}
