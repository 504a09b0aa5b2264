package engine

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
)

// storedStatus reports whether the book keeps a full ItemStatus for k (as
// opposed to the compact record of an applied item).
func storedStatus(r *Reconciler, k vppcfg.Key) bool {
	r.smu.RLock()
	defer r.smu.RUnlock()
	_, ok := r.statuses[k]
	return ok
}

// failingOn returns a reconciler whose driver fails every op on k while
// *failing is true, and the error it fails with.
func failingOn(k vppcfg.Key) (r *Reconciler, failing *bool, boom error) {
	f := newFakeDriver()
	failing = new(bool)
	boom = errors.New("VPPApiError: boom")
	f.fail = func(op driverapi.Op) error {
		if *failing && op.Key == k {
			return boom
		}
		return nil
	}
	return NewReconciler(f, testOptions()), failing, boom
}

// TestAppliedStatusIsImplied: an applied item keeps no full status, yet
// Status, Statuses and Stats report it as before; a failed item's status is
// kept whole, with its error and failure count; once the item recovers its
// status is implied again.
func TestAppliedStatusIsImplied(t *testing.T) {
	r, failing, boom := failingOn(vppcfg.ACLKey("x"))
	c := r.Client("pol")
	x, y := acl("x", 80), acl("y", 443)
	commit(t, c.ResyncTxn(), x, y)
	start(t, r)

	s, ok := r.Status(x.Key())
	require.True(t, ok)
	assert.Equal(t, StateApplied, s.State)
	assert.Equal(t, []string{"pol"}, s.Owners)
	assert.Equal(t, x.Key(), s.Key)
	assert.False(t, s.Since.IsZero(), "an applied status says since when")
	assert.False(t, storedStatus(r, x.Key()), "no full status is kept for an applied item")
	appliedSince := s.Since
	all := r.Statuses()
	require.Len(t, all, 2)
	assert.Equal(t, []vppcfg.Key{x.Key(), y.Key()}, []vppcfg.Key{all[0].Key, all[1].Key}, "in key order")
	assert.Equal(t, s, all[0])
	assert.Equal(t, 2, r.Stats().Applied)

	*failing = true
	commit(t, c.ResyncTxn(), acl("x", 8080), y) // the update fails
	s, _ = r.Status(x.Key())
	require.Equal(t, StateFailed, s.State)
	assert.ErrorIs(t, s.Err, boom)
	assert.Equal(t, 1, s.Failures)
	assert.False(t, s.NextRetry.IsZero())
	assert.True(t, storedStatus(r, x.Key()), "a failed item keeps its full status")
	st := r.Stats()
	assert.Equal(t, 1, st.Applied)
	assert.Equal(t, 1, st.Failed)
	ys, _ := r.Status(y.Key())
	assert.Equal(t, StateApplied, ys.State, "the other item stays applied")

	*failing = false
	commit(t, c.ResyncTxn(), x, y) // back to what VPP holds: applied again
	s, _ = r.Status(x.Key())
	require.Equal(t, StateApplied, s.State)
	assert.Zero(t, s.Failures)
	assert.Nil(t, s.Err)
	assert.True(t, s.Since.After(appliedSince) || s.Since.Equal(appliedSince))
	assert.False(t, storedStatus(r, x.Key()), "a recovered item's status is implied again")
	st = r.Stats()
	assert.Equal(t, 2, st.Applied)
	assert.Zero(t, st.Failed)

	require.NoError(t, c.ResyncTxn().Commit(context.Background()))
	_, ok = r.Status(x.Key())
	assert.False(t, ok, "a deleted item has no status")
	assert.Empty(t, r.Statuses())
	assert.Zero(t, r.Stats().Applied)
}
