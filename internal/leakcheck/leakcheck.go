// Package leakcheck tells a test whether what it stopped is really gone:
// no goroutine started since a snapshot is left, and objects it held weak
// pointers to have been garbage-collected. Both waits are bounded.
package leakcheck

import (
	"bytes"
	"runtime"
	"slices"
	"strings"
	"time"
	"weak"
)

// Goroutines returns the stack of every goroutine by its header line
// ("goroutine N"): a snapshot to compare with later.
func Goroutines() map[string]string {
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

// WaitGoroutinesGone waits until every goroutine not in before has ended,
// or timeout passes; it returns the stacks of those left ("" when none).
func WaitGoroutinesGone(before map[string]string, timeout time.Duration) string {
	var left []string
	for deadline := time.Now().Add(timeout); ; time.Sleep(5 * time.Millisecond) {
		left = left[:0]
		for id, stack := range Goroutines() {
			if _, ok := before[id]; !ok {
				left = append(left, stack)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
	}
	slices.Sort(left)
	return strings.Join(left, "\n\n")
}

// Check names an object and tells whether it is still alive.
type Check struct {
	What  string
	Alive func() bool
}

// Weak returns the Check of p without keeping p alive.
func Weak[T any](what string, p *T) Check {
	w := weak.Make(p)
	return Check{What: what, Alive: func() bool { return w.Value() != nil }}
}

// WaitCollected runs the garbage collector until every checked object is
// gone, or timeout passes; it returns what is still alive, sorted.
func WaitCollected(timeout time.Duration, checks ...Check) []string {
	var alive []string
	for deadline := time.Now().Add(timeout); ; time.Sleep(10 * time.Millisecond) {
		runtime.GC()
		alive = alive[:0]
		for _, c := range checks {
			if c.Alive() {
				alive = append(alive, c.What)
			}
		}
		if len(alive) == 0 || time.Now().After(deadline) {
			slices.Sort(alive)
			return alive
		}
	}
}
