package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/vppsvc/vppsvc/internal/ranksort/ranksorttest"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// TestOrderByKeyEqualsASort: the order of a cold sync's changes, ranked
// by kind and a word of each name, is the order of one sort by key, for
// lists of every shape (shuffled, sorted, reversed; one kind or two, each
// kind's names with a prefix of their own or not) and names that share a
// prefix, differ only after the ranked word, are prefixes of one another,
// or are empty.
func TestOrderByKeyEqualsASort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	kinds := []vppcfg.Kind{vppcfg.ACLKey("x").Kind, lb("10.96.0.1:80", "10.1.0.1:80").Key().Kind}
	names := map[string]func(i int) string{
		"numbered":    func(i int) string { return fmt.Sprintf("k%07d", i) },
		"ClusterIPs":  func(i int) string { return fmt.Sprintf("172.30.%d.%d:%d/tcp", i/256%256, i%256, 80+i/65536) },
		"long tails":  func(i int) string { return fmt.Sprintf("same-prefix-for-all/%c/%09d", 'a'+i%3, i*7919%1000003) },
		"prefixes":    func(i int) string { return strings.Repeat("a", i%20) + strings.Repeat("b", i/20) },
		"with zeroes": func(i int) string { return "x" + strings.Repeat("\x00", i%12) + fmt.Sprint(i/12) },
	}
	for _, n := range []int{0, 1, 2, 4095, 50000} {
		for nameShape, name := range names {
			for _, kindsShape := range []string{"one kind", "two kinds", "kinds apart"} {
				list := make([]keyChange, n)
				for i := range list {
					kind, keyName := kinds[i%len(kinds)], name(i)
					switch {
					case kindsShape == "one kind":
						kind = kinds[0]
					case kindsShape == "kinds apart" && kind == kinds[1]:
						keyName = "vrf0/" + keyName // each kind its own shared prefix
					}
					list[i] = keyChange{key: vppcfg.Key{Kind: kind, Name: keyName}, change: change(i % 4)}
				}
				byKey := func(a, b keyChange) int { return a.key.Compare(b.key) }
				if !ranksorttest.OrderEqualsASort(t, rng, list, byKey, orderByKey, fmt.Sprintf("%d changes, %s names, %s", n, nameShape, kindsShape)) {
					return
				}
			}
		}
	}
}

// BenchmarkOrderByKey orders a cold sync's 50,000 shuffled changes by key:
// orderByKey against one slices.SortFunc of the changes themselves.
func BenchmarkOrderByKey(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	list := make([]keyChange, 50000)
	for i := range list {
		list[i] = keyChange{key: lb(fmt.Sprintf("172.30.%d.%d:80", i/256, i%256), "10.1.0.1:80").Key()}
	}
	rng.Shuffle(len(list), func(i, j int) { list[i], list[j] = list[j], list[i] })
	b.Run("one-sort", func(b *testing.B) {
		work := make([]keyChange, len(list))
		for b.Loop() {
			copy(work, list)
			slices.SortFunc(work, func(a, b keyChange) int { return a.key.Compare(b.key) })
		}
	})
	b.Run("orderByKey", func(b *testing.B) {
		for b.Loop() {
			orderByKey(list)
		}
	})
}
