package engine

import (
	"runtime"
	"slices"
	"sync"

	"github.com/vppsvc/vppsvc/vppcfg"
)

// sortByKeyMin is how many changes make the sort worth a second core.
const sortByKeyMin = 4096

// sortByKey sorts changes of distinct keys by key. A cold sync's 50,000
// changes are most of planOps' time (string comparisons), and VPP's core
// idles until the first write: a large list is split around a pivot key
// and the two sides are sorted at once. Keys being distinct, the order is
// the one a single sort gives.
func sortByKey(list []keyChange) {
	byKey := func(a, b keyChange) int { return a.key.Compare(b.key) }
	if len(list) < sortByKeyMin || runtime.GOMAXPROCS(0) < 2 {
		slices.SortFunc(list, byKey)
		return
	}
	pivot := pivotKey(list)
	lo := 0 // list[:lo] are the changes below the pivot
	for i := range list {
		if list[i].key.Compare(pivot) < 0 {
			list[lo], list[i] = list[i], list[lo]
			lo++
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() { slices.SortFunc(list[:lo], byKey) })
	slices.SortFunc(list[lo:], byKey)
	wg.Wait()
}

// pivotKey is the median key of a sample of list, spread over it.
func pivotKey(list []keyChange) vppcfg.Key {
	const samples = 63
	keys := make([]vppcfg.Key, 0, samples)
	for i := range samples {
		keys = append(keys, list[i*(len(list)-1)/(samples-1)].key)
	}
	slices.SortFunc(keys, vppcfg.Key.Compare)
	return keys[samples/2]
}
