package engine

import (
	"time"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
)

// The hooks of a merged kind (core.Merger: ACL bindings, whose hooks are
// vppcfg's kind_acl_binding_merge.go) see the engine through the views of
// this file, so that the kind file knows none of the engine's types.

// mergedStates are the merged kinds' own states, by kind (core.MergedState),
// which the engine keeps for the kinds without looking inside.
type mergedStates map[vppcfg.Kind]core.MergedState

// newMergedStates returns every merged kind's empty state.
func newMergedStates() mergedStates {
	m := mergedStates{}
	for k := vppcfg.Kind(1); k < core.KindLimit; k++ {
		if d := core.Describe(k); d.Merge != nil && d.Merge.NewState != nil {
			m[k] = d.Merge.NewState()
		}
	}
	return m
}

// forgetInterface tells every state that an interface is gone.
func (m mergedStates) forgetInterface(name string) {
	for _, s := range m {
		s.ForgetInterface(name)
	}
}

// mergeInput is a diff as a merged kind's Plan sees it (core.MergeInput).
type mergeInput struct {
	kind  vppcfg.Kind
	in    *diffInput
	ready *readySet
	p     *opPlan
	state core.MergedState
}

// EachKey visits the keys of the merging kind only.
func (m mergeInput) EachKey(fn func(vppcfg.Key)) {
	m.in.eachBinding(func(k vppcfg.Key) {
		if k.Kind == m.kind {
			fn(k)
		}
	})
}

func (m mergeInput) Desired(k vppcfg.Key) (vppcfg.Item, bool) { return m.in.Desired.Get(k) }

func (m mergeInput) Applied(k vppcfg.Key) (it vppcfg.Item, owner string, prunableNow, ok bool) {
	a, ok := m.in.Applied[k]
	if !ok {
		return nil, "", false, false
	}
	return a.Item, a.Owner.String(), prunable(a, m.in.Resynced), true
}

func (m mergeInput) Ready(k vppcfg.Key) bool { return m.ready.has(k) }

func (m mergeInput) Pend(k vppcfg.Key, reason string) { m.p.Pending[k] = reason }

func (m mergeInput) HasInterface(name string) bool {
	_, ok := m.in.Interfaces[name]
	return ok
}

func (m mergeInput) State() core.MergedState { return m.state }

// mergedTasks are a merged kind's planned ops as tasks.
func mergedTasks(ops []core.MergedOp) []task {
	out := make([]task, 0, len(ops))
	for _, op := range ops {
		out = append(out, task{Op: op.Op, covers: op.Covers})
	}
	return out
}

// mergeView is the reconciler's applied view as a merged kind's Prepare
// and Record see it (core.AppliedView).
type mergeView struct {
	r    *Reconciler
	kind vppcfg.Kind
}

func (v mergeView) State() core.MergedState { return v.r.merged[v.kind] }

func (v mergeView) Handle(k vppcfg.Key) (uint32, bool) {
	a, ok := v.r.applied[k]
	return a.Handle, ok
}

func (v mergeView) Fail(k vppcfg.Key, err error, now time.Time) { v.r.failKey(k, err, now) }

func (v mergeView) Replace(drop func(vppcfg.Item) bool, keys []vppcfg.Key) {
	r := v.r
	prev := map[vppcfg.Key]appliedEntry{}
	for k, ai := range r.applied {
		if drop(ai.Item) {
			prev[k] = ai
			r.deleteApplied(k)
		}
	}
	r.storeMu.RLock()
	defer r.storeMu.RUnlock()
	for _, k := range keys {
		if d, owners, ok := r.store.Get(k); ok {
			r.setApplied(k, appliedEntry{Item: d, Owner: r.owners.of(owners[0])})
		} else if p, ok := prev[k]; ok {
			r.setApplied(k, p)
		}
	}
}

// dumpView is a dump being classified as a merged kind's Observe sees it
// (core.DumpView).
type dumpView struct {
	c       *classified
	desired desiredLookup
	state   core.MergedState
}

func (v dumpView) State() core.MergedState { return v.state }

func (v dumpView) Name(kind vppcfg.Kind, handle uint32) (string, bool) {
	n, ok := v.c.names[kind][handle]
	return n, ok
}

func (v dumpView) Desired(k vppcfg.Key) (vppcfg.Item, bool) {
	it, _, ok := v.desired.get(k)
	return it, ok
}

func (v dumpView) Adopt(k vppcfg.Key, it vppcfg.Item, ownerOf vppcfg.Key) {
	e := appliedEntry{Item: it}
	if _, owners, ok := v.desired.get(k); ok {
		e.Owner = v.c.owners.of(owners[0])
	} else {
		e.Orphan = true
		if a, ok := v.c.applied[ownerOf]; ok {
			e.Owner = a.Owner
		}
	}
	v.c.applied[k] = e
}
