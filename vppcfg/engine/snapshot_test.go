package engine

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
)

func TestDesiredOwnedAndNextRetry(t *testing.T) {
	f := newFakeDriver()
	failing := true
	f.fail = func(op driverapi.Op) error {
		if op.Key.Kind == vppcfg.KindACL && failing {
			return errors.New("VPPApiError: boom")
		}
		return nil
	}
	opts := testOptions()
	opts.RetryMin, opts.RetryMax = time.Hour, time.Hour
	r := NewReconciler(f, opts)
	shared := acl("shared", 80)
	commit(t, r.Client("b").ResyncTxn(), shared)
	before := time.Now()
	commit(t, r.Client("a").ResyncTxn(), shared, global)
	start(t, r)

	got := r.DesiredOwned()
	require.Len(t, got, 2)
	assert.Equal(t, global.Key(), got[0].Key, "key order: kind first")
	assert.Equal(t, []string{"a", "b"}, got[1].Owners)

	s, _ := r.Status(shared.Key())
	require.Equal(t, StateFailed, s.State)
	assert.WithinRange(t, s.NextRetry, before.Add(time.Hour), time.Now().Add(time.Hour))
	g, _ := r.Status(global.Key())
	assert.True(t, g.NextRetry.IsZero(), "an applied item has no retry")

	got[1].Owners[0] = "mutated"
	assert.Equal(t, []string{"a", "b"}, r.DesiredOwned()[1].Owners, "owners are copied")
}
