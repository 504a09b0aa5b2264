package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/vppsvc/vppsvc/vppcfg"
)

// TestSortByKeyParallelEqualsOneSort: the changes of a cold sync, sorted
// on two cores around a pivot, come out in the order of one sort, for
// lists of every shape around the threshold (shuffled, sorted, reversed,
// one kind or several).
func TestSortByKeyParallelEqualsOneSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	kinds := []vppcfg.Kind{vppcfg.ACLKey("x").Kind, lb("10.96.0.1:80", "10.1.0.1:80").Key().Kind}
	for _, n := range []int{0, 1, sortByKeyMin - 1, sortByKeyMin, 3*sortByKeyMin + 7, 50000} {
		for _, shape := range []string{"shuffled", "sorted", "reversed", "one kind"} {
			list := make([]keyChange, n)
			for i := range list {
				kind := kinds[i%len(kinds)]
				if shape == "one kind" {
					kind = kinds[0]
				}
				list[i] = keyChange{key: vppcfg.Key{Kind: kind, Name: fmt.Sprintf("k%07d", i)}, change: change(i % 4)}
			}
			want := slices.Clone(list)
			slices.SortFunc(want, func(a, b keyChange) int { return a.key.Compare(b.key) })
			switch shape {
			case "shuffled", "one kind":
				rng.Shuffle(len(list), func(i, j int) { list[i], list[j] = list[j], list[i] })
			case "sorted":
				list = slices.Clone(want)
			case "reversed":
				list = slices.Clone(want)
				slices.Reverse(list)
			}
			sortByKey(list)
			assert.Equal(t, want, list, "%d changes, %s", n, shape)
		}
	}
}

// BenchmarkSortByKey sorts a cold sync's 50,000 shuffled changes by key:
// sortByKey against one slices.SortFunc.
func BenchmarkSortByKey(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	list := make([]keyChange, 50000)
	for i := range list {
		list[i] = keyChange{key: lb(fmt.Sprintf("172.30.%d.%d:80", i/256, i%256), "10.1.0.1:80").Key()}
	}
	rng.Shuffle(len(list), func(i, j int) { list[i], list[j] = list[j], list[i] })
	for _, bc := range []struct {
		name string
		sort func([]keyChange)
	}{
		{"one-sort", func(l []keyChange) {
			slices.SortFunc(l, func(a, b keyChange) int { return a.key.Compare(b.key) })
		}},
		{"sortByKey", sortByKey},
	} {
		b.Run(bc.name, func(b *testing.B) {
			work := make([]keyChange, len(list))
			for b.Loop() {
				copy(work, list)
				bc.sort(work)
			}
		})
	}
}
