package vppcfg

import (
	"errors"
	"slices"
	"time"

	"github.com/sirupsen/logrus"
)

// errNoResult fails the ops a driver returned no result for.
var errNoResult = errors.New("driver returned no result")

// record folds the results of one batch into the applied view.
func (r *Reconciler) record(ops []Op, results []OpResult) {
	now := time.Now()
	failed := map[Key]error{}
	succeeded := make(map[Key]bool, len(ops))
	for i, op := range ops {
		res := OpResult{Err: errNoResult}
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
			for _, k := range opKeys(op) {
				failed[k] = res.Err
			}
			if errors.Is(res.Err, ErrDrift) {
				if op.Type == OpCreate || op.Type == OpUpdate {
					if r.uncertain == nil {
						r.uncertain = map[Key]string{}
					}
					r.uncertain[op.Key] = op.Owner
				}
				r.requestResync(false)
			}
			continue
		}
		if r.debug {
			r.opLog(op).Debug("VPP operation done")
		}
		r.applyResult(op, res)
		for _, k := range opKeys(op) {
			succeeded[k] = true
		}
	}
	for k, err := range failed {
		r.failKey(k, err, now)
	}
	for k := range succeeded {
		if _, bad := failed[k]; !bad {
			r.retry.succeeded(k)
			delete(r.lastErr, k)
		}
	}
}

// worthWarning keeps a failure that repeats from flooding the log: the 1st,
// 2nd, 4th, 8th… consecutive failure is a warning, the others are debug. The
// retry delay doubles too, so with the default backoff a stuck item warns
// about once per maximum delay.
func worthWarning(failures int) bool { return failures&(failures-1) == 0 }

// opLog is the logger of one op, with the fields every op log carries.
func (r *Reconciler) opLog(op Op) logrus.FieldLogger {
	owner := op.Owner
	if owner == "" {
		owner = r.ownerOf(op.Key)
	}
	return r.log.WithFields(logrus.Fields{"owner": owner, "key": op.Key.String(), "op": op.String()})
}

func (r *Reconciler) failKey(k Key, err error, now time.Time) {
	r.lastErr[k] = err
	r.retry.failed(k, now)
}

func (r *Reconciler) ownerOf(k Key) string {
	if a, ok := r.applied[k]; ok && a.Owner.String() != "" {
		return a.Owner.String()
	}
	r.storeMu.RLock()
	defer r.storeMu.RUnlock()
	return r.store.ownerNames(k)
}

// setApplied and deleteApplied change the applied view and keep its
// index of ACL bindings (diffInput.AppliedBindings) in step.
func (r *Reconciler) setApplied(k Key, a appliedEntry) {
	r.applied[k] = a
	if k.Kind == KindACLBinding {
		r.appliedBindings[k] = true
	}
}

func (r *Reconciler) deleteApplied(k Key) {
	delete(r.applied, k)
	delete(r.tags, k)
	delete(r.appliedBindings, k)
}

// applyResult updates the applied view after a successful op.
func (r *Reconciler) applyResult(op Op, res OpResult) {
	k := op.Key
	switch op.Type {
	case OpCreate:
		a := appliedEntry{Item: op.Item, Owner: r.owners.of(op.Owner), Handle: res.Handle, known: true}
		r.setApplied(k, a)
		r.tags.keep(k, a, op.Tag)
	case OpUpdate:
		a, ok := r.applied[k]
		if !ok {
			break // planned for an applied item only; the next resync tells
		}
		owner, label := a.Owner.String(), itemLabel(a.Item)
		a.Item, a.known = op.Item, true
		if k.Kind == KindCNATTranslation {
			a.Handle = res.Handle
		}
		r.applied[k] = a
		r.tags.relabel(k, a, owner, label)
	case OpDelete:
		r.deleteApplied(k)
		if k == NAT44GlobalKey() {
			// Disabling the plugin removed every NAT44 object in VPP.
			for ak := range r.applied {
				if isNAT44(ak.Kind) {
					r.deleteApplied(ak)
				}
			}
		}
	case OpAddLocal, OpDelLocal:
		a, ok := r.applied[k]
		m, isLB := a.Item.(*NAT44LBMapping)
		if !ok || !isLB {
			break // planned for an applied LB mapping only; the next resync tells
		}
		owner, label := a.Owner.String(), itemLabel(a.Item)
		cur := *m
		cur.Locals = slices.DeleteFunc(slices.Clone(cur.Locals), func(l NAT44LBLocal) bool { return idOf(l) == idOf(op.Local) })
		if op.Type == OpAddLocal {
			cur.Locals = append(cur.Locals, op.Local)
			SortLBLocals(cur.Locals)
		}
		a.Item = &cur
		r.applied[k] = a
		r.tags.relabel(k, a, owner, label)
	case OpSetACLs:
		r.applyACLAssignment(op.ACLs)
	}
}

// applyACLAssignment rebuilds the applied bindings of one interface.
func (r *Reconciler) applyACLAssignment(a *ACLAssignment) {
	prev := map[Key]appliedEntry{}
	for k, ai := range r.applied {
		if b, ok := ai.Item.(*ACLBinding); ok && b.Interface == a.Interface {
			prev[k] = ai
			r.deleteApplied(k)
		}
	}
	r.storeMu.RLock()
	defer r.storeMu.RUnlock()
	for _, dir := range []ACLDirection{ACLInput, ACLOutput} {
		names := a.Input
		if dir == ACLOutput {
			names = a.Output
		}
		for _, n := range names {
			k := ACLBindingKey(a.Interface, dir, n)
			if d, owners, ok := r.store.get(k); ok {
				r.setApplied(k, appliedEntry{Item: d, Owner: r.owners.of(owners[0])})
			} else if p, ok := prev[k]; ok {
				r.setApplied(k, p)
			}
		}
	}
	if len(a.Input)+len(a.Output) == 0 {
		delete(r.aclOrder, a.Interface)
	} else {
		r.aclOrder[a.Interface] = aclNameList{Input: slices.Clone(a.Input), Output: slices.Clone(a.Output)}
	}
}
