package core

import "maps"

// Reserve returns m, or a copy of m with room for n more entries when
// that is many more than m holds (a cold sync): the entries move once
// into a map of the final size instead of the map growing from its few
// entries (splitting and rehashing its tables at every doubling, a few
// percent of a cold sync of 50,000 services in each map so grown).
func Reserve[K comparable, V any](m map[K]V, n int) map[K]V {
	if n < 64 || n < 2*len(m) {
		return m
	}
	out := make(map[K]V, len(m)+n)
	maps.Copy(out, m)
	return out
}
