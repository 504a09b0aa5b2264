package vppcfg

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
)

// largeSet is n LB mappings, every seventh with its locals out of order
// (Commit puts them in order), and n/10 ACLs with their rules unsorted.
func largeSet(n int) []Item {
	var out []Item
	for i := range n {
		m := lb(fmt.Sprintf("10.96.%d.%d:80", i/256, i%256), fmt.Sprintf("10.1.%d.%d:80", i/256, i%256), fmt.Sprintf("10.2.%d.%d:80", i/256, i%256))
		if i%7 == 0 {
			m.Locals[0], m.Locals[1] = m.Locals[1], m.Locals[0]
		}
		out = append(out, m)
		if i%10 == 0 {
			out = append(out, acl(fmt.Sprintf("acl-%d", i), 443, 80, uint16(1000+i)))
		}
	}
	return out
}

func putOps(items []Item) []core.TxnOp {
	ops := make([]core.TxnOp, 0, len(items))
	for _, it := range items {
		ops = append(ops, core.TxnOp{Put: it, Key: it.Key()})
	}
	return ops
}

// TestParallelCommitEqualsOneByOne: a commit large enough for Commit to
// validate, canonicalise and check its puts on every core leaves the store
// as committing them one at a time does, and rejects it with the error of
// the first invalid op and of the conflict of the smallest key, as one
// pass in order finds them.
func TestParallelCommitEqualsOneByOne(t *testing.T) {
	items := largeSet(4000)
	require.Greater(t, len(items), 2*2048, "large enough for two cores at least")

	big := core.NewStore()
	require.NoError(t, big.Commit("a", putOps(items), true))
	small := core.NewStore()
	for _, it := range items {
		require.NoError(t, small.Commit("a", putOps([]Item{it}), false))
	}
	assert.Equal(t, small.Desired(), big.Desired())
	assert.Len(t, big.Desired(), len(items))

	// A key put twice: the last value wins, and the first is not checked
	// (it conflicts with owner b's value of the key, the last does not).
	last := lb("10.96.0.1:80", "10.9.9.9:80")
	twice := core.NewStore()
	require.NoError(t, twice.Commit("b", putOps([]Item{last}), false))
	require.ErrorIs(t, twice.Commit("a", putOps(items), false), ErrConflict)
	require.NoError(t, twice.Commit("a", append(putOps(items), putOps([]Item{last})...), false))
	assert.Equal(t, core.Canonical(last), twice.Items[last.Key()].Item)
	assert.Equal(t, []string{"a", "b"}, twice.Items[last.Key()].Owners.Names())

	// Invalid ops: the first in op order is reported.
	bad := putOps(items)
	bad[len(bad)-5] = core.TxnOp{Put: lb("10.97.0.1:80"), Key: lb("10.97.0.1:80").Key()}
	badACL := &ACL{Name: "bad", Rules: []ACLRule{{Src: pfx("10.1.1.5/24"), Dst: pfx("0.0.0.0/0")}}}
	bad[3000] = core.TxnOp{Put: badACL, Key: badACL.Key()}
	bad[4100] = core.TxnOp{Put: lb("10.97.0.2:80"), Key: lb("10.97.0.2:80").Key()}
	err := core.NewStore().Commit("a", bad, true)
	require.ErrorIs(t, err, ErrInvalid)
	assert.Equal(t, core.Validate(badACL).Error(), err.Error())

	// Conflicts with another owner's items: the smallest key's is reported.
	var theirs []Item
	for _, i := range []int{3900, 17, 2500, 1200} {
		theirs = append(theirs, lb(fmt.Sprintf("10.96.%d.%d:80", i/256, i%256), "10.8.0.1:80"))
	}
	other := func() *core.Store {
		s := core.NewStore()
		require.NoError(t, s.Commit("b", putOps(theirs), true))
		return s
	}
	err = other().Commit("a", putOps(items), true)
	require.ErrorIs(t, err, ErrConflict)
	smallest := lb("10.96.0.17:80", "10.1.0.17:80", "10.2.0.17:80")
	assert.Equal(t, other().Commit("a", putOps([]Item{smallest}), true).Error(), err.Error())
}

// BenchmarkCommitColdResync is a ResyncTxn of 50,000 one-backend LB
// mappings and 5,000 ACLs into an empty store (a cold sync's commit,
// before the first write).
func BenchmarkCommitColdResync(b *testing.B) {
	ops := putOps(largeSet(50000))
	b.ReportAllocs()
	for b.Loop() {
		if err := core.NewStore().Commit("a", ops, true); err != nil {
			b.Fatal(err)
		}
	}
}
