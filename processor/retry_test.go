package processor

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc/model"
)

func TestBackoff(t *testing.T) {
	p := New(Config{RetryMin: 100 * time.Millisecond, RetryMax: time.Second})
	var got []time.Duration
	for n := 1; n <= 6; n++ {
		got = append(got, p.backoff(n))
	}
	assert.Equal(t, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, time.Second, time.Second}, got)
	assert.Equal(t, time.Second, p.backoff(1000), "no overflow on long outages")
}

func TestConfigDefaults(t *testing.T) {
	p := New(Config{})
	assert.Equal(t, 100*time.Millisecond, p.cfg.RetryMin)
	assert.Equal(t, 30*time.Second, p.cfg.RetryMax)
	assert.NotNil(t, p.log)
	p = New(Config{RetryMin: time.Minute, RetryMax: time.Second})
	assert.Equal(t, time.Minute, p.cfg.RetryMax, "max is never below min")
}

// TestRunRetriesUntilSuccess drives the real loop with a tiny backoff.
func TestRunRetriesUntilSuccess(t *testing.T) {
	log := newQuietLogger()
	p := New(Config{NodeName: thisNode, Logger: log, RetryMin: time.Millisecond, RetryMax: 5 * time.Millisecond})
	r := newRecorder()
	var failuresLeft atomic.Int32
	failuresLeft.Store(5)
	r.fail = func(string) bool { return failuresLeft.Add(-1) >= 0 }
	p.RegisterRenderer("flaky", r)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		p.Run(ctx)
		close(done)
	}()
	p.Resync(Snapshot{})
	p.UpdateService(makeService("default", "svc"))
	require.Eventually(t, func() bool { return p.Stats().DirtyRenderers == 0 && failuresLeft.Load() < 0 }, 5*time.Second, time.Millisecond)
	assert.Contains(t, r.state(), "default/svc")
	assert.Equal(t, uint64(5), p.Stats().RendererFailures["flaky"])

	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}

// TestRunReturnsWhenCancelled: a cancelled Run returns at once, even with a
// failed renderer whose retry is armed far in the future, and retries nothing.
func TestRunReturnsWhenCancelled(t *testing.T) {
	p := New(Config{NodeName: thisNode, Logger: newQuietLogger(), RetryMin: time.Hour, RetryMax: time.Hour})
	r := newRecorder()
	var calls atomic.Int32
	r.fail = func(string) bool { calls.Add(1); return true }
	p.RegisterRenderer("down", r)
	p.Resync(Snapshot{})
	require.Equal(t, 1, p.Stats().DirtyRenderers, "the failed resync leaves the renderer dirty")
	before := calls.Load()

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		p.Run(ctx)
		close(done)
	}()
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	assert.Equal(t, before, calls.Load(), "nothing is retried after cancel")
	assert.Equal(t, 1, p.Stats().DirtyRenderers)
}

// TestFailedCallIsFollowedByResync pins the contract api.go states: after a
// failed call the renderer gets no incremental call, and the processor's
// retry is a Resync with the whole state, not the failed call repeated.
func TestFailedCallIsFollowedByResync(t *testing.T) {
	p := New(Config{NodeName: thisNode, Logger: newQuietLogger(), RetryMin: time.Millisecond, RetryMax: time.Millisecond})
	r := newRecorder()
	var failAdd atomic.Bool
	failAdd.Store(true)
	r.fail = func(op string) bool { return op == "add" && failAdd.Swap(false) }
	p.RegisterRenderer("flaky", r)
	p.Resync(Snapshot{})
	p.UpdateService(makeService("default", "a"))
	b := makeService("default", "b")
	b.Spec.ClusterIP, b.Spec.ClusterIPs = "10.96.0.11", []string{"10.96.0.11"}
	p.UpdateService(b) // while dirty: not sent incrementally

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go p.Run(ctx)
	require.Eventually(t, func() bool { return p.Stats().DirtyRenderers == 0 }, 5*time.Second, time.Millisecond)
	cancel()

	r.mu.Lock()
	defer r.mu.Unlock()
	require.GreaterOrEqual(t, len(r.calls), 3)
	assert.Equal(t, "add default/a FAILED", r.calls[1])
	assert.True(t, strings.HasPrefix(r.calls[2], "resync"), "the call after a failure is %q, not a resync", r.calls[2])
	assert.Len(t, r.calls, 3, "nothing but the resync follows the failure: %q", r.calls)
	assert.Contains(t, r.services, model.ServiceID{Namespace: "default", Name: "a"})
	assert.Contains(t, r.services, model.ServiceID{Namespace: "default", Name: "b"})
}
