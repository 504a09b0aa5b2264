package processor

import (
	"slices"

	discoveryv1 "k8s.io/api/discovery/v1"
)

// sliceSet is a service's EndpointSlices, distinct by name, in no
// particular order (ConvertService sorts them). Most services have one
// slice, which it holds inline; several are held in a list of their own. A
// slice header and its one-pointer array cost 32 bytes a service where the
// two pointers cost 16, and they kept the entry in a larger size class.
type sliceSet struct {
	one  *discoveryv1.EndpointSlice    // the only slice, when there is one
	many *[]*discoveryv1.EndpointSlice // every slice, when there are several
}

// len is the number of slices.
func (s *sliceSet) len() int {
	switch {
	case s.many != nil:
		return len(*s.many)
	case s.one != nil:
		return 1
	}
	return 0
}

// first returns a slice of the set, or nil.
func (s *sliceSet) first() *discoveryv1.EndpointSlice {
	if s.many != nil {
		return (*s.many)[0]
	}
	return s.one
}

// list returns the slices, using buf for a single one: the caller keeps the
// list only while the set does not change.
func (s *sliceSet) list(buf *[1]*discoveryv1.EndpointSlice) []*discoveryv1.EndpointSlice {
	switch {
	case s.many != nil:
		return *s.many
	case s.one != nil:
		buf[0] = s.one
		return buf[:]
	}
	return nil
}

// has reports whether the set holds a slice of that name.
func (s *sliceSet) has(name string) bool {
	if s.many != nil {
		return slices.ContainsFunc(*s.many, func(x *discoveryv1.EndpointSlice) bool { return x.Name == name })
	}
	return s.one != nil && s.one.Name == name
}

// set stores x, replacing the slice of the same name.
func (s *sliceSet) set(x *discoveryv1.EndpointSlice) {
	switch {
	case s.many != nil:
		if i := slices.IndexFunc(*s.many, func(o *discoveryv1.EndpointSlice) bool { return o.Name == x.Name }); i >= 0 {
			(*s.many)[i] = x
		} else {
			*s.many = append(*s.many, x)
		}
	case s.one == nil || s.one.Name == x.Name:
		s.one = x
	default:
		s.many, s.one = &[]*discoveryv1.EndpointSlice{s.one, x}, nil
	}
}

// delete forgets the slice of that name.
func (s *sliceSet) delete(name string) {
	if s.many == nil {
		if s.one != nil && s.one.Name == name {
			s.one = nil
		}
		return
	}
	*s.many = slices.DeleteFunc(*s.many, func(o *discoveryv1.EndpointSlice) bool { return o.Name == name })
	if len(*s.many) == 1 {
		s.one, s.many = (*s.many)[0], nil
	}
}
