// Package ranksorttest holds the check that a rank order agrees with one
// sort by comparison, for the tests of ranksort and of its users.
package ranksorttest

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
)

// OrderEqualsASort gives order the elements of list shuffled, sorted and
// reversed, and checks that the indexes it returns list them as one stable
// sort by compare does. It reports the first difference, with what, and
// tells whether every arrangement held.
func OrderEqualsASort[T any](t testing.TB, rng *rand.Rand, list []T, compare func(a, b T) int, order func([]T) []int32, what string) bool {
	t.Helper()
	want := slices.Clone(list)
	slices.SortStableFunc(want, compare)
	for _, arrange := range []string{"shuffled", "sorted", "reversed"} {
		in := slices.Clone(want)
		switch arrange {
		case "shuffled":
			rng.Shuffle(len(in), func(i, j int) { in[i], in[j] = in[j], in[i] })
		case "reversed":
			slices.Reverse(in)
		}
		got := make([]T, 0, len(in))
		for _, i := range order(in) {
			got = append(got, in[i])
		}
		if !assert.Equal(t, want, got, "%s, %s", what, arrange) {
			return false
		}
	}
	return true
}
