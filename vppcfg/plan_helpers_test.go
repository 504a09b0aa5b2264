package vppcfg

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestDiffLocalsBothWays: the merge walk of canonical lists, the pairwise
// diff of small unsorted sets and the indexed one of large sets agree.
func TestDiffLocalsBothWays(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	random := func() []NAT44LBLocal {
		var ls []NAT44LBLocal
		for i := range 12 {
			if rng.IntN(2) == 0 {
				ls = append(ls, NAT44LBLocal{Addr: netip.MustParseAddrPort(fmt.Sprintf("10.1.1.%d:80", i)),
					Probability: uint8(1 + rng.IntN(2)), VRF: uint32(rng.IntN(2))})
			}
		}
		rng.Shuffle(len(ls), func(i, j int) { ls[i], ls[j] = ls[j], ls[i] })
		return ls
	}
	for range 500 {
		old, new := random(), random()
		a1, r1, c1 := diffLocals(old, new)
		a2, r2, c2 := diffLocalsIndexed(old, new)
		assert.Equal(t, a2, a1, "added")
		assert.Equal(t, r2, r1, "removed")
		assert.Equal(t, c2, c1, "changed")
		// And the merge walk of canonical lists.
		SortLBLocals(old)
		SortLBLocals(new)
		a3, r3, c3 := diffLocals(old, new)
		a4, r4, c4 := diffLocalsIndexed(old, new)
		assert.Equal(t, a4, a3, "added, sorted")
		assert.Equal(t, r4, r3, "removed, sorted")
		assert.Equal(t, c4, c3, "changed, sorted")
	}
}

// TestACLListHelpers: the position-indexed list helpers of aclAssignments.
func TestACLListHelpers(t *testing.T) {
	cur := []string{"a", "b", "c", "d"}
	assert.Equal(t, []string{"a", "c"}, keepOnly(cur, []string{"c", "x", "a"}))
	assert.Equal(t, []string{"b", "d"}, without(cur, []string{"c", "x", "a"}))
	// Kept names go just before the first desired name that follows them
	// in cur, or at the end.
	assert.Equal(t, []string{"a", "b", "c", "x", "d"}, mergeKept([]string{"a", "c", "x"}, []string{"b", "d"}, cur))
	assert.Equal(t, []string{"y", "b"}, mergeKept([]string{"y"}, []string{"b"}, cur))
	bs := []*ACLBinding{{ACL: "d"}, {ACL: "z"}, {ACL: "a"}}
	assert.Equal(t, []string{"z", "a", "d"}, inOrder(bs, cur), "names missing from cur first, then cur's order")
	assert.True(t, slices.Equal([]string{"a"}, sortBindings([]*ACLBinding{{ACL: "a", Priority: 2}, {ACL: "a", Priority: 1}})))
}
