package engine

import (
	"time"

	"github.com/vppsvc/vppsvc/vppcfg"
)

// backoff keeps per-key exponential retry delays between min and max. A key
// that fails again waits twice as long, up to max; success forgets it. One
// broken item thus retries slowly without holding back the others, and a
// change committed for the key retries it at once.
type backoff struct {
	min, max time.Duration
	attempts map[vppcfg.Key]int
	next     map[vppcfg.Key]time.Time
}

func newBackoff(minDelay, maxDelay time.Duration) *backoff {
	return &backoff{min: minDelay, max: maxDelay, attempts: map[vppcfg.Key]int{}, next: map[vppcfg.Key]time.Time{}}
}

// delay is the wait after the given number of consecutive failures (≥ 1).
func (b *backoff) delay(failures int) time.Duration {
	d := b.min
	for i := 1; i < failures && d < b.max; i++ {
		d *= 2
	}
	return min(d, b.max)
}

// failed records a failure of k and returns when it may be retried.
func (b *backoff) failed(k vppcfg.Key, now time.Time) time.Time {
	b.attempts[k]++
	t := now.Add(b.delay(b.attempts[k]))
	b.next[k] = t
	return t
}

// succeeded forgets k's failures.
func (b *backoff) succeeded(k vppcfg.Key) {
	delete(b.attempts, k)
	delete(b.next, k)
}

// reset makes k retryable at once (its desired value changed) but keeps the count.
func (b *backoff) reset(k vppcfg.Key) { delete(b.next, k) }

// ready reports whether k may be tried now.
func (b *backoff) ready(k vppcfg.Key, now time.Time) bool {
	t, waiting := b.next[k]
	return !waiting || !now.Before(t)
}

// failures returns the number of consecutive failures of k.
func (b *backoff) failures(k vppcfg.Key) int { return b.attempts[k] }

// nextDue returns the earliest retry time of a waiting key.
func (b *backoff) nextDue() (time.Time, bool) {
	var first time.Time
	for _, t := range b.next {
		if first.IsZero() || t.Before(first) {
			first = t
		}
	}
	return first, !first.IsZero()
}
