package core

import "slices"

// extIndex indexes desired mappings by VPP's external key, which static,
// LB and identity mappings share. Most mappings are named by their
// external key (a key {kind, ext}): those are not indexed at all, only
// their kind is remembered (named), and each finds them by looking the key
// up in the store, so that a service's mapping costs no index entry (about
// 60 bytes a service). The others (identity mappings, address-only
// mappings) are held here: the first key of an external key in the map
// itself and only the rare others in a list, because an external key has
// one mapping but for identity mappings in several VRFs.
type extIndex struct {
	first map[string]Key
	// more are the keys after the first, in the order they were added.
	more map[string][]Key
	// named are the kinds, sorted, that put a key named by its external
	// key; each looks those up instead of holding them.
	named []Kind
}

func newExtIndex() extIndex {
	return extIndex{first: map[string]Key{}, more: map[string][]Key{}}
}

// each calls f with the keys on ext until f returns an error: first the
// keys named by ext that holds reports on ext (in kind order), then the
// others in the order they were added.
func (x *extIndex) each(ext string, holds func(Key) bool, f func(Key) error) error {
	for _, kind := range x.named {
		if k := (Key{Kind: kind, Name: ext}); holds(k) {
			if err := f(k); err != nil {
				return err
			}
		}
	}
	k, ok := x.first[ext]
	if !ok {
		return nil
	}
	if err := f(k); err != nil {
		return err
	}
	for _, o := range x.more[ext] {
		if err := f(o); err != nil {
			return err
		}
	}
	return nil
}

func (x *extIndex) add(ext string, k Key) {
	if k.Name == ext {
		if i, found := slices.BinarySearch(x.named, k.Kind); !found {
			x.named = slices.Insert(x.named, i, k.Kind)
		}
		return
	}
	first, ok := x.first[ext]
	switch {
	case !ok:
		x.first[ext] = k
	case first != k && !slices.Contains(x.more[ext], k):
		x.more[ext] = append(x.more[ext], k)
	}
}

func (x *extIndex) remove(ext string, k Key) {
	if k.Name == ext {
		return // not held; the store no longer holds it
	}
	first, ok := x.first[ext]
	if !ok {
		return
	}
	more := x.more[ext]
	if first == k {
		if len(more) == 0 {
			delete(x.first, ext)
			return
		}
		x.first[ext], more = more[0], more[1:]
	} else {
		more = slices.DeleteFunc(slices.Clone(more), func(o Key) bool { return o == k })
	}
	if len(more) == 0 {
		delete(x.more, ext)
	} else {
		x.more[ext] = more
	}
}
