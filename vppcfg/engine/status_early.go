package engine

import (
	"time"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
)

// A full pass settles the statuses of its ops' keys as each chunk of ops
// is recorded, while the driver still sends the chunks after it: after the
// last reply, only the last chunk's keys are left to settle, and
// refreshStatuses settles the keys no op touched, instead of every key of
// a cold sync (a tenth of a second at 50,000 services, all of it after
// VPP's last write).
//
// A desired key's status is a function of the plan, its desired entry and
// its own applied entry, failure and retry; once its ops are recorded,
// nothing later in the pass changes those, except a delete (a gate's delete
// takes its plugin's objects with it, a failed recreate's delete drops the
// create that follows) and a merged kind's ops (ACL bindings, several keys
// an op). So a pass settles early only when it deletes nothing, and never
// a merged kind's keys; refreshStatuses settles those, and skips the keys
// settled early (settledEarly). A chunk is settled at the end instead
// when a commit holds or waits for the store (the pass does not wait for
// it); a commit that changed the store since the plan makes the settling
// look each key up, and runs a pass of its own right after this one,
// which settles the keys it changed.

// earlyPlan returns the plan whose ops' statuses settle as they are
// recorded, nil when the pass must settle every status after its last op.
func earlyPlan(plan *opPlan, scoped bool) *opPlan {
	if scoped || len(plan.Reset) > 0 {
		return nil
	}
	for i := range plan.Ops {
		if plan.Ops[i].Type == driverapi.OpDelete {
			return nil
		}
	}
	return plan
}

// beginEarly prepares the status book for a pass settling early, planned
// from the store's version planned: room for the statuses of the desired
// keys, and a new stamp for the records settled from now on. Called with
// mu held.
func (r *Reconciler) beginEarly(plan *opPlan, planned uint64) {
	if r.settleLate {
		plan = nil
	}
	r.early, r.planned = plan, planned
	if plan == nil {
		return
	}
	r.storeMu.RLock()
	desired := len(r.store.Items)
	r.storeMu.RUnlock()
	r.smu.Lock()
	r.appliedStatuses = core.Reserve(r.appliedStatuses, desired-len(r.appliedStatuses))
	r.stamp, r.stamped = r.stamp+1, 0
	r.smu.Unlock()
}

// settleEarly settles the statuses of the keys of ops, just recorded with
// results, when the pass settles early. Called with mu held.
func (r *Reconciler) settleEarly(ops []task, results []driverapi.OpResult) {
	if r.early == nil || !r.storeMu.TryRLock() {
		return // a commit holds or waits for the store: refreshStatuses settles these keys
	}
	defer r.storeMu.RUnlock()
	// A create's task holds the desired entry it was planned from, the
	// store's own while the store has not changed since: a cold sync's
	// 50,000 keys are not looked up again.
	unchanged := r.store.Version() == r.planned
	now := time.Now()
	r.smu.Lock()
	defer r.smu.Unlock()
	for i := range ops {
		op := &ops[i]
		if op.covers != nil || core.Merged(op.Key.Kind) || (i > 0 && ops[i-1].Key == op.Key) {
			continue
		}
		if unchanged && op.Type == driverapi.OpCreate {
			e := core.DesiredEntry{Item: op.Item, Owners: op.owners}
			if i < len(results) && results[i].Err == nil && r.lastErr[op.Key] == nil &&
				r.early.Blocked[op.Key] == nil && r.early.Pending[op.Key] == "" {
				// record has just put this create's item in the applied
				// view, and nothing failed for the key: applied, as
				// refreshDesired would find, without looking the key up
				// in the applied view again (one lookup a created key,
				// most of them cache misses).
				r.settleApplied(op.Key, e, now)
			} else {
				r.refreshDesired(r.early, op.Key, e, now)
			}
		} else if e, desired := r.store.Items[op.Key]; desired {
			r.refreshDesired(r.early, op.Key, e, now)
		}
	}
}

// allSettledEarly reports whether this pass has settled every desired key
// early (a cold sync's): the store is the one the pass was planned from,
// and it holds as many keys as carry the pass's stamp (settledEarly).
// Called with storeMu and smu held.
func (r *Reconciler) allSettledEarly() bool {
	return r.early != nil && r.store.Version() == r.planned && r.stamped == len(r.store.Items)
}

// settledEarly reports whether this pass has settled the status of k
// already. Called with smu held.
func (r *Reconciler) settledEarly(k vppcfg.Key) bool {
	if r.early == nil {
		return false
	}
	i, ok := r.appliedStatuses[k]
	return ok && i.stamp == r.stamp
}
