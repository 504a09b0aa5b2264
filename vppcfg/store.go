package vppcfg

import (
	"cmp"
	"fmt"
	"slices"
)

// store is the desired configuration: one value per key, owned by one or
// more owners. Two owners may hold the same key only with equal values (a
// shared item, such as a permit-all ACL every renderer binds); the item
// stays desired until its last owner lets go.
type store struct {
	// items are the desired items with their owners. An owner list is
	// never changed in place (a changed list is a new one), so that a
	// one-owner list can be shared by every key of that owner (soleOwner):
	// a key held by one owner costs no list of its own. There is no index
	// from owner to keys: only a ResyncTxn needs one, and it walks this map
	// instead (a set per owner cost about 50 bytes a key).
	items desiredItems
	// soleOwner is the shared one-owner list of each owner.
	soleOwner map[string][]string
	// byExt indexes mappings by VPP's external key.
	byExt extIndex
	// bindings are the keys of merged kinds' items (diffInput.DesiredBindings).
	bindings map[Key]bool
	// resynced are owners that committed a ResyncTxn: their desired set is
	// complete, so stale objects they own in VPP may be removed.
	resynced map[string]bool
}

func newStore() *store {
	return &store{
		items:     desiredItems{},
		soleOwner: map[string][]string{},
		byExt:     newExtIndex(),
		bindings:  map[Key]bool{},
		resynced:  map[string]bool{},
	}
}

// txnOp is one Put or Delete of a transaction, in call order.
type txnOp struct {
	put Item
	del Key
	// key is put's key when known (computed once, by Txn.Put).
	key Key
}

// keyOf is the key the op writes.
func (op txnOp) keyOf() Key {
	switch {
	case op.put == nil:
		return op.del
	case op.key != Key{}:
		return op.key
	}
	return op.put.Key()
}

// commit applies one owner's transaction atomically, or rejects it whole.
func (s *store) commit(owner string, ops []txnOp, resync bool) error {
	if err := validateOwner(owner); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	// Net effect per key: the last Put or Delete wins.
	net := make(map[Key]Item, len(ops))
	for _, op := range ops {
		if op.put == nil {
			net[op.del] = nil
			continue
		}
		k := op.keyOf()
		if err := validateItem(k, op.put); err != nil {
			return err
		}
		net[k] = describe(k.Kind).canonical(op.put)
	}
	if resync {
		for k, e := range s.items {
			if _, touched := net[k]; !touched && slices.Contains(e.owners, owner) {
				net[k] = nil
			}
		}
	}
	// leaving: keys that stop being desired by anybody after this commit.
	leaving := map[Key]bool{}
	for k, v := range net {
		if v == nil && s.ownedBy(k, owner) && len(s.items[k].owners) == 1 {
			leaving[k] = true
		}
	}
	netExt := make(map[string][]Key, len(net))
	for k, v := range net {
		if v != nil {
			if ext, ok := externalKeyOf(k, v); ok {
				netExt[ext] = append(netExt[ext], k)
			}
		}
	}
	// The conflict of the smallest key is reported, whatever the map
	// order: a deterministic error without sorting a resync's keys.
	var firstKey Key
	var firstErr error
	for k, v := range net {
		if v == nil || (firstErr != nil && k.Compare(firstKey) > 0) {
			continue
		}
		if err := s.check(owner, k, v, net, netExt, leaving); err != nil {
			firstKey, firstErr = k, err
		}
	}
	if firstErr != nil {
		return firstErr
	}
	for k, v := range net {
		if v == nil {
			s.release(k, owner)
		} else {
			s.hold(k, owner, v)
		}
	}
	if resync {
		s.resynced[owner] = true
	}
	return nil
}

// check rejects a put of v at k that conflicts with another owner's value
// of the key or with other desired items (crossCheck).
func (s *store) check(owner string, k Key, v Item, net map[Key]Item, netExt map[string][]Key, leaving map[Key]bool) error {
	if cur, ok := s.items[k]; ok && !cur.item.Equal(v) {
		for _, other := range cur.owners {
			if other != owner {
				return fmt.Errorf("%w: %s: owner %q puts %s, but owner %q holds %s", ErrConflict, k, owner, v, other, cur.item)
			}
		}
	}
	return s.crossCheck(owner, k, v, net, netExt, leaving)
}

// crossCheck rejects combinations VPP refuses between desired items of any
// owners: items on one external key (ExternalKey: static, LB and identity
// mappings share that namespace), and keys a kind excludes (an
// output-feature interface cannot also be inside or outside).
func (s *store) crossCheck(owner string, k Key, it Item, net map[Key]Item, netExt map[string][]Key, leaving map[Key]bool) error {
	if ext, ok := externalKeyOf(k, it); ok {
		check := func(o Key, ownerOf string) error {
			if leaving[o] || !externalConflict(k, o) {
				return nil
			}
			return fmt.Errorf("%w: %s (owner %q) and %s (owner %q) use the same external %s in VPP",
				ErrConflict, k, owner, o, ownerOf, ext)
		}
		if err := s.byExt.each(ext, func(o Key) error { return check(o, s.ownerNames(o)) }); err != nil {
			return err
		}
		for _, o := range netExt[ext] {
			if err := check(o, owner); err != nil {
				return err
			}
		}
	}
	d := describe(k.Kind)
	for _, o := range d.excludes(it) {
		v, inTxn := net[o]
		holder := s.ownerNames(o)
		if inTxn && v != nil {
			holder = owner
		} else if !s.items.has(o) || leaving[o] {
			continue
		}
		return fmt.Errorf("%w: %s (owner %q) and %s (owner %q): %s",
			ErrConflict, k, owner, o, holder, d.excludeWhy)
	}
	return nil
}

func (s *store) ownedBy(k Key, owner string) bool {
	return slices.Contains(s.items[k].owners, owner)
}

func (s *store) ownerNames(k Key) string {
	if os := s.items[k].owners; len(os) > 0 {
		return os[0]
	}
	return ""
}

func (s *store) hold(k Key, owner string, v Item) {
	e, ok := s.items[k]
	if ok {
		s.unindex(k, e.item)
	}
	e.item = v
	if !slices.Contains(e.owners, owner) {
		e.owners = s.ownerList(append(slices.Clone(e.owners), owner))
	}
	s.items[k] = e
	s.index(k, v)
	if merged(k.Kind) {
		s.bindings[k] = true
	}
}

func (s *store) release(k Key, owner string) {
	if !s.ownedBy(k, owner) {
		return
	}
	e := s.items[k]
	os := slices.DeleteFunc(slices.Clone(e.owners), func(o string) bool { return o == owner })
	if len(os) > 0 {
		e.owners = s.ownerList(os)
		s.items[k] = e
		return
	}
	s.unindex(k, e.item)
	delete(s.items, k)
	delete(s.bindings, k)
}

// ownerList returns os, a new list, as a key's owner list: sorted, and the
// shared list when there is one owner.
func (s *store) ownerList(os []string) []string {
	if len(os) == 1 {
		shared, ok := s.soleOwner[os[0]]
		if !ok {
			shared = slices.Clip(os)
			s.soleOwner[os[0]] = shared
		}
		return shared
	}
	slices.Sort(os)
	return os
}

func (s *store) index(k Key, v Item) {
	if ext, ok := externalKeyOf(k, v); ok {
		s.byExt.add(ext, k)
	}
}

func (s *store) unindex(k Key, v Item) {
	if ext, ok := externalKeyOf(k, v); ok {
		s.byExt.remove(ext, k)
	}
}

// get implements desiredLookup.
func (s *store) get(k Key) (Item, []string, bool) {
	e, ok := s.items[k]
	return e.item, e.owners, ok
}

// view returns a desiredLookup with an index of the tags of desired
// items keyed by label.
func (s *store) view() desiredLookup {
	v := &storeView{store: s, tags: map[string]Key{}}
	for k, e := range s.items {
		if describe(k.Kind).keyedByLabel {
			for _, o := range e.owners {
				v.tags[Tag(o, itemLabel(e.item))] = k
			}
		}
	}
	return v
}

type storeView struct {
	*store
	tags map[string]Key
}

func (v *storeView) keyByTag(tag string) (Key, bool) {
	k, ok := v.tags[tag]
	return k, ok
}

// desired returns every desired item in key order.
func (s *store) desired() []Item {
	out := make([]Item, 0, len(s.items))
	for _, k := range sortedKeys(s.items) {
		out = append(out, s.items[k].item)
	}
	return out
}

// sortedKeys returns a map's keys in order (Key by kind then name).
func sortedKeys[K interface{ comparable }, V any](m map[K]V) []K {
	ks := make([]K, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b K) int { return compareAny(a, b) })
	return ks
}

func compareAny[K comparable](a, b K) int {
	switch x := any(a).(type) {
	case Key:
		return x.Compare(any(b).(Key))
	case string:
		return cmp.Compare(x, any(b).(string))
	}
	panic(fmt.Sprintf("sortedKeys: unsupported key type %T", a))
}
