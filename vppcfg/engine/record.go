package engine

import (
	"errors"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
)

// errNoResult fails the ops a driver returned no result for.
var errNoResult = errors.New("driver returned no result")

// record folds the results of one batch into the applied view.
func (r *Reconciler) record(ops []task, results []driverapi.OpResult) {
	now := time.Now()
	failed := map[vppcfg.Key]error{}
	for i, op := range ops {
		res := driverapi.OpResult{Err: errNoResult}
		if i < len(results) {
			res = results[i]
		}
		if res.Err != nil {
			failures := r.retry.failures(op.Key) + 1
			log := r.opLog(op).WithError(res.Err).WithField("failures", failures)
			if worthWarning(failures) {
				log.Warn("VPP operation failed")
			} else {
				log.Debug("VPP operation failed again")
			}
			for _, k := range op.keys() {
				failed[k] = res.Err
			}
			if errors.Is(res.Err, driverapi.ErrDrift) {
				if op.Type == driverapi.OpCreate || op.Type == driverapi.OpUpdate {
					if r.uncertain == nil {
						r.uncertain = map[vppcfg.Key]string{}
					}
					r.uncertain[op.Key] = op.owner()
				}
				r.requestResync(false)
			}
			continue
		}
		if r.debug {
			r.opLog(op).Debug("VPP operation done")
		}
		r.applyResult(op.Op, op.owner(), res)
	}
	for k, err := range failed {
		r.failKey(k, err, now)
	}
	// The keys of the ops that succeeded, but for those with a failed op
	// in the batch, are over any failure: walked in the batch rather than
	// collected in a set (a cold sync's chunk is a thousand keys).
	for i, op := range ops {
		if i < len(results) && results[i].Err == nil {
			for _, k := range op.keys() {
				if _, bad := failed[k]; !bad {
					r.retry.succeeded(k)
					delete(r.lastErr, k)
				}
			}
		}
	}
}

// worthWarning keeps a failure that repeats from flooding the log: the 1st,
// 2nd, 4th, 8th… consecutive failure is a warning, the others are debug. The
// retry delay doubles too, so with the default backoff a stuck item warns
// about once per maximum delay.
func worthWarning(failures int) bool { return failures&(failures-1) == 0 }

// opLog is the logger of one op, with the fields every op log carries.
func (r *Reconciler) opLog(op task) logrus.FieldLogger {
	owner := op.owner()
	if owner == "" {
		owner = r.ownerOf(op.Key)
	}
	return r.log.WithFields(logrus.Fields{"owner": owner, "key": op.Key.String(), "op": core.OpText(op.Op)})
}

func (r *Reconciler) failKey(k vppcfg.Key, err error, now time.Time) {
	r.lastErr[k] = err
	r.retry.failed(k, now)
}

func (r *Reconciler) ownerOf(k vppcfg.Key) string {
	if a, ok := r.applied[k]; ok && a.Owner.String() != "" {
		return a.Owner.String()
	}
	r.storeMu.RLock()
	defer r.storeMu.RUnlock()
	return r.store.OwnerNames(k)
}

// setApplied and deleteApplied change the applied view and keep its
// index of merged kinds' keys (diffInput.AppliedBindings) in step.
func (r *Reconciler) setApplied(k vppcfg.Key, a appliedEntry) {
	r.applied[k] = a
	if core.Merged(k.Kind) {
		r.appliedBindings[k] = true
	}
}

func (r *Reconciler) deleteApplied(k vppcfg.Key) {
	delete(r.applied, k)
	delete(r.tags, k)
	delete(r.appliedBindings, k)
}

// applyResult updates the applied view after a successful op of owner.
func (r *Reconciler) applyResult(op driverapi.Op, owner string, res driverapi.OpResult) {
	k := op.Key
	d := core.Describe(k.Kind)
	switch {
	case d.Merge != nil && op.Type == driverapi.OpUpdate:
		d.Merge.Record(mergeView{r, k.Kind}, op)
	case op.Type == driverapi.OpCreate:
		a := appliedEntry{Item: op.Item, Owner: r.owners.of(owner), Handle: res.Handle, known: true}
		r.setApplied(k, a)
		r.tags.keep(k, a, op.Tag)
	case op.Type == driverapi.OpUpdate:
		a, ok := r.applied[k]
		if !ok {
			break // planned for an applied item only; the next resync tells
		}
		prevOwner, label := a.Owner.String(), core.ItemLabel(a.Item)
		if d.ApplyPart != nil {
			// An update of one part writes only that part, and an
			// earlier step may have failed; what VPP does not report back
			// stays as known as it was.
			a.Item = d.ApplyPart(a.Item, op.Old, op.Item)
		} else {
			a.Item, a.known = op.Item, true
		}
		if d.NewHandleOnUpdate {
			a.Handle = res.Handle
		}
		r.applied[k] = a
		r.tags.relabel(k, a, prevOwner, label)
	case op.Type == driverapi.OpDelete:
		r.deleteApplied(k)
		if d.IsGate() {
			// Disabling the plugin removed every object of it in VPP.
			for ak := range r.applied {
				if gatedBy(ak.Kind) == d.Kind {
					r.deleteApplied(ak)
				}
			}
		}
	}
}
