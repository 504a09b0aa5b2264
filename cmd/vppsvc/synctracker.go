package main

import (
	"context"
	"maps"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/vppsvc/vppsvc/agent"
	"github.com/vppsvc/vppsvc/agent/inspect"
	"github.com/vppsvc/vppsvc/healthcheck"
	"github.com/vppsvc/vppsvc/processor"
	"github.com/vppsvc/vppsvc/renderer/ipv6"
)

// syncTracker follows each change from the moment the processor hands it to a
// renderer until VPP holds it, without hooks in the processor or the VPP
// layer, and keeps kube-proxy's sync metrics (metrics_kubeproxy.go). It is
// the agent's Observer:
//
//   - Begin (a renderer call starts) is kube-proxy's QueuedUpdate: the change
//     is waiting to reach the data plane. A renderer's Resync is a full sync,
//     any other call a partial one.
//   - A change is applied once no renderer call is in flight and the agent has
//     done all it can (agent.ConvergedExceptInterfaces: VPP layer synced,
//     nothing failed, no renderer waiting for a retry). Renderer calls commit
//     synchronously, so this is checked when a call ends, and polled every
//     pollInterval while something is outstanding, because a failed item is
//     retried by the VPP layer in the background without any renderer call.
//   - Then /healthz learns of the sync (ProxyHealth.Updated), the sync
//     durations — from the oldest outstanding change to now, per IP family —
//     are observed, the network programming latency of the changes that
//     carried a trigger time, and the health-check node port servers are
//     synced with the services.
//
// Items waiting for an interface do not hold the sync (they wait for the
// CNI, not for vppsvc); every poll hands their count to ProxyHealth, which
// fails /healthz once they have waited longer than its grace period.
type syncTracker struct {
	health  *healthcheck.ProxyHealth
	servers *healthcheck.ServiceServers
	metrics *kubeProxyMetrics
	log     logrus.FieldLogger
	poll    time.Duration
	now     func() time.Time
	started time.Time

	// agent is set once built: the tracker is handed to agent.New as its
	// Observer before the agent exists.
	agent *agent.Agent

	mu sync.Mutex
	// gen counts Begin calls, so that check can tell a call that started
	// while it was looking at the agent.
	gen      uint64
	inFlight int
	// queuedAt is, per IP family, when the oldest change not yet known to be
	// applied started; full marks a batch that holds a full resync.
	queuedAt map[string]time.Time
	full     map[string]bool
	// lastQueued and lastSync are the last Begin and the last applied sync
	// per IP family (kube-proxy's last queued and last sync timestamps).
	lastQueued, lastSync map[string]time.Time
	// triggers are the trigger times of changes not yet applied, from the
	// informers' watch streams (triggertimes.go).
	triggers []trigger
	// settled are the processor's event counts when everything was last
	// applied: the events since are kube-proxy's pending changes.
	settled map[string]uint64
	wake    chan struct{}
}

func newSyncTracker(h *healthcheck.ProxyHealth, servers *healthcheck.ServiceServers, poll time.Duration, log logrus.FieldLogger) *syncTracker {
	if h.Log == nil {
		h.Log = log
	}
	h.Start()
	return &syncTracker{
		health:     h,
		servers:    servers,
		metrics:    newKubeProxyMetrics(),
		log:        log,
		poll:       poll,
		now:        time.Now,
		started:    time.Now(),
		queuedAt:   map[string]time.Time{},
		full:       map[string]bool{},
		lastQueued: map[string]time.Time{},
		lastSync:   map[string]time.Time{},
		settled:    map[string]uint64{},
		wake:       make(chan struct{}, 1),
	}
}

// familyOf names the IP family a renderer programs, as kube-proxy's
// ip_family label does: the IPv6 renderer IPv6, the IPv4 ones (nat44 or
// cnat4) and any other IPv4.
func familyOf(renderer string) string {
	if renderer == ipv6.Name {
		return "IPv6"
	}
	return "IPv4"
}

// Begin implements agent.Observer. It runs under the processor's lock.
func (t *syncTracker) Begin(renderer string) { t.begin(renderer, false) }

// BeginFullSync implements agent.FullSyncObserver.
func (t *syncTracker) BeginFullSync(renderer string) { t.begin(renderer, true) }

func (t *syncTracker) begin(renderer string, full bool) {
	fam := familyOf(renderer)
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	t.gen++
	t.inFlight++
	if _, ok := t.queuedAt[fam]; !ok {
		t.queuedAt[fam] = now
	}
	t.full[fam] = t.full[fam] || full
	t.lastQueued[fam] = now
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

// check records a sync if everything outstanding has been applied, observes
// the latency of applied changes, and updates the interface waits.
func (t *syncTracker) check() {
	// The processor's stats first: they take its lock, so every event they
	// count has made its renderer calls (and Begin) by now.
	ps := t.agent.Processor.Stats()
	w := inspect.InterfaceWaits(t.agent.Reconciler)
	t.health.WaitingForInterfaces(w.Items, w.Since)
	defer t.health.Status() // logs a change of /healthz's verdict

	t.mu.Lock()
	gen, outstanding, idle := t.gen, len(t.queuedAt) > 0, t.inFlight == 0
	t.mu.Unlock()
	if !idle {
		return
	}
	// Converged takes the processor's lock; never call it holding t.mu,
	// which Begin takes under the processor's lock.
	if outstanding && !t.agent.ConvergedExceptInterfaces() {
		return
	}
	t.mu.Lock()
	if t.gen != gen {
		// A call started meanwhile: the next check covers it.
		t.mu.Unlock()
		return
	}
	now := t.now()
	t.drainTriggers(now, ps)
	maps.Copy(t.settled, ps.Events)
	if !outstanding {
		t.mu.Unlock()
		return
	}
	var took time.Duration
	for fam, at := range t.queuedAt {
		d := now.Sub(at)
		took = max(took, d)
		t.metrics.observeSync(fam, d, t.full[fam])
		t.lastSync[fam] = now
	}
	clear(t.queuedAt)
	clear(t.full)
	t.health.Updated()
	t.mu.Unlock()

	services := t.agent.Processor.Services()
	t.servers.Sync(services)
	t.log.WithFields(logrus.Fields{"took": took, "services": len(services)}).Debug("changes applied to VPP")
}

// drainTriggers observes the network programming latency of every change
// the processor has handled, now that VPP holds what it changed. Called
// with mu held.
func (t *syncTracker) drainTriggers(now time.Time, ps processor.Stats) {
	kept := t.triggers[:0]
	for _, tr := range t.triggers {
		if !tr.handled(ps, now) {
			kept = append(kept, tr)
			continue
		}
		if d := now.Sub(tr.at); d >= 0 {
			t.metrics.netProg.WithLabelValues(tr.family).Observe(d.Seconds())
		}
	}
	clear(t.triggers[len(kept):])
	t.triggers = kept
}

// snapshot is what the metrics read of the tracker at scrape time.
type trackerSnapshot struct {
	lastQueued, lastSync map[string]time.Time
	pending              map[string]uint64
}

func (t *syncTracker) snapshot() trackerSnapshot {
	var events map[string]uint64
	if t.agent != nil {
		events = t.agent.Processor.Stats().Events
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s := trackerSnapshot{lastQueued: maps.Clone(t.lastQueued), lastSync: maps.Clone(t.lastSync), pending: map[string]uint64{}}
	for kind, n := range events {
		if n > t.settled[kind] {
			s.pending[kind] = n - t.settled[kind]
		}
	}
	if t.agent != nil {
		// kube-proxy stamps the last queued time when its sync loop starts.
		for name := range t.agent.Renderers {
			if fam := familyOf(name); s.lastQueued[fam].IsZero() {
				s.lastQueued[fam] = t.started
			}
		}
	}
	return s
}
