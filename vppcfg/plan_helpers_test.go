package vppcfg

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestDiffLocals: on random local sets in any order, diffLocals agrees
// with a diff by identity (address, port, VRF) computed the obvious way.
func TestDiffLocals(t *testing.T) {
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
	byID := func(ls []NAT44LBLocal) map[localID]NAT44LBLocal {
		m := map[localID]NAT44LBLocal{}
		for _, l := range ls {
			m[idOf(l)] = l
		}
		return m
	}
	for range 500 {
		old, new := random(), random()
		oldBy, newBy := byID(old), byID(new)
		var wantAdded, wantRemoved []NAT44LBLocal
		var wantChanged [][2]NAT44LBLocal
		for id, l := range newBy {
			if o, ok := oldBy[id]; !ok {
				wantAdded = append(wantAdded, l)
			} else if o.Probability != l.Probability {
				wantChanged = append(wantChanged, [2]NAT44LBLocal{o, l})
			}
		}
		for id, l := range oldBy {
			if _, ok := newBy[id]; !ok {
				wantRemoved = append(wantRemoved, l)
			}
		}
		added, removed, changed := diffLocals(old, new)
		assert.ElementsMatch(t, wantAdded, added, "added")
		assert.ElementsMatch(t, wantRemoved, removed, "removed")
		assert.ElementsMatch(t, wantChanged, changed, "changed")
		assert.True(t, slices.IsSortedFunc(added, compareLocals), "added in canonical order")
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
