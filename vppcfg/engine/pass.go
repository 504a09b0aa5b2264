package engine

import (
	"context"
	"slices"
	"time"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
)

// pass plans from the in-memory view and applies the operations that are
// not waiting for a retry. Unless a full pass is due, it diffs only the keys
// changed by commits and the keys whose retry is due. Called with mu held.
func (r *Reconciler) pass(ctx context.Context) {
	if r.disconnected {
		// What changed stays dirty; the next connection's resync passes
		// over everything anyway.
		return
	}
	r.passing.Add(1)
	defer r.passing.Add(-1)
	now := time.Now()
	var sc map[vppcfg.Key]bool
	if !r.full {
		sc = r.dirty
	}
	// Due retries are consumed by this pass; a new failure re-arms them. A
	// key that no longer needs an op (pending again, or gone) thus stops
	// waking the loop.
	for k, t := range r.retry.next {
		if !now.Before(t) {
			r.retry.reset(k)
			if sc != nil {
				sc[k] = true
			}
		}
	}
	r.dirty, r.full = map[vppcfg.Key]bool{}, false
	r.storeMu.RLock()
	r.adoptDesired(sc)
	plan := planOps(diffInput{
		Desired:      r.store.Items,
		Applied:      r.applied,
		Interfaces:   r.ifaces,
		Foreign:      r.foreign,
		Resynced:     r.store.Resynced,
		Merged:       r.merged,
		Scope:        sc,
		OrphanOwners: r.orphanOwners,

		DesiredBindings: r.store.Bindings,
		AppliedBindings: r.appliedBindings,

		BulkHoldUntil: r.bulkHoldUntil,
		Now:           now,
	})
	if sc == nil {
		r.bulkHeld = plan.BulkHeld
	}
	// While creates are held back for an interface, the passes that may
	// release them (its interface's event, the hold's end) look at every
	// key: a scoped pass would not see them.
	r.full = r.full || r.bulkHeld
	ops := r.readyTasks(plan.Ops, now)
	for i := range ops {
		if op := &ops[i]; op.owners == (core.Owners{}) { // planOps names the owners of what it creates or updates
			op.owners = r.store.Items[op.Key].Owners
		}
	}
	planned := r.store.Version()
	r.storeMu.RUnlock()
	if len(ops) > 0 {
		r.applied = core.Reserve(r.applied, countCreates(ops))
		r.beginEarly(earlyPlan(&plan, sc != nil), planned)
		r.execute(ctx, ops)
	}
	if sc != nil {
		// Statuses that may have moved: the scope, what the plan looked at
		// (all bindings, when ACLs were in scope) and what was executed.
		for k := range plan.Pending {
			sc[k] = true
		}
		for k := range plan.Blocked {
			sc[k] = true
		}
		for _, op := range plan.Ops {
			for _, k := range op.keys() {
				sc[k] = true
			}
		}
	}
	r.refreshStatuses(&plan, sc)
	r.early = nil
}

// readyTasks returns the tasks out of backoff: all itself when every
// one is (a cold sync's 100,000 tasks are not copied), a new list
// otherwise.
func (r *Reconciler) readyTasks(all []task, now time.Time) []task {
	for i := range all {
		if r.opReady(&all[i], now) {
			continue
		}
		ready := slices.Clone(all[:i])
		for j := i + 1; j < len(all); j++ {
			if r.opReady(&all[j], now) {
				ready = append(ready, all[j])
			}
		}
		return ready
	}
	return all
}

// countCreates is how many of ops create an object.
func countCreates(ops []task) int {
	n := 0
	for i := range ops {
		if ops[i].Type == driverapi.OpCreate {
			n++
		}
	}
	return n
}

// opReady reports whether any key of op is out of backoff.
func (r *Reconciler) opReady(op *task, now time.Time) bool {
	if op.covers == nil {
		return r.retry.ready(op.Key, now)
	}
	for _, k := range op.covers {
		if r.retry.ready(k, now) {
			return true
		}
	}
	return false
}

// isMerged reports whether op sets a merged value (see core.Merger).
func isMerged(op *task) bool { return core.Merged(op.Key.Kind) && op.Type == driverapi.OpUpdate }

// execute sends ops in batches, each one driver call (applyBatch: handed
// over in chunks as they are prepared, when the driver takes them so). A
// batch ends before merged ops (interface ACL lists) that follow other ops,
// because those need the indexes VPP returns for the objects (ACLs)
// created just before.
//
// A batch also ends after the delete of a recreate (a delete followed by a
// create of the same key), and the create is dropped when that delete
// failed: the create could otherwise succeed as an update in place (cnat
// keeps the LB type of the first create), and the layer would record a
// value VPP does not hold. The key then fails as a whole and is retried.
func (r *Reconciler) execute(ctx context.Context, ops []task) {
	recreated := recreates(ops)
	for len(ops) > 0 {
		n := 1
		for n < len(ops) && !(isMerged(&ops[n]) && !isMerged(&ops[n-1])) &&
			!(ops[n-1].Type == driverapi.OpDelete && recreated[ops[n-1].Key]) {
			n++
		}
		batch := ops[:n]
		ops = ops[n:]
		// Only a batch's last op can be the delete of a recreate.
		last := batch[len(batch)-1]
		if err := r.applyBatch(ctx, batch); err != nil && last.Type == driverapi.OpDelete && recreated[last.Key] {
			// On a copy: ops may be the plan's own list, which the pass reads after.
			ops = slices.DeleteFunc(slices.Clone(ops), func(o task) bool { return o.Type == driverapi.OpCreate && o.Key == last.Key })
		}
	}
}

// recreates are the keys ops delete and create again; nil when ops
// delete nothing (a cold sync's creates are not indexed for nothing).
func recreates(ops []task) map[vppcfg.Key]bool {
	var deleted map[vppcfg.Key]bool
	for _, op := range ops {
		if op.Type == driverapi.OpDelete {
			if deleted == nil {
				deleted = map[vppcfg.Key]bool{}
			}
			deleted[op.Key] = true
		}
	}
	if deleted == nil {
		return nil
	}
	recreated := map[vppcfg.Key]bool{}
	for _, op := range ops {
		if op.Type == driverapi.OpCreate && deleted[op.Key] {
			recreated[op.Key] = true
		}
	}
	return recreated
}

// prepare fills in what only the current applied view knows: interface
// indexes, VPP handles and, for merged ops, the indexes of what they refer
// to; and the tag a create writes. It returns the tasks and the ops to
// send, in the same order.
func (r *Reconciler) prepare(batch []task) ([]task, []driverapi.Op) {
	send := make([]driverapi.Op, 0, len(batch))
	now := time.Now()
	for i := range batch {
		op := &batch[i] // completed in place: the batch is not sent again
		if b, ok := op.Item.(vppcfg.InterfaceBound); ok {
			op.SwIfIndex = r.ifaces[b.Interfaces()[0]]
		}
		if op.Type == driverapi.OpCreate && core.Taggable(op.Key.Kind) {
			op.Tag = core.Tag(op.owner(), core.ItemLabel(op.Item))
		}
		if op.Type != driverapi.OpCreate {
			if a, ok := r.applied[op.Key]; ok {
				op.Handle = a.Handle
				if writesTag(op.Type) {
					op.Tag = r.tags.of(op.Key, a)
				}
			}
		}
		if isMerged(op) {
			op.Op = core.Describe(op.Key.Kind).Merge.Prepare(mergeView{r, op.Key.Kind}, op.Op, now)
		}
		send = append(send, op.Op)
	}
	return batch, send
}
