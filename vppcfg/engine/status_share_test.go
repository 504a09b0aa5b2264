package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc/vppcfg"
)

// TestImpliedStatusesShareRecords: keys one pass applies for the same
// owners share one implied-status record; when one of them fails and
// recovers, or gains an owner, the others' statuses stay as they were.
func TestImpliedStatusesShareRecords(t *testing.T) {
	r, failing, _ := failingOn(vppcfg.ACLKey("x"))
	c := r.Client("pol")
	x, y, z := acl("x", 80), acl("y", 443), acl("z", 53)
	commit(t, c.ResyncTxn(), x, y, z)
	start(t, r)

	record := func(k vppcfg.Key) *impliedStatus {
		r.smu.RLock()
		defer r.smu.RUnlock()
		return r.appliedStatuses[k]
	}
	require.NotNil(t, record(x.Key()))
	assert.Same(t, record(x.Key()), record(y.Key()), "one pass, one owner: one record")
	assert.Same(t, record(y.Key()), record(z.Key()))
	ys, _ := r.Status(y.Key())

	*failing = true
	commit(t, c.ResyncTxn(), acl("x", 8080), y, z)
	xs, _ := r.Status(x.Key())
	require.Equal(t, StateFailed, xs.State)
	*failing = false
	commit(t, c.ResyncTxn(), x, y, z)
	xs, _ = r.Status(x.Key())
	require.Equal(t, StateApplied, xs.State)

	commit(t, r.Client("dns").Txn(), acl("z", 53))
	zs, _ := r.Status(z.Key())
	assert.Equal(t, []string{"dns", "pol"}, zs.Owners)

	ys2, _ := r.Status(y.Key())
	assert.Equal(t, ys, ys2, "y's status is untouched by x's failure and z's new owner")
	assert.Equal(t, ys.Since.UnixNano(), ys2.Since.UnixNano())
	assert.Equal(t, []string{"pol"}, ys2.Owners)
}
