package parallel

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

func TestForCoversEveryElementOnce(t *testing.T) {
	for _, n := range []int{0, 1, MinElements - 1, MinElements, MinElements + 1, 10*chunk + 7, 100003} {
		seen := make([]atomic.Int32, n)
		For(n, func(lo, hi int) {
			if lo < 0 || hi > n || lo >= hi {
				t.Errorf("n=%d: range [%d, %d)", n, lo, hi)
				return
			}
			for i := lo; i < hi; i++ {
				seen[i].Add(1)
			}
		})
		for i := range seen {
			if c := seen[i].Load(); c != 1 {
				t.Fatalf("n=%d: element %d visited %d times", n, i, c)
			}
		}
	}
}

func TestForUsesMoreThanOneGoroutineForLargeN(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("one processor")
	}
	var calls atomic.Int32
	block := make(chan struct{})
	started := make(chan struct{}, 2)
	done := make(chan struct{})
	// Two calls must be in flight at once: each of the first two waits
	// until both have started (or the test gives up).
	go func() {
		defer close(done)
		For(4*MinElements, func(lo, hi int) {
			if calls.Add(1) <= 2 {
				started <- struct{}{}
				<-block
			}
		})
	}()
	defer func() { close(block); <-done }()
	for range 2 {
		select {
		case <-started:
		case <-time.After(10 * time.Second):
			t.Fatal("For ran one range at a time for a large n")
		}
	}
}

func TestForStaysInTheCallerForSmallN(t *testing.T) {
	calls := 0 // not atomic: -race fails if a second goroutine calls fn
	For(MinElements-1, func(lo, hi int) { calls++ })
	if calls != 1 {
		t.Fatalf("%d calls for a small n, want 1", calls)
	}
}
