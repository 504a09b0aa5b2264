package engine

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
)

// streamingDriver is the fake driver taking ops in chunks
// (driverapi.Streamer): each chunk is one Apply of the fake.
type streamingDriver struct {
	*fakeDriver
	// chunks are the sizes of the chunks handed over, in order.
	chunks []int
	// running counts ApplyStream calls that have not returned.
	running atomic.Int32
	// holdFirst makes the first chunk of a call wait, at most a second,
	// for the next chunk before it is answered; overlapped records whether
	// the next chunk came.
	holdFirst  bool
	overlapped bool
	// dropAfter, when positive, makes ApplyStream return after that many
	// chunks without answering the rest (a driver breaking the contract).
	dropAfter int
}

func (s *streamingDriver) ApplyStream(ctx context.Context, chunks <-chan []driverapi.Op, results chan<- []driverapi.OpResult) {
	s.running.Add(1)
	defer s.running.Add(-1)
	n := 0
	for ops := range chunks {
		n++
		if s.dropAfter > 0 && n > s.dropAfter {
			return
		}
		s.chunks = append(s.chunks, len(ops))
		if n == 1 && s.holdFirst {
			select {
			case next, ok := <-chunks:
				s.overlapped = ok
				results <- s.Apply(ctx, ops)
				if !ok {
					return
				}
				ops, n = next, n+1
				s.chunks = append(s.chunks, len(ops))
			case <-time.After(time.Second):
			}
		}
		results <- s.Apply(ctx, ops)
	}
}

// lbs returns n one-backend LB mappings, the i-th (from 1) at
// 10.96.i/256.i%256:80 with its backend at 10.1.i/256.i%256 (n < 65,536).
func lbs(n int, backendPort int) []vppcfg.Item {
	out := make([]vppcfg.Item, 0, n)
	for i := 1; i <= n; i++ {
		out = append(out, lb(fmt.Sprintf("10.96.%d.%d:80", i/256, i%256), fmt.Sprintf("10.1.%d.%d:%d", i/256, i%256, backendPort)))
	}
	return out
}

// streamScenario commits creates, updates of several parts per key,
// failures and a recreate through d, chunked by 3 where d streams, and
// returns the op log, what VPP holds and the statuses.
func streamScenario(t *testing.T, f *fakeDriver, d driverapi.Driver) (log []string, vpp string, statuses []ItemStatus) {
	t.Helper()
	f.fail = func(op driverapi.Op) error {
		if op.Key == vppcfg.ACLKey("bad") || (op.Type == driverapi.OpUpdate && op.Key.Name == "10.96.0.4:80/tcp") {
			return errors.New("VPPApiError: boom")
		}
		return nil
	}
	r := NewReconciler(d, testOptions())
	r.chunk = 3
	c := r.Client("svc")
	commit(t, c.ResyncTxn(), append(lbs(10, 80), global, acl("a", 80), acl("bad", 81), cnat("10.96.1.1:80", vppcfg.CNATLBDefault, "10.1.1.1:80"))...)
	require.NoError(t, r.Resync(context.Background()))
	// Two locals each (an update of two parts per key), a recreate of the
	// cnat translation, one LB mapping and one ACL gone.
	var next []vppcfg.Item
	for i, it := range lbs(9, 8080) {
		m := it.(*vppcfg.NAT44LBMapping)
		m.Locals = append(m.Locals, vppcfg.NAT44LBLocal{Addr: ap(fmt.Sprintf("10.2.0.%d:8080", i+1)), Probability: 10})
		vppcfg.SortLBLocals(m.Locals)
		next = append(next, m)
	}
	commit(t, c.ResyncTxn(), append(next, global, acl("bad", 81), cnat("10.96.1.1:80", vppcfg.CNATLBMaglev, "10.1.1.1:80"))...)
	for _, s := range r.Statuses() {
		s.Since, s.NextRetry = time.Time{}, time.Time{}
		statuses = append(statuses, s)
	}
	return f.takeLog(), f.dump(), statuses
}

// TestStreamedBatchesEqualOneCall: a driver handed the ops in chunks ends
// with the same ops, in the same order, the same VPP and the same statuses
// as one handed each batch in one call, failures and multi-part updates
// included; and its ApplyStream has returned when the commit does.
func TestStreamedBatchesEqualOneCall(t *testing.T) {
	one := newFakeDriver()
	wantLog, wantVPP, wantStatuses := streamScenario(t, one, one)
	s := &streamingDriver{fakeDriver: newFakeDriver()}
	log, vpp, statuses := streamScenario(t, s.fakeDriver, s)
	assert.Equal(t, wantLog, log)
	assert.Equal(t, wantVPP, vpp)
	assert.Equal(t, wantStatuses, statuses)
	assert.Greater(t, len(s.chunks), 4, "chunks handed over: %v", s.chunks)
	for _, n := range s.chunks {
		// 3, or up to 5 where a key's three updates (a local removed, two
		// added) would straddle the cut.
		assert.LessOrEqual(t, n, 5, "chunks %v", s.chunks)
	}
	assert.Zero(t, s.running.Load(), "ApplyStream still running")
}

// TestStreamHandsTheNextChunkBeforeTheFirstIsAnswered: the engine hands
// the driver the second chunk without waiting for the first one's results,
// so VPP works on one chunk while the layer prepares the next.
func TestStreamHandsTheNextChunkBeforeTheFirstIsAnswered(t *testing.T) {
	s := &streamingDriver{fakeDriver: newFakeDriver(), holdFirst: true}
	r := NewReconciler(s, testOptions())
	r.chunk = 4
	c := r.Client("svc")
	commit(t, c.ResyncTxn(), append(lbs(20, 80), global)...)
	require.NoError(t, r.Resync(context.Background()))
	assert.True(t, s.overlapped, "the second chunk came only after the first was answered")
	assert.Equal(t, 21, r.Stats().Applied)
	assert.Zero(t, s.running.Load(), "ApplyStream still running")
}

// TestStreamDriverThatStopsAnswering: a driver whose ApplyStream returns
// without answering every chunk fails the unanswered ops (retried later)
// instead of leaving the pass waiting.
func TestStreamDriverThatStopsAnswering(t *testing.T) {
	s := &streamingDriver{fakeDriver: newFakeDriver(), dropAfter: 2}
	opts := testOptions()
	opts.RetryMin, opts.RetryMax = time.Hour, time.Hour
	r := NewReconciler(s, opts)
	r.chunk = 4
	commit(t, r.Client("svc").ResyncTxn(), append(lbs(20, 80), global)...)
	done := make(chan error, 1)
	go func() { done <- r.Resync(context.Background()) }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("the pass waits for results the driver never sends")
	}
	st := r.Stats()
	assert.Equal(t, 8, st.Applied, "the two chunks answered")
	assert.Equal(t, 13, st.Failed, "the ops of the chunks not answered")
	failed, _ := r.Status(lbs(20, 80)[19].Key())
	assert.ErrorIs(t, failed.Err, errNoResult)
}

// chunkEnd cuts between keys only, and never next to a merged op.
func TestChunkEnd(t *testing.T) {
	k := func(n string) vppcfg.Key { return vppcfg.ACLKey(n) }
	op := func(n string) task { return task{Op: driverapi.Op{Key: k(n)}} }
	merged := func(n string) task { return task{Op: driverapi.Op{Key: k(n)}, covers: []vppcfg.Key{k(n)}} }
	for _, tc := range []struct {
		ops  []task
		size int
		want int
	}{
		{[]task{op("a"), op("b")}, 3, 2},
		{[]task{op("a"), op("b"), op("c"), op("d")}, 2, 2},
		{[]task{op("a"), op("b"), op("b"), op("c")}, 2, 3},
		{[]task{op("a"), merged("m"), merged("n"), op("c"), op("d")}, 1, 4},
		{[]task{op("a"), op("a"), op("a")}, 1, 3},
	} {
		assert.Equal(t, tc.want, chunkEnd(tc.ops, tc.size), "%v / %d", opStrings(tc.ops), tc.size)
	}
}
