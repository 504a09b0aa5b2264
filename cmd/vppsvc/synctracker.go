package main

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sirupsen/logrus"

	"github.com/vppsvc/vppsvc/agent"
	"github.com/vppsvc/vppsvc/cmd/vppsvc/internal/health"
)

// syncTracker follows each change from the moment the processor hands it to a
// renderer until VPP holds it, without hooks in the processor or the VPP
// layer. It is the agent's Observer:
//
//   - Begin (a renderer call starts) is kube-proxy's QueuedUpdate: the change
//     is waiting to reach the data plane.
//   - A change is applied once no renderer call is in flight and the agent has
//     converged (agent.Converged: VPP layer synced, nothing failed, no renderer
//     waiting for a retry). Renderer calls commit synchronously, so this is
//     checked when a call ends, and polled every pollInterval while something
//     is outstanding, because a failed item is retried by the VPP layer in the
//     background without any renderer call.
//   - Then /healthz learns of the sync (ProxyHealth.Updated), the sync
//     duration — from the oldest outstanding change to now — is observed, and
//     the health-check node port servers are synced with the services.
type syncTracker struct {
	health   *health.ProxyHealth
	servers  *health.ServiceServers
	duration prometheus.Histogram
	log      logrus.FieldLogger
	poll     time.Duration
	now      func() time.Time

	// agent is set once built: the tracker is handed to agent.New as its
	// Observer before the agent exists.
	agent *agent.Agent

	mu sync.Mutex
	// gen counts Begin calls, so that check can tell a call that started
	// while it was looking at the agent.
	gen      uint64
	inFlight int
	// queuedAt is when the oldest change not yet known to be applied
	// started; zero when nothing is outstanding.
	queuedAt time.Time
	wake     chan struct{}
}

func newSyncTracker(h *health.ProxyHealth, servers *health.ServiceServers, poll time.Duration, log logrus.FieldLogger) *syncTracker {
	return &syncTracker{
		health:  h,
		servers: servers,
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "vppsvc_sync_duration_seconds",
			Help: "Time from a change reaching the renderers until VPP holds it, per applied batch of changes.",
			// 1 ms … ~65 s: a NAT44 commit takes milliseconds; retries after VPP errors take seconds.
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 17),
		}),
		log:  log,
		poll: poll,
		now:  time.Now,
		wake: make(chan struct{}, 1),
	}
}

// Begin implements agent.Observer. It runs under the processor's lock.
func (t *syncTracker) Begin(string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.gen++
	t.inFlight++
	if t.queuedAt.IsZero() {
		t.queuedAt = t.now()
	}
	t.health.QueuedUpdate()
}

// End implements agent.Observer. A failed call needs no special case: the
// renderer is then dirty, and the agent does not converge until its retried
// resync succeeds.
func (t *syncTracker) End(renderer string, err error) {
	t.mu.Lock()
	t.inFlight--
	t.mu.Unlock()
	if err != nil {
		t.log.WithField("renderer", renderer).WithError(err).Debug("renderer call failed; waiting for its retry")
	}
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// LastSync is when a change was last applied (zero before the first).
func (t *syncTracker) LastSync() time.Time { return t.health.LastUpdated() }

// run checks for applied changes until ctx ends.
func (t *syncTracker) run(ctx context.Context) {
	tick := time.NewTicker(t.poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.wake:
		case <-tick.C:
		}
		t.check()
	}
}

// check records a sync if everything outstanding has been applied.
func (t *syncTracker) check() {
	t.mu.Lock()
	gen, outstanding := t.gen, !t.queuedAt.IsZero() && t.inFlight == 0
	t.mu.Unlock()
	// Converged takes the processor's lock; never call it holding t.mu,
	// which Begin takes under the processor's lock.
	if !outstanding || !t.agent.Converged() {
		return
	}
	t.mu.Lock()
	if t.gen != gen {
		// A call started meanwhile: the next check covers it.
		t.mu.Unlock()
		return
	}
	took := t.now().Sub(t.queuedAt)
	t.queuedAt = time.Time{}
	t.health.Updated()
	t.mu.Unlock()

	t.duration.Observe(took.Seconds())
	services := t.agent.Processor.Services()
	t.servers.Sync(services)
	t.log.WithFields(logrus.Fields{"took": took, "services": len(services)}).Debug("changes applied to VPP")
}
