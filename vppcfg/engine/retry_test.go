package engine

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/vppsvc/vppsvc/vppcfg"
)

func TestBackoff(t *testing.T) {
	b := newBackoff(10*time.Millisecond, 50*time.Millisecond)
	k, other := vppcfg.ACLKey("a"), vppcfg.ACLKey("b")
	now := time.Unix(1000, 0)
	assert.True(t, b.ready(k, now))
	var delays []time.Duration
	for range 5 {
		delays = append(delays, b.failed(k, now).Sub(now))
	}
	assert.Equal(t, []time.Duration{10, 20, 40, 50, 50}, scale(delays, time.Millisecond), "doubles up to the max")
	assert.False(t, b.ready(k, now))
	assert.True(t, b.ready(k, now.Add(50*time.Millisecond)))
	assert.True(t, b.ready(other, now), "keys back off independently")
	due, ok := b.nextDue()
	assert.True(t, ok)
	assert.Equal(t, now.Add(50*time.Millisecond), due)

	b.reset(k)
	assert.True(t, b.ready(k, now), "a new desired value is tried at once")
	assert.Equal(t, 5, b.failures(k), "but keeps its failure count")
	b.succeeded(k)
	assert.Zero(t, b.failures(k))
	_, ok = b.nextDue()
	assert.False(t, ok)
}

func scale(ds []time.Duration, unit time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d / unit
	}
	return out
}

func TestWorthWarningThinsOutRepeats(t *testing.T) {
	var warned []int
	for i := 1; i <= 20; i++ {
		if worthWarning(i) {
			warned = append(warned, i)
		}
	}
	if want := []int{1, 2, 4, 8, 16}; !slices.Equal(warned, want) {
		t.Fatalf("warned at %v, want %v", warned, want)
	}
}
