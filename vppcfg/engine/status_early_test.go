package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
)

// earlyScenario resyncs, through a driver streaming chunks of 3, LB
// mappings, a failing ACL and a failing mapping, ACL bindings (a merged
// kind) on an interface VPP has and one it lacks, then updates every
// mapping's local, and returns the statuses (times zeroed) and counters.
func earlyScenario(t *testing.T, settleLate bool) ([]ItemStatus, Stats) {
	t.Helper()
	f := newFakeDriver("eth0")
	f.fail = func(op driverapi.Op) error {
		if op.Key == vppcfg.ACLKey("bad") || op.Key.Name == "10.96.0.7:80/tcp" {
			return errors.New("VPPApiError: boom")
		}
		return nil
	}
	s := &streamingDriver{fakeDriver: f}
	r := NewReconciler(s, testOptions())
	r.chunk, r.settleLate = 3, settleLate
	commit(t, r.Client("svc").ResyncTxn(), append(lbs(20, 80), global, acl("a", 80), acl("bad", 81),
		binding("eth0", vppcfg.ACLInput, "a", 1), binding("eth9", vppcfg.ACLInput, "a", 1))...)
	require.NoError(t, r.Resync(context.Background()))
	require.Greater(t, len(s.chunks), 5, "the resync was streamed: %v", s.chunks)
	// Then every mapping's local changes: a full pass of updates.
	commit(t, r.Client("svc").ResyncTxn(), append(lbs(20, 8080), global, acl("a", 80), acl("bad", 81),
		binding("eth0", vppcfg.ACLInput, "a", 1), binding("eth9", vppcfg.ACLInput, "a", 1))...)
	var statuses []ItemStatus
	for _, st := range r.Statuses() {
		st.Since, st.NextRetry = time.Time{}, time.Time{}
		statuses = append(statuses, st)
	}
	stats := r.Stats()
	stats.Calls, stats.CallFailures, stats.LastResync = nil, nil, time.Time{}
	return statuses, stats
}

// TestEarlyStatusesEqualLateOnes: a pass that settles its keys' statuses
// as their chunks are recorded ends with the statuses and counters of one
// that settles them all after its last op: applied, failed (with their
// retries), pending for an interface, the merged kind's.
func TestEarlyStatusesEqualLateOnes(t *testing.T) {
	wantStatuses, wantStats := earlyScenario(t, true)
	statuses, stats := earlyScenario(t, false)
	assert.Equal(t, wantStatuses, statuses)
	assert.Equal(t, wantStats, stats)
	assert.Equal(t, 2, stats.Failed)
	assert.Equal(t, 1, stats.Pending)
}

// lookingDriver streams like streamingDriver and, before answering the
// chunk named by at, reads the status of key.
type lookingDriver struct {
	*streamingDriver
	r   *Reconciler
	at  int
	key vppcfg.Key
	saw ItemStatus
}

func (d *lookingDriver) ApplyStream(ctx context.Context, chunks <-chan []driverapi.Op, results chan<- []driverapi.OpResult) {
	n := 0
	for ops := range chunks {
		if n++; n == d.at {
			// The engine hands a chunk over after recording the one two
			// before: the first three are recorded (and settled) by now.
			d.saw, _ = d.r.Status(d.key)
		}
		results <- d.Apply(ctx, ops)
	}
}

// TestEarlyStatusesWhileVPPWrites: while the driver still writes a full
// pass's later chunks, the keys of its first chunk are applied already
// (their statuses no longer wait for the pass's last reply); every key
// applied, the pass ends with the statuses of one settling late.
func TestEarlyStatusesWhileVPPWrites(t *testing.T) {
	var want []ItemStatus
	for _, late := range []bool{true, false} {
		d := &lookingDriver{streamingDriver: &streamingDriver{fakeDriver: newFakeDriver()}, at: 5}
		r := NewReconciler(d, testOptions())
		d.r, d.key = r, global.Key()
		r.chunk, r.settleLate = 4, late
		commit(t, r.Client("svc").ResyncTxn(), append(lbs(30, 80), global)...)
		require.NoError(t, r.Resync(context.Background()))
		if late {
			assert.Equal(t, StatePending, d.saw.State, "settled after the last op: %v", d.saw)
		} else {
			assert.Equal(t, StateApplied, d.saw.State, "the first chunk's key while the fifth is written: %v", d.saw)
		}
		var got []ItemStatus
		for _, st := range r.Statuses() {
			got = append(got, ItemStatus{Key: st.Key, Owners: st.Owners, State: st.State})
		}
		if late {
			want = got
		}
		assert.Equal(t, want, got)
		assert.Len(t, got, 31)
		assert.Equal(t, 31, r.Stats().Applied)
	}
}

// TestSettleEarlyTrustsACreateOnlyWhenNothingElseSays: a create whose
// result was a success is settled applied without looking the applied view
// up, but only when the key has no failure (another op of the batch) and
// the plan keeps it neither pending nor blocked; otherwise it is settled
// as refreshDesired decides.
func TestSettleEarlyTrustsACreateOnlyWhenNothingElseSays(t *testing.T) {
	item := lb("10.96.0.1:80", "10.1.1.1:80")
	k := item.Key()
	none := func(*Reconciler, *opPlan) {}
	cases := []struct {
		name  string
		setup func(r *Reconciler, p *opPlan)
		err   error // the create's result
		want  ItemState
	}{
		{"nothing else", none, nil, StateApplied},
		// Not recorded here, so not applied: what refreshDesired finds.
		{"the create failed", none, errors.New("boom"), StatePending},
		{"a failure of the key in the batch", func(r *Reconciler, _ *opPlan) { r.lastErr[k] = errors.New("boom") }, nil, StateFailed},
		{"pending in the plan", func(_ *Reconciler, p *opPlan) { p.Pending[k] = "interface eth9 missing" }, nil, StatePending},
		{"blocked in the plan", func(_ *Reconciler, p *opPlan) { p.Blocked[k] = errors.New("foreign") }, nil, StateFailed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReconciler(newFakeDriver("eth0"), testOptions())
			p := &opPlan{Pending: map[vppcfg.Key]string{}, Blocked: map[vppcfg.Key]error{}}
			tc.setup(r, p)
			r.mu.Lock()
			r.beginEarly(p, r.store.Version())
			ops := []task{{Op: driverapi.Op{Type: driverapi.OpCreate, Key: k, Item: item}}}
			r.settleEarly(ops, []driverapi.OpResult{{Err: tc.err}})
			r.mu.Unlock()
			st, ok := r.Status(k)
			require.True(t, ok)
			assert.Equal(t, tc.want, st.State)
		})
	}
}
