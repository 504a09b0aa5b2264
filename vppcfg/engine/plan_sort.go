package engine

import (
	"strings"

	"github.com/vppsvc/vppsvc/internal/ranksort"
)

// orderByKey returns the indexes of list (changes of distinct keys) in key
// order. A cold sync's 50,000 changes were sorted in place, most of
// planOps' time: 88-byte moves under the collector's write barrier and a
// string comparison for each step. Here each change is ranked by its kind
// and the bytes of its name past the prefix every name of its kind shares
// (a few node items of other kinds must not shorten the mappings' "172.30."),
// and ranksort orders the ranks; the list does not move.
func orderByKey(list []keyChange) []int32 {
	var skip [256]int // by kind (a uint8)
	var prefix [256]string
	var seen [256]bool
	for i := range list {
		k := list[i].key
		if !seen[k.Kind] {
			seen[k.Kind], prefix[k.Kind] = true, k.Name
			continue
		}
		prefix[k.Kind] = ranksort.Common(prefix[k.Kind], k.Name)
	}
	for k := range skip {
		skip[k] = len(prefix[k])
	}
	ranks := make([]ranksort.Rank, len(list))
	for i := range list {
		k := list[i].key
		ranks[i] = ranksort.Rank{Hi: uint64(k.Kind), Lo: ranksort.Word(k.Name, skip[k.Kind]), I: int32(i)}
	}
	return ranksort.Order(ranks, func(a, b int32) int {
		// Only changes of one kind tie: Hi is the kind.
		s := skip[list[a].key.Kind]
		return strings.Compare(list[a].key.Name[s:], list[b].key.Name[s:])
	})
}
