// Package parallel runs the pure, per-element steps of a cold sync (a
// service's conversion, its rendering) on every core the process may use.
// Before an agent's first write VPP waits and its core idles; a sync of
// tens of thousands of services converts them several times faster on all
// cores than on one.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// MinElements is the smallest n For spreads over goroutines: below it the
// goroutines cost more than they save.
const MinElements = 2048

// chunk is how many elements a goroutine takes at a time: large enough that
// taking one is cheap, small enough that a goroutine slowed by the garbage
// collector or another process does not leave the rest waiting.
const chunk = 256

// For calls fn(lo, hi) for consecutive ranges that together cover [0, n)
// exactly once, on up to GOMAXPROCS goroutines when n is at least
// MinElements and in the caller's goroutine otherwise. It returns when
// every call has returned. fn must be safe to call concurrently on
// disjoint ranges.
func For(n int, fn func(lo, hi int)) {
	workers := min(runtime.GOMAXPROCS(0), (n+chunk-1)/chunk)
	if n < MinElements || workers < 2 {
		if n > 0 {
			fn(0, n)
		}
		return
	}
	var next atomic.Int64
	run := func() {
		for {
			hi := int(next.Add(chunk))
			lo := hi - chunk
			if lo >= n {
				return
			}
			fn(lo, min(hi, n))
		}
	}
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(run)
	}
	run()
	wg.Wait()
}
