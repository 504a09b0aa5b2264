package model

import "slices"

// Zones is an immutable, sorted set of zone names: the zone hints of a
// backend. It is one pointer, nil for no zone, so that a backend without
// hints (most of them) spends 8 bytes on them where a slice header spent
// 24, which kept ServiceBackend in the 64-byte size class. Values are
// shared freely: nothing changes a set once made, and List returns a copy.
type Zones struct{ list *[]string }

// NewZones returns the set of the given names, without empty names and
// duplicates.
func NewZones(names ...string) Zones {
	var list []string
	for _, n := range names {
		if n != "" {
			list = append(list, n)
		}
	}
	if len(list) == 0 {
		return Zones{}
	}
	slices.Sort(list)
	list = slices.Clip(slices.Compact(list))
	return Zones{list: &list}
}

// Len is the number of zones.
func (z Zones) Len() int {
	if z.list == nil {
		return 0
	}
	return len(*z.list)
}

// Has reports whether the set holds zone.
func (z Zones) Has(zone string) bool {
	if z.list == nil {
		return false
	}
	_, found := slices.BinarySearch(*z.list, zone)
	return found
}

// List returns the zones, sorted, in a list of the caller's own (nil for
// none).
func (z Zones) List() []string {
	if z.list == nil {
		return nil
	}
	return slices.Clone(*z.list)
}

// Equal reports whether both sets hold the same zones.
func (z Zones) Equal(o Zones) bool {
	if z.list == o.list {
		return true
	}
	return z.Len() == o.Len() && (z.Len() == 0 || slices.Equal(*z.list, *o.list))
}
