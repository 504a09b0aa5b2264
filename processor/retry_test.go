package processor

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

func TestRunReturnsWhenIdleAndCancelled(t *testing.T) {
	p, _ := newTestProcessor(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p.Run(ctx) // must not block
}
