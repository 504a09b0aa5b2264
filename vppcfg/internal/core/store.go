package core

import (
	"cmp"
	"fmt"
	"slices"
)

// Store is the desired configuration: one value per key, owned by one or
// more owners. Two owners may hold the same key only with equal values (a
// shared item, such as a permit-all ACL every renderer binds); the item
// stays desired until its last owner lets go.
type Store struct {
	// items are the desired items with their owners. A key held by one
	// owner costs no list of its own: it shares its owner's (soleOwner). There is no index
	// from owner to keys: only a ResyncTxn needs one, and it walks this map
	// instead (a set per owner cost about 50 bytes a key).
	Items DesiredItems
	// soleOwner is the shared one-owner list of each owner.
	soleOwner map[string]Owners
	// byExt indexes mappings by VPP's external key.
	byExt extIndex
	// Bindings are the keys of merged kinds' items (the engine's
	// diffInput.DesiredBindings).
	Bindings map[Key]bool
	// Resynced are owners that committed a ResyncTxn: their desired set is
	// complete, so stale objects they own in VPP may be removed.
	Resynced map[string]bool
	// version counts the changes of Items (see Version).
	version uint64
}

// Version changes whenever an item or its owners change: a reader that
// saw one version and sees it again knows the entries it read then are
// still the store's.
func (s *Store) Version() uint64 { return s.version }

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{
		Items:     DesiredItems{},
		soleOwner: map[string]Owners{},
		byExt:     newExtIndex(),
		Bindings:  map[Key]bool{},
		Resynced:  map[string]bool{},
	}
}

// TxnOp is one Put or Delete of a transaction, in call order.
type TxnOp struct {
	Put Item
	Del Key
	// Key is Put's key when known (computed once, by Txn.Put).
	Key Key
}

// KeyOf is the key the op writes.
func (op TxnOp) KeyOf() Key {
	switch {
	case op.Put == nil:
		return op.Del
	case op.Key != Key{}:
		return op.Key
	}
	return op.Put.Key()
}

// Commit applies one owner's transaction atomically, or rejects it whole.
func (s *Store) Commit(owner string, ops []TxnOp, resync bool) error {
	if err := ValidateOwner(owner); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	// Net effect per key: the last Put or Delete wins.
	entries, err := txnEntries(ops)
	if err != nil {
		return err
	}
	net := netOf(entries)
	// released: the keys of owner a resync no longer puts. The loops below
	// walk entries and released, the same keys as net, in a list.
	var released []Key
	if resync {
		for k, e := range s.Items {
			if _, touched := net[k]; !touched && e.Owners.Has(owner) {
				net[k] = nil
				released = append(released, k)
			}
		}
	}
	// leaving: keys that stop being desired by anybody after this commit.
	leaving := map[Key]bool{}
	leaves := func(k Key) {
		if s.OwnedBy(k, owner) && s.Items[k].Owners.Len() == 1 {
			leaving[k] = true
		}
	}
	// The transaction's puts by external key, indexed as the store's are:
	// a mapping named by its external key costs no entry.
	netExt := newExtIndex()
	puts := 0
	for i := range entries {
		switch e := &entries[i]; {
		case e.superseded:
		case e.val == nil:
			leaves(e.key)
		default:
			puts++
			if ext, ok := ExternalKeyOf(e.key, e.val); ok {
				netExt.add(ext, e.key)
			}
		}
	}
	for _, k := range released {
		leaves(k)
	}
	// The conflict of the smallest key is reported, whatever the order:
	// a deterministic error without sorting a resync's keys.
	if err := s.firstConflict(owner, entries, net, &netExt, leaving); err != nil {
		return err
	}
	s.reserve(len(net))
	var sole Owners // owner's one-owner list, looked up once
	if puts > 0 {
		sole = s.soleList(owner)
	}
	for i := range entries {
		switch e := &entries[i]; {
		case e.superseded:
		case e.val == nil:
			s.Release(e.key, owner)
		default:
			s.hold(e.key, owner, sole, e.val)
		}
	}
	for _, k := range released {
		s.Release(k, owner)
	}
	if resync {
		s.Resynced[owner] = true
	}
	return nil
}

// reserve makes room for up to n more items (see Reserve).
func (s *Store) reserve(n int) { s.Items = Reserve(s.Items, n) }

// check rejects a put of v at k that conflicts with another owner's value
// of the key or with other desired items (crossCheck).
func (s *Store) check(owner string, k Key, v Item, net map[Key]Item, netExt *extIndex, leaving map[Key]bool) error {
	if cur, ok := s.Items[k]; ok && !cur.Item.Equal(v) {
		for _, other := range cur.Owners.Names() {
			if other != owner {
				return fmt.Errorf("%w: %s: owner %q puts %s, but owner %q holds %s", ErrConflict, k, owner, v, other, cur.Item)
			}
		}
	}
	return s.crossCheck(owner, k, v, net, netExt, leaving)
}

// crossCheck rejects combinations VPP refuses between desired items of any
// owners: items on one external key (ExternalKey: static, LB and identity
// mappings share that namespace), and keys a kind excludes (an
// output-feature interface cannot also be inside or outside).
func (s *Store) crossCheck(owner string, k Key, it Item, net map[Key]Item, netExt *extIndex, leaving map[Key]bool) error {
	if ext, ok := ExternalKeyOf(k, it); ok {
		check := func(o Key, ownerOf string) error {
			if leaving[o] || !ExternalConflict(k, o) {
				return nil
			}
			return fmt.Errorf("%w: %s (owner %q) and %s (owner %q) use the same external %s in VPP",
				ErrConflict, k, owner, o, ownerOf, ext)
		}
		if err := s.byExt.each(ext, s.holdsExt(ext), func(o Key) error { return check(o, s.OwnerNames(o)) }); err != nil {
			return err
		}
		inTxn := func(o Key) bool {
			v := net[o]
			if v == nil {
				return false
			}
			x, ok := ExternalKeyOf(o, v)
			return ok && x == ext
		}
		if err := netExt.each(ext, inTxn, func(o Key) error { return check(o, owner) }); err != nil {
			return err
		}
	}
	d := Describe(k.Kind)
	for _, o := range d.Excludes(it) {
		v, inTxn := net[o]
		holder := s.OwnerNames(o)
		if inTxn && v != nil {
			holder = owner
		} else if !s.Items.Has(o) || leaving[o] {
			continue
		}
		return fmt.Errorf("%w: %s (owner %q) and %s (owner %q): %s",
			ErrConflict, k, owner, o, holder, d.ExcludeWhy)
	}
	return nil
}

func (s *Store) OwnedBy(k Key, owner string) bool {
	return s.Items[k].Owners.Has(owner)
}

// OwnerNames is the first owner of k ("" when nobody desires it).
func (s *Store) OwnerNames(k Key) string {
	return s.Items[k].Owners.First()
}

// Hold adds owner to the owners of k, with value v (no checks: Commit
// checks a transaction first).
func (s *Store) Hold(k Key, owner string, v Item) { s.hold(k, owner, s.soleList(owner), v) }

// hold is Hold with owner's one-owner list (soleList) at hand.
func (s *Store) hold(k Key, owner string, sole Owners, v Item) {
	s.version++
	e, ok := s.Items[k]
	if ok {
		s.unindex(k, e.Item)
	}
	e.Item = v
	switch {
	case e.Owners.Len() == 0:
		e.Owners = sole
	case !e.Owners.Has(owner):
		e.Owners = s.ownerList(append(slices.Clone(e.Owners.Names()), owner))
	}
	s.Items[k] = e
	s.index(k, v)
	if Merged(k.Kind) {
		s.Bindings[k] = true
	}
}

// Release drops owner's hold of k.
func (s *Store) Release(k Key, owner string) {
	if !s.OwnedBy(k, owner) {
		return
	}
	s.version++
	e := s.Items[k]
	os := slices.DeleteFunc(slices.Clone(e.Owners.Names()), func(o string) bool { return o == owner })
	if len(os) > 0 {
		e.Owners = s.ownerList(os)
		s.Items[k] = e
		return
	}
	s.unindex(k, e.Item)
	delete(s.Items, k)
	delete(s.Bindings, k)
}

// ownerList returns os, a new list, as a key's owner list: sorted, and the
// shared list when there is one owner.
func (s *Store) ownerList(os []string) Owners {
	if len(os) == 1 {
		return s.soleList(os[0])
	}
	slices.Sort(os)
	return NewOwners(os...)
}

// soleList is the shared one-owner list of owner.
func (s *Store) soleList(owner string) Owners {
	shared, ok := s.soleOwner[owner]
	if !ok {
		shared = NewOwners(owner)
		s.soleOwner[owner] = shared
	}
	return shared
}

func (s *Store) index(k Key, v Item) {
	if ext, ok := ExternalKeyOf(k, v); ok {
		s.byExt.add(ext, k)
	}
}

// holdsExt reports whether the store holds a key whose item's external key
// is ext: extIndex.each's lookup of the keys it does not hold.
func (s *Store) holdsExt(ext string) func(Key) bool {
	return func(k Key) bool {
		e, ok := s.Items[k]
		if !ok {
			return false
		}
		x, ok := ExternalKeyOf(k, e.Item)
		return ok && x == ext
	}
}

func (s *Store) unindex(k Key, v Item) {
	if ext, ok := ExternalKeyOf(k, v); ok {
		s.byExt.remove(ext, k)
	}
}

// Get returns the desired value of k and its owners (sorted).
func (s *Store) Get(k Key) (Item, []string, bool) {
	e, ok := s.Items[k]
	return e.Item, e.Owners.Names(), ok
}

// Desired returns every desired item in key order.
func (s *Store) Desired() []Item {
	out := make([]Item, 0, len(s.Items))
	for _, k := range SortedKeys(s.Items) {
		out = append(out, s.Items[k].Item)
	}
	return out
}

// SortedKeys returns a map's keys in order (Key by kind then name).
func SortedKeys[K interface{ comparable }, V any](m map[K]V) []K {
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
	panic(fmt.Sprintf("SortedKeys: unsupported key type %T", a))
}
