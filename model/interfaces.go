package model

import (
	"slices"
	"strings"
)

// Interfaces is a set of VPP interface names, kept sorted and free of
// duplicates. The zero value is an empty set. Build one with NewInterfaces.
type Interfaces []string

// NewInterfaces returns the set of the given names; empty names are dropped.
func NewInterfaces(names ...string) Interfaces {
	set := make(Interfaces, 0, len(names))
	for _, n := range names {
		if n != "" {
			set = append(set, n)
		}
	}
	slices.Sort(set)
	return slices.Compact(set)
}

// Has reports whether name is in the set.
func (s Interfaces) Has(name string) bool {
	_, found := slices.BinarySearch(s, name)
	return found
}

// Added returns the names in s that are not in old.
func (s Interfaces) Added(old Interfaces) Interfaces {
	var out Interfaces
	for _, n := range s {
		if !old.Has(n) {
			out = append(out, n)
		}
	}
	return out
}

// Equal reports whether both sets hold the same names.
func (s Interfaces) Equal(other Interfaces) bool { return slices.Equal(s, other) }

// String returns the names separated by commas, in order.
func (s Interfaces) String() string { return "{" + strings.Join(s, ",") + "}" }
