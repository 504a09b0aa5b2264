package reliability_test

import (
	"strings"
	"testing"
	"time"

	"github.com/vppsvc/vppsvc/internal/leakcheck"
)

// TestStoppedAgentsAreCollected: once a property sequence's scope has
// ended, no goroutine its agents, fakes and govpp connections started is
// left, and its fake VPP and agents (with their processors and
// reconcilers) are garbage-collected: nothing — a test cleanup, a timer, a
// goroutine, a global — keeps them, so memory is bounded by one sequence
// (the property tests once kept every sequence until the test ended).
// The sequence has VPP faults, so the retry timers of the processor and
// the VPP layer have been armed.
func TestStoppedAgentsAreCollected(t *testing.T) {
	before := leakcheck.Goroutines()
	var checks []leakcheck.Check
	inScope(t, func(tb testing.TB) {
		v, a, b := propertySequence(tb, 3, 30, true)
		checks = []leakcheck.Check{
			leakcheck.Weak("the fake VPP", v),
			leakcheck.Weak("the first agent", a),
			leakcheck.Weak("the restarted agent", b),
			leakcheck.Weak("the first agent's processor", a.proc),
			leakcheck.Weak("the first agent's reconciler", a.Rec),
		}
	})
	if left := leakcheck.WaitGoroutinesGone(before, 10*time.Second); left != "" {
		t.Fatalf("goroutines left after the sequence's scope ended:\n%s", left)
	}
	if alive := leakcheck.WaitCollected(10*time.Second, checks...); len(alive) > 0 {
		t.Fatalf("not garbage-collected after the sequence's scope ended: %s", strings.Join(alive, ", "))
	}
}

// TestScopeStopsAgentsOnFailure: an agent left running when a scope ends
// (a sequence that failed half-way) is stopped then, not at the end of the
// test.
func TestScopeStopsAgentsOnFailure(t *testing.T) {
	before := leakcheck.Goroutines()
	var checks []leakcheck.Check
	inScope(t, func(tb testing.TB) {
		v := newFake(1)
		a := startAgent(tb, v, true)
		a.proc.Resync(bulkCluster(10).snapshot())
		waitDump(tb, a, v, reference(tb, bulkCluster(10).snapshot(), nil), "bulk cluster")
		checks = []leakcheck.Check{leakcheck.Weak("the fake VPP", v), leakcheck.Weak("the processor", a.proc), leakcheck.Weak("the reconciler", a.Rec)}
		// not stopped: the scope does it
	})
	if left := leakcheck.WaitGoroutinesGone(before, 10*time.Second); left != "" {
		t.Fatalf("goroutines left after the scope ended:\n%s", left)
	}
	alive := leakcheck.WaitCollected(10*time.Second, checks...)
	if len(alive) > 0 {
		t.Fatalf("not garbage-collected after the scope ended: %s", strings.Join(alive, ", "))
	}
}
