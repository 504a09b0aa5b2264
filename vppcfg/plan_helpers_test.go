package vppcfg

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
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

// TestLBNeedsRecreate: an LB mapping changes its locals in place, except
// that one with session affinity is re-created when it loses or re-weights
// a local, which flushes the affinity records pointing at the local.
func TestLBNeedsRecreate(t *testing.T) {
	m := func(affinity uint32, locals ...string) *NAT44LBMapping {
		v := lb("10.96.0.1:80", locals...)
		v.Affinity = affinity
		return v
	}
	reweighted := m(60, "10.1.2.2:80", "10.1.2.3:80", "10.1.2.4:80")
	reweighted.Locals[0].Probability = 2
	for _, tc := range []struct {
		name     string
		old, new *NAT44LBMapping
		want     bool
	}{
		{"local removed without affinity", m(0, "10.1.2.2:80", "10.1.2.3:80", "10.1.2.4:80"), m(0, "10.1.2.2:80", "10.1.2.3:80"), false},
		{"local added with affinity", m(60, "10.1.2.2:80", "10.1.2.3:80"), m(60, "10.1.2.2:80", "10.1.2.3:80", "10.1.2.4:80"), false},
		{"local removed with affinity", m(60, "10.1.2.2:80", "10.1.2.3:80", "10.1.2.4:80"), m(60, "10.1.2.2:80", "10.1.2.3:80"), true},
		{"local replaced with affinity", m(60, "10.1.2.2:80", "10.1.2.3:80"), m(60, "10.1.2.2:80", "10.1.2.4:80"), true},
		{"weight changed with affinity", m(60, "10.1.2.2:80", "10.1.2.3:80", "10.1.2.4:80"), reweighted, true},
		{"affinity changed", m(60, "10.1.2.2:80", "10.1.2.3:80"), m(30, "10.1.2.2:80", "10.1.2.3:80"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, core.Describe(KindNAT44LBMapping).NeedsRecreate(tc.old, tc.new))
		})
	}
}

// TestMergeKept: a kept name goes before the first desired name that
// follows it in VPP's list, so that a list VPP holds stays as it is.
func TestMergeKept(t *testing.T) {
	for _, tc := range []struct {
		desired, kept, cur, want []string
	}{
		{desired: []string{"a", "z"}, kept: []string{"b"}, cur: []string{"a", "b", "z"}, want: []string{"a", "b", "z"}},
		{desired: []string{"a", "z"}, kept: []string{"b", "c"}, cur: []string{"b", "a", "c", "z"}, want: []string{"b", "a", "c", "z"}},
		{desired: []string{"a", "new", "z"}, kept: []string{"b"}, cur: []string{"a", "b", "z"}, want: []string{"a", "new", "b", "z"}},
		{desired: []string{"a"}, kept: []string{"b"}, cur: []string{"a", "b"}, want: []string{"a", "b"}},
		{desired: nil, kept: []string{"b"}, cur: []string{"b"}, want: []string{"b"}},
	} {
		assert.Equal(t, tc.want, mergeKept(tc.desired, tc.kept, tc.cur), "%v + %v in %v", tc.desired, tc.kept, tc.cur)
	}
}
