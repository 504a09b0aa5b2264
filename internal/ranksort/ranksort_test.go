package ranksort

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/vppsvc/vppsvc/internal/ranksort/ranksorttest"
)

// pair is an element keyed by two strings, ordered by a then b.
type pair struct{ a, b string }

func comparePairs(x, y pair) int {
	if c := strings.Compare(x.a, y.a); c != 0 {
		return c
	}
	return strings.Compare(x.b, y.b)
}

// order ranks pairs as the package's users do: each key's word past the
// prefix all of that key share, the tie comparing the rest.
func order(list []pair) []int32 {
	skipA := SharedPrefix(len(list), func(i int) string { return list[i].a })
	skipB := SharedPrefix(len(list), func(i int) string { return list[i].b })
	ranks := make([]Rank, len(list))
	for i, p := range list {
		ranks[i] = Rank{Hi: FirstWord(p.a, skipA), Lo: Word(p.b, skipB), I: int32(i)}
	}
	return Order(ranks, func(x, y int32) int {
		if c := strings.Compare(list[x].a[skipA:], list[y].a[skipA:]); c != 0 {
			return c
		}
		return strings.Compare(list[x].b[skipB:], list[y].b[skipB:])
	})
}

// TestOrderEqualsASort: for keys of every shape — sharing a long prefix,
// differing only past the ranked word, prefixes of one another, with zero
// bytes, empty — and lists shuffled, sorted or reversed, the order is the
// order of one sort by comparison.
func TestOrderEqualsASort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	shapes := map[string]func(i int) pair{
		"ClusterIPs": func(i int) pair {
			return pair{"nat44", fmt.Sprintf("172.30.%d.%d:%d/tcp", i/256%256, i%256, 80+i/65536)}
		},
		"services":   func(i int) pair { return pair{fmt.Sprintf("ns-%d", i%7), fmt.Sprintf("svc-%06d", i*7919%100003)} },
		"long tails": func(i int) pair { return pair{"same", fmt.Sprintf("shared-prefix/%c/%09d", 'a'+i%3, i*31%1009)} },
		"prefixes": func(i int) pair {
			return pair{strings.Repeat("a", i%5), strings.Repeat("a", i%20) + strings.Repeat("b", i/20)}
		},
		"zero bytes":  func(i int) pair { return pair{"", "x" + strings.Repeat("\x00", i%12) + fmt.Sprint(i/12)} },
		"empty":       func(int) pair { return pair{} },
		"long firsts": func(i int) pair { return pair{fmt.Sprintf("namespace-%d", i%3), fmt.Sprintf("b%d", i%11)} },
		"firsts alike past 7 bytes": func(i int) pair {
			return pair{fmt.Sprintf("%c-long-middle-%d", 'a'+i%2, i%3), fmt.Sprint(i % 7)}
		},
		"random text": func(int) pair { return pair{randText(rng, 3), randText(rng, 12)} },
	}
	for _, n := range []int{0, 1, 2, 3, 100, 4096, 30000} {
		for name, shape := range shapes {
			list := make([]pair, n)
			for i := range list {
				list[i] = shape(i)
			}
			if !ranksorttest.OrderEqualsASort(t, rng, list, comparePairs, order, fmt.Sprintf("%d keys, %s", n, name)) {
				return
			}
		}
	}
}

// randText is n bytes from a small alphabet with a zero byte, so that
// random keys share prefixes and tie.
func randText(rng *rand.Rand, n int) string {
	const alphabet = "ab\x00z"
	b := make([]byte, rng.IntN(n+1))
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return string(b)
}

// BenchmarkOrder orders a cold sync's 50,000 service IDs: Order against
// one slices.SortFunc comparing the strings.
func BenchmarkOrder(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	list := make([]pair, 50000)
	for i := range list {
		list[i] = pair{fmt.Sprintf("ns-%d", i%100), fmt.Sprintf("service-%d", i)}
	}
	rng.Shuffle(len(list), func(i, j int) { list[i], list[j] = list[j], list[i] })
	b.Run("compare", func(b *testing.B) {
		work := make([]pair, len(list))
		for b.Loop() {
			copy(work, list)
			slices.SortFunc(work, comparePairs)
		}
	})
	b.Run("ranks", func(b *testing.B) {
		for b.Loop() {
			order(list)
		}
	})
}
