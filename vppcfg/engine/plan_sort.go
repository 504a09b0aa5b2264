package engine

import (
	"strings"

	"github.com/vppsvc/vppsvc/internal/ranksort"
)

// orderByKey returns the indexes of list (changes of distinct keys) in key
// order. A cold sync's 50,000 changes were sorted in place, most of
// planOps' time: 88-byte moves under the collector's write barrier and a
// string comparison for each step. Here each change is ranked by its kind
// and the bytes of its name past the prefix every name shares, and
// ranksort orders the ranks; the list does not move.
func orderByKey(list []keyChange) []int32 {
	skip := ranksort.SharedPrefix(len(list), func(i int) string { return list[i].key.Name })
	ranks := make([]ranksort.Rank, len(list))
	for i := range list {
		k := list[i].key
		ranks[i] = ranksort.Rank{Hi: uint64(k.Kind), Lo: ranksort.Word(k.Name, skip), I: int32(i)}
	}
	return ranksort.Order(ranks, func(a, b int32) int {
		return strings.Compare(list[a].key.Name[skip:], list[b].key.Name[skip:])
	})
}
