package reliability_test

import (
	"bytes"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"weak"

	"github.com/vppsvc/vppsvc/fakevpp"
	"github.com/vppsvc/vppsvc/processor"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// TestStoppedAgentsAreCollected: once a property sequence's scope has
// ended, no goroutine its agents, fakes and govpp connections started is
// left, and its fake VPP and agents (with their processors and
// reconcilers) are garbage-collected: nothing — a test cleanup, a timer, a
// goroutine, a global — keeps them, so memory is bounded by one sequence
// (issue 19: the property tests kept every sequence until the test ended).
// The sequence has VPP faults, so the retry timers of the processor and
// the VPP layer have been armed.
func TestStoppedAgentsAreCollected(t *testing.T) {
	before := goroutineStacks()
	var collected []func() (string, bool)
	watch := func(what string, alive func() bool) {
		collected = append(collected, func() (string, bool) { return what, !alive() })
	}
	inScope(t, func(tb testing.TB) {
		v, a, b := propertySequence(tb, 3, 30, true)
		wv, wa, wb := weak.Make(v), weak.Make(a), weak.Make(b)
		wp, wr := weak.Make(a.proc), weak.Make(a.Rec)
		watch("the fake VPP", func() bool { return wv.Value() != nil })
		watch("the first agent", func() bool { return wa.Value() != nil })
		watch("the restarted agent", func() bool { return wb.Value() != nil })
		watch("the first agent's processor", func() bool { return wp.Value() != nil })
		watch("the first agent's reconciler", func() bool { return wr.Value() != nil })
	})
	if left := waitGoroutinesGone(before, 10*time.Second); left != "" {
		t.Fatalf("goroutines left after the sequence's scope ended:\n%s", left)
	}
	if alive := waitCollected(10*time.Second, collected); len(alive) > 0 {
		t.Fatalf("not garbage-collected after the sequence's scope ended: %s", strings.Join(alive, ", "))
	}
}

// TestScopeStopsAgentsOnFailure: an agent left running when a scope ends
// (a sequence that failed half-way) is stopped then, not at the end of the
// test.
func TestScopeStopsAgentsOnFailure(t *testing.T) {
	before := goroutineStacks()
	var wv weak.Pointer[fakevpp.VPP]
	var wp weak.Pointer[processor.Processor]
	var wr weak.Pointer[vppcfg.Reconciler]
	inScope(t, func(tb testing.TB) {
		v := newFake(1)
		a := startAgent(tb, v, true)
		a.proc.Resync(bulkCluster(10).snapshot())
		waitDump(tb, a, v, reference(tb, bulkCluster(10).snapshot(), nil), "bulk cluster")
		wv, wp, wr = weak.Make(v), weak.Make(a.proc), weak.Make(a.Rec)
		// not stopped: the scope does it
	})
	if left := waitGoroutinesGone(before, 10*time.Second); left != "" {
		t.Fatalf("goroutines left after the scope ended:\n%s", left)
	}
	alive := waitCollected(10*time.Second, []func() (string, bool){
		func() (string, bool) { return "the fake VPP", wv.Value() == nil },
		func() (string, bool) { return "the processor", wp.Value() == nil },
		func() (string, bool) { return "the reconciler", wr.Value() == nil },
	})
	if len(alive) > 0 {
		t.Fatalf("not garbage-collected after the scope ended: %s", strings.Join(alive, ", "))
	}
}

// goroutineStacks returns the stack of every goroutine (system goroutines
// aside) by its header line "goroutine N".
func goroutineStacks() map[string]string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	out := map[string]string{}
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		id, _, _ := strings.Cut(string(g), " [")
		out[id] = string(g)
	}
	return out
}

// waitGoroutinesGone waits until every goroutine started since before has
// ended, or timeout passes; it returns the stacks of those left.
func waitGoroutinesGone(before map[string]string, timeout time.Duration) string {
	var left []string
	waitFor(timeout, func() bool {
		left = left[:0]
		for id, stack := range goroutineStacks() {
			if _, ok := before[id]; !ok {
				left = append(left, stack)
			}
		}
		return len(left) == 0
	})
	slices.Sort(left)
	return strings.Join(left, "\n\n")
}

// waitCollected runs the garbage collector until every check reports its
// object collected, or timeout passes; it returns the objects still alive.
func waitCollected(timeout time.Duration, checks []func() (string, bool)) []string {
	var alive []string
	deadline := time.Now().Add(timeout)
	for {
		runtime.GC()
		alive = alive[:0]
		for _, c := range checks {
			if what, ok := c(); !ok {
				alive = append(alive, what)
			}
		}
		if len(alive) == 0 || time.Now().After(deadline) {
			return alive
		}
		time.Sleep(10 * time.Millisecond)
	}
}
