package engine

import (
	"fmt"
	"slices"
	"time"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
)

// ItemState is where an item stands between desired and applied.
type ItemState uint8

const (
	// StatePending: not applied yet, for a reason that is not an error (a
	// missing interface, a dependency, a delete held for an owner that has
	// not resynced, or simply not reconciled yet).
	StatePending ItemState = iota + 1
	// StateApplied: VPP holds the desired value.
	StateApplied
	// StateFailed: the last VPP operation failed (it is retried with
	// backoff) or the item conflicts with an object the layer must not touch.
	StateFailed
)

func (s ItemState) String() string {
	switch s {
	case StatePending:
		return "pending"
	case StateApplied:
		return "applied"
	case StateFailed:
		return "failed"
	}
	return "state?"
}

// ItemStatus is the reconciliation status of one key.
type ItemStatus struct {
	Key    vppcfg.Key
	Owners []string
	State  ItemState
	// Deleting marks a key nobody desires any more that is still in VPP.
	Deleting bool
	// Reason says why a pending item waits.
	Reason string
	// Err is the last error of a failed item.
	Err error
	// Failures counts consecutive failed attempts.
	Failures int
	// NextRetry is when a failed operation is tried again; zero when no
	// retry is armed (applied, pending, or retried by the next commit).
	NextRetry time.Time
	// Since is when the item entered its current state.
	Since time.Time
}

func (s ItemStatus) String() string {
	out := fmt.Sprintf("%s %s", s.Key, s.State)
	if s.Deleting {
		out += " (deleting)"
	}
	if s.Reason != "" {
		out += ": " + s.Reason
	}
	if s.Err != nil {
		out += fmt.Sprintf(": %v (failures %d)", s.Err, s.Failures)
	}
	return out
}

// Stats are the reconciler's counters, for metrics.
type Stats struct {
	// Desired, Applied, Pending and Failed count keys by status.
	Desired, Applied, Pending, Failed int
	// Calls and CallFailures count VPP API calls by message name.
	Calls, CallFailures map[string]uint64
	// Resyncs counts full resyncs (dump and compare); Drift counts objects
	// a resync found different from what the layer believed was applied.
	Resyncs, Drift uint64
	// LastResync is when the last full resync completed.
	LastResync time.Time
	// Synced is true once the first full resync has completed.
	Synced bool
	// Applying is true while a pass changes VPP: the counters above then
	// describe the state from before it (a commit of 5,000 services, or the
	// requests in flight to a VPP that just died), but for the keys whose
	// ops a full pass has recorded already (status_early.go).
	Applying bool
	// WaitingForInterface counts the pending items (of Pending) that wait
	// for an interface VPP does not have (yet), such as the NAT roles and
	// ACL bindings of a VPP that has restarted without its interfaces.
	WaitingForInterface int
}

// refreshStatuses recomputes statuses after a pass: of the given keys, or
// of every desired or applied key when keys is nil (a full pass). plan is
// nil before the first resync. Called with mu held.
func (r *Reconciler) refreshStatuses(plan *opPlan, keys map[vppcfg.Key]bool) {
	now := time.Now()
	r.storeMu.RLock()
	defer r.storeMu.RUnlock()
	r.smu.Lock()
	defer r.smu.Unlock()
	r.counters.Desired = len(r.store.Items)
	if keys != nil {
		for k := range keys {
			r.refreshStatus(plan, k, now)
		}
		return
	}
	// The desired keys, then the applied ones not desired, then statuses of
	// neither: looked up in the two maps rather than collected in a third
	// (a cold sync has 100,000 keys).
	live := len(r.store.Items)
	if plan != nil { // most desired items are applied after a pass
		r.appliedStatuses = core.Reserve(r.appliedStatuses, live-len(r.appliedStatuses))
	}
	all := r.allSettledEarly()
	for k, e := range r.store.Items {
		if !all && !r.settledEarly(k) {
			r.refreshDesired(plan, k, e, now)
		}
	}
	// With every desired key applied, VPP holds no other when it holds
	// as many keys.
	if !all || len(r.applied) != len(r.store.Items) {
		for k := range r.applied {
			if _, desired := r.store.Items[k]; !desired {
				r.refreshStatus(plan, k, now)
				live++
			}
		}
	}
	gone := func(k vppcfg.Key) bool {
		if _, desired := r.store.Items[k]; desired {
			return false
		}
		_, applied := r.applied[k]
		return !applied
	}
	// Every desired or applied key has a status now: when the book holds
	// no more than those, no status is left to forget, and the walk over
	// all of them (two lookups a key) is skipped.
	if len(r.statuses)+len(r.appliedStatuses) > live {
		r.forEachKey(func(k vppcfg.Key) {
			if gone(k) {
				r.forget(k)
			}
		})
	}
	// A failure whose key nobody wants any more is over too: left armed,
	// its retry woke the loop for a pass with nothing to do, and the key
	// stayed failed until that pass (a test that checked right after the
	// commit failed whenever the loop ran late).
	for k := range r.lastErr {
		if gone(k) {
			r.forget(k)
		}
	}
	for k := range r.retry.attempts {
		if gone(k) {
			r.forget(k)
		}
	}
}

// forget drops the status, failure and retry of a key that is neither
// desired nor in VPP. Called with mu, storeMu and smu held.
func (r *Reconciler) forget(k vppcfg.Key) {
	r.put(k, nil)
	r.retry.succeeded(k)
	delete(r.lastErr, k)
}

// refreshStatus recomputes one key's status. Called with storeMu and smu held.
func (r *Reconciler) refreshStatus(plan *opPlan, k vppcfg.Key, now time.Time) {
	if e, desired := r.store.Items[k]; desired {
		r.refreshDesired(plan, k, e, now)
		return
	}
	a, applied := r.applied[k]
	if !applied {
		// Neither desired nor in VPP: nothing left to retry or report.
		r.forget(k)
		return
	}
	next := ItemStatus{Key: k, Owners: []string{a.Owner.String()}, Deleting: true}
	switch {
	case r.lastErr[k] != nil:
		next.State, next.Err = StateFailed, r.lastErr[k]
	case plan != nil && plan.Pending[k] != "":
		next.State, next.Reason = StatePending, plan.Pending[k]
	default:
		next.State, next.Reason = StatePending, "delete pending"
	}
	r.settle(k, next, now)
}

// refreshDesired recomputes the status of k, desired as e. Called with
// storeMu and smu held.
func (r *Reconciler) refreshDesired(plan *opPlan, k vppcfg.Key, e core.DesiredEntry, now time.Time) {
	d := e.Item
	next := ItemStatus{Key: k, Owners: e.Owners.Names()}
	a, applied := r.applied[k]
	switch {
	case plan == nil:
		next.State, next.Reason = StatePending, "waiting for the first resync with VPP"
	case plan.Blocked[k] != nil:
		next.State, next.Err = StateFailed, plan.Blocked[k]
	case plan.Pending[k] != "":
		next.State, next.Reason = StatePending, plan.Pending[k]
	case r.lastErr[k] != nil && (r.retryArmed(k) || !applied || !core.EqualApplied(d, a.Item)):
		next.State, next.Err = StateFailed, r.lastErr[k]
	case applied && core.EqualApplied(d, a.Item):
		// A failure without an armed retry is over when VPP holds the
		// desired value: the item was put back to the value the failed
		// op left in place, or a resync found it applied.
		r.settleApplied(k, e, now)
		return
	default:
		next.State, next.Reason = StatePending, "not applied yet"
	}
	r.settle(k, next, now)
}

// settleApplied settles k, desired as e, as applied: VPP holds the
// desired value and no failure is pending. Called with storeMu and smu
// held.
func (r *Reconciler) settleApplied(k vppcfg.Key, e core.DesiredEntry, now time.Time) {
	r.retry.succeeded(k)
	delete(r.lastErr, k)
	r.settle(k, ItemStatus{Key: k, Owners: e.Owners.Names(), State: StateApplied}, now)
}

// settle records next as the status of k, keeping the time the key
// entered its state when it stays in it. Called with smu held.
func (r *Reconciler) settle(k vppcfg.Key, next ItemStatus, now time.Time) {
	next.Failures = r.retry.failures(k)
	if next.State == StateFailed {
		next.NextRetry = r.retry.next[k]
	}
	p := r.find(k)
	prev, hadPrev := p.status, p.had
	if hadPrev && prev.State == next.State && prev.Deleting == next.Deleting && prev.Reason == next.Reason &&
		prev.Err == next.Err && prev.Failures == next.Failures && prev.NextRetry.Equal(next.NextRetry) && slices.Equal(prev.Owners, next.Owners) {
		return
	}
	next.Since = now
	if hadPrev && prev.State == next.State && prev.Deleting == next.Deleting {
		next.Since = prev.Since
	}
	r.replace(k, p, next)
}

// retryArmed reports whether a failed op of k waits for its retry. Called
// with mu held.
func (r *Reconciler) retryArmed(k vppcfg.Key) bool {
	_, ok := r.retry.next[k]
	return ok
}

// reasonInterfacePrefix starts the pending reason of items whose interface is missing.
const reasonInterfacePrefix = "interface "

// Status returns the status of one key: desired, or still in VPP.
func (r *Reconciler) Status(k vppcfg.Key) (ItemStatus, bool) {
	r.smu.RLock()
	defer r.smu.RUnlock()
	return r.lookup(k)
}

// Statuses returns every status in key order.
func (r *Reconciler) Statuses() []ItemStatus {
	r.smu.RLock()
	defer r.smu.RUnlock()
	keys := r.keys()
	out := make([]ItemStatus, 0, len(keys))
	for _, k := range keys {
		s, _ := r.lookup(k)
		out = append(out, s)
	}
	return out
}

// Stats returns the counters for metrics.
func (r *Reconciler) Stats() Stats {
	r.smu.RLock()
	s := r.counters
	s.WaitingForInterface = r.waitingIf
	r.smu.RUnlock()
	s.Applying = r.passing.Load() > 0
	s.Calls, s.CallFailures = map[string]uint64{}, map[string]uint64{}
	for _, c := range r.d.CallStats() {
		s.Calls[c.Msg] = c.Calls
		s.CallFailures[c.Msg] = c.Failures
	}
	return s
}
