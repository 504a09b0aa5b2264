package core

import "slices"

// extIndex indexes desired mappings by VPP's external key, which static,
// LB and identity mappings share. An external key has one mapping but for
// identity mappings in several VRFs, so the first key is held in the map
// itself and only the rare others in a list: a list per external key cost
// a 24-byte array per service.
type extIndex struct {
	first map[string]Key
	// more are the keys after the first, in the order they were added.
	more map[string][]Key
}

func newExtIndex() extIndex {
	return extIndex{first: map[string]Key{}, more: map[string][]Key{}}
}

// each calls f with the keys on ext in the order they were added, until f
// returns an error.
func (x extIndex) each(ext string, f func(Key) error) error {
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

func (x extIndex) add(ext string, k Key) {
	first, ok := x.first[ext]
	switch {
	case !ok:
		x.first[ext] = k
	case first != k && !slices.Contains(x.more[ext], k):
		x.more[ext] = append(x.more[ext], k)
	}
}

func (x extIndex) remove(ext string, k Key) {
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
