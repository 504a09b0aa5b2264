package processor

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/vppsvc/vppsvc/model"
)

// compareIDs must order exactly as model.ServiceID.Compare: renderers get
// the services of a resync in that order.
func TestCompareIDsIsServiceIDOrder(t *testing.T) {
	ids := []model.ServiceID{
		{}, {Namespace: "default"}, {Namespace: "default", Name: "a"}, {Namespace: "default", Name: "b"},
		{Namespace: "default", Name: "ab"}, {Namespace: "kube-system", Name: "a"}, {Namespace: "a", Name: "default"},
		{Namespace: "é", Name: "x"}, {Namespace: "e", Name: "x"}, {Name: "a"},
	}
	for _, a := range ids {
		for _, b := range ids {
			assert.Equal(t, a.Compare(b), compareIDs(a, b), "%v vs %v", a, b)
		}
	}
}

// sortByID must order exactly as model.ServiceID.Compare, whether IDs
// differ within their first 8 bytes or after them, by length alone, or by
// trailing zero bytes (which the 8-byte prefixes pad with).
func TestSortByIDIsServiceIDOrder(t *testing.T) {
	names := []string{"", "a", "ab", "a\x00", "ab\x00", "abcdefgh", "abcdefg", "abcdefgh\x00", "abcdefghi",
		"abcdefghij", "abcdefgi", "svc-1", "svc-10", "svc-2", "default", "kube-system", "é", "e"}
	var values []*model.ContivService
	for _, ns := range names {
		for _, n := range names {
			values = append(values, &model.ContivService{ID: model.ServiceID{Namespace: ns, Name: n}})
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		rng.Shuffle(len(values), func(i, j int) { values[i], values[j] = values[j], values[i] })
		got := slices.Clone(values)
		sortByID(got)
		assert.True(t, slices.IsSortedFunc(got, func(a, b *model.ContivService) int { return a.ID.Compare(b.ID) }))
		assert.ElementsMatch(t, values, got)
	}
}
