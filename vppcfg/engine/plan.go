package engine

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
)

// appliedEntry is an item as VPP holds it, with what the layer knows about
// it. The applied view holds entries by value (32 bytes in the map's slot,
// no allocation of their own): a change is written back to the map.
type appliedEntry struct {
	Item vppcfg.Item
	// Owner is the owner that created or adopted it (the first, for shared items).
	Owner ownerRef
	// Handle is the VPP index (ACL index, cnat translation ID).
	Handle uint32
	// Orphan marks an object adopted from VPP that nobody desired at the
	// time; it is deleted only once its owner has committed a ResyncTxn, so
	// that a renderer that has not caught up yet after a restart does not
	// lose its configuration.
	Orphan bool
	// known: the fields VPP does not report back (the descriptors'
	// WithUnobservable) are what this layer wrote, not copied from the
	// desired value. A resync keeps them, so that a change whose write
	// failed is not mistaken for applied because a dump cannot show the
	// difference.
	known bool
}

// diffInput is everything the diff looks at. planOps never changes it.
type diffInput struct {
	Desired core.DesiredItems
	Applied map[vppcfg.Key]appliedEntry
	// Interfaces are the interfaces that exist in VPP, by name.
	Interfaces map[string]uint32
	// Foreign are VPP objects of others; a desired item at the same VPP
	// identity is blocked instead of clobbering them.
	Foreign map[vppcfg.Key]vppcfg.Item
	// Resynced are the owners that committed a ResyncTxn: their orphans may go.
	Resynced map[string]bool
	// Merged are the merged kinds' own states of what is applied; the
	// diff hands them to the kinds' Plan.
	Merged mergedStates
	// Scope, when not nil, limits the diff to these keys (see scope).
	Scope map[vppcfg.Key]bool
	// OrphanOwners, when not nil, are all owners of Orphan items in Applied.
	// Once every one of them has resynced no applied item can hold an
	// external key, and the diff skips walking Applied for them: a commit
	// then costs what it touches, not what VPP holds. Nil means unknown.
	OrphanOwners map[string]bool
	// DesiredBindings and AppliedBindings, when not nil, are the keys of
	// merged kinds (ACL bindings) in Desired and Applied (indexes the
	// reconciler keeps): a diff that touches them merges every group, and
	// without them it would walk every item to find them.
	DesiredBindings, AppliedBindings map[vppcfg.Key]bool
	// BulkHoldUntil, when not zero, ends the bulk hold of this connection
	// (plan_bulk_hold.go); Now is the pass's time.
	BulkHoldUntil, Now time.Time
}

// eachBinding visits every key of a merged kind in Desired and Applied once.
func (in *diffInput) eachBinding(fn func(vppcfg.Key)) {
	if in.DesiredBindings == nil || in.AppliedBindings == nil {
		for k := range in.Desired {
			if core.Merged(k.Kind) {
				fn(k)
			}
		}
		for k := range in.Applied {
			if !in.Desired.Has(k) && core.Merged(k.Kind) {
				fn(k)
			}
		}
		return
	}
	for k := range in.DesiredBindings {
		fn(k)
	}
	for k := range in.AppliedBindings {
		if !in.DesiredBindings[k] {
			fn(k)
		}
	}
}

// mayHoldApplied reports whether some applied item may be kept for an owner
// that has not resynced yet.
func (in *diffInput) mayHoldApplied() bool {
	if in.OrphanOwners == nil {
		return true
	}
	for owner := range in.OrphanOwners {
		if !in.Resynced[owner] {
			return true
		}
	}
	return false
}

// task is a planned op with what only the reconciler needs: drivers get
// the Op alone.
type task struct {
	driverapi.Op
	// covers are the keys whose status the op decides, when they are not
	// Op.Key alone (a merged op decides those of the items it merges).
	covers []vppcfg.Key
	// owners are the owners that desired the item when the op was planned
	// (the store's list): set by planOps for the creates and updates of
	// desired items, by the pass for the others. The desired state may
	// change while the op is in flight, so the owners are not looked up
	// when it returns.
	owners core.Owners
}

// owner is the first of t's owners ("" for none).
func (t *task) owner() string { return t.owners.First() }

// keys are the keys whose status t decides.
func (t *task) keys() []vppcfg.Key {
	if t.covers != nil {
		return t.covers
	}
	return []vppcfg.Key{t.Key}
}

// opPlan is the ordered list of operations that turns applied into desired.
type opPlan struct {
	Ops []task
	// Pending are desired keys that cannot be applied yet (a missing
	// interface or dependency), and applied keys kept on purpose, with the reason.
	Pending map[vppcfg.Key]string
	// Blocked are desired keys that conflict with objects the layer must not touch.
	Blocked map[vppcfg.Key]error
	// Reset are the gate kinds whose plugin the plan disables and
	// re-enables, which removes every object of the plugin from VPP.
	Reset map[vppcfg.Kind]bool
	// BulkHeld is set when the plan held creates back for an interface
	// (plan_bulk_hold.go).
	BulkHeld bool
}

// change is how one desired key differs from its applied value.
type change uint8

const (
	changeNone change = iota
	changeCreate
	changeUpdate
	changeRecreate
)

// planOps computes the operations that make VPP hold the desired items. It is a
// pure function: deletes come first, in reverse kind order; then creates and
// in-place updates in kind order (dependencies first). An item whose value
// changed is updated in place where VPP can do that without disturbing
// traffic, and deleted and re-created otherwise.
func planOps(in diffInput) opPlan {
	p := opPlan{Pending: map[vppcfg.Key]string{}, Blocked: map[vppcfg.Key]error{}}
	sc := newScope(in)
	ready := p.readiness(in, sc)

	// Each ready key VPP does not hold is a create: at least this many
	// changes (a cold sync's all), and none made room for in a steady state.
	changes := changeSet{list: make([]keyChange, 0, max(ready.count-len(in.Applied), 0))}
	sc.eachDesired(func(k vppcfg.Key, e core.DesiredEntry) {
		if ready.held(k) || core.Merged(k.Kind) {
			return
		}
		a, ok := in.Applied[k]
		kd := core.Describe(k.Kind)
		switch {
		case !ok:
			changes.add(k, e, nil, changeCreate)
		case kd.EqualApplied(e.Item, a.Item):
		case kd.NeedsRecreate(a.Item, e.Item):
			changes.add(k, e, a.Item, changeRecreate)
		default:
			changes.add(k, e, a.Item, changeUpdate)
		}
	})
	p.gateReset(in, ready, &changes)

	var deletes []driverapi.Op
	sc.eachApplied(func(k vppcfg.Key, a appliedEntry) {
		d := core.Describe(k.Kind)
		if d.Merge != nil || d.IsGate() || p.Reset[d.Gate] {
			return
		}
		if !boundInterfacesExist(a.Item, in.Interfaces) {
			// VPP removed it with the interface (or cannot address it any more).
			return
		}
		if in.Desired.Has(k) {
			if changes.recreates(k) {
				deletes = append(deletes, driverapi.Op{Type: driverapi.OpDelete, Key: k, Item: a.Item})
			}
			return
		}
		if !prunable(a, in.Resynced) {
			p.Pending[k] = fmt.Sprintf("kept: not desired, but owner %q has not resynced", a.Owner.String())
			return
		}
		deletes = append(deletes, driverapi.Op{Type: driverapi.OpDelete, Key: k, Item: a.Item})
	})
	slices.SortFunc(deletes, func(a, b driverapi.Op) int { return a.Key.Compare(b.Key) })
	if sc.gates {
		deletes = append(deletes, p.gateDeletes(in, deletes, &changes)...)
	}
	dels := make([]task, 0, len(deletes))
	for _, op := range deletes {
		dels = append(dels, task{Op: op})
	}
	creates := make([]task, 0, len(changes.list)) // one op a change but for in-place updates
	for _, i := range changes.order() {
		c := &changes.list[i]
		switch c.change {
		case changeCreate, changeRecreate:
			creates = append(creates, task{Op: driverapi.Op{Type: driverapi.OpCreate, Key: c.key, Item: c.desired}, owners: c.owners})
		case changeUpdate:
			for _, op := range core.Describe(c.key.Kind).UpdateOps(c.key, c.applied, c.desired) {
				creates = append(creates, task{Op: op, owners: c.owners})
			}
		}
	}
	if sc.merges {
		for d := range core.All {
			if d.Merge != nil {
				mDel, mSet := d.Merge.Plan(mergeInput{kind: d.Kind, in: &in, ready: ready, p: &p, state: in.Merged[d.Kind]})
				dels = append(dels, mergedTasks(mDel)...)
				creates = append(creates, mergedTasks(mSet)...)
			}
		}
	}

	// Stable sorts keep the per-key sequences (one LB local after another)
	// intact; ops already in kind order (a cold sync's creates, but for
	// merged ones) are left as they are.
	sortKinds(dels, func(a, b task) int { return cmp.Compare(b.Key.Kind, a.Key.Kind) })
	sortKinds(creates, func(a, b task) int { return cmp.Compare(a.Key.Kind, b.Key.Kind) })
	if len(dels) == 0 && len(creates) > 0 {
		p.Ops = creates // a cold sync's 100,000 creates are not copied again
	} else {
		p.Ops = append(dels, creates...)
	}
	return p
}

// sortKinds sorts ops stably by kind with byKind, unless they are in order.
func sortKinds(ops []task, byKind func(a, b task) int) {
	if !slices.IsSortedFunc(ops, byKind) {
		slices.SortStableFunc(ops, byKind)
	}
}

// scope is the part of the configuration a diff looks at. A full diff
// (diffInput.Scope nil) looks at everything; an incremental one only at the
// scoped keys, so that a commit costs what it changes rather than the size
// of the whole configuration. Merged kinds (ACL bindings) are merged per
// group, so any key of theirs, or of a kind they refer to, in scope brings
// all of them in; a gate (the NAT44 global) concerns every item of its
// plugin and is only decided by a full diff or when in scope.
type scope struct {
	in            diffInput
	merges, gates bool
}

func newScope(in diffInput) *scope {
	sc := &scope{in: in, merges: in.Scope == nil, gates: in.Scope == nil}
	for k := range in.Scope {
		d := core.Describe(k.Kind)
		sc.merges = sc.merges || d.Merge != nil || d.Remerge
		sc.gates = sc.gates || d.IsGate()
	}
	return sc
}

// eachDesired visits the desired keys in scope, plus every desired binding
// when bindings are merged in this diff.
func (sc *scope) eachDesired(fn func(vppcfg.Key, core.DesiredEntry)) {
	if sc.in.Scope == nil {
		for k, e := range sc.in.Desired {
			fn(k, e)
		}
		return
	}
	for k := range sc.in.Scope {
		if e, ok := sc.in.Desired[k]; ok && !(sc.merges && core.Merged(k.Kind)) {
			fn(k, e)
		}
	}
	if sc.merges {
		sc.in.eachBinding(func(k vppcfg.Key) {
			if e, ok := sc.in.Desired[k]; ok {
				fn(k, e)
			}
		})
	}
}

// eachApplied visits the applied keys in scope.
func (sc *scope) eachApplied(fn func(vppcfg.Key, appliedEntry)) {
	if sc.in.Scope == nil {
		for k, a := range sc.in.Applied {
			fn(k, a)
		}
		return
	}
	for k := range sc.in.Scope {
		if a, ok := sc.in.Applied[k]; ok {
			fn(k, a)
		}
	}
}

// readiness decides which desired keys can be applied now, recording why the others cannot.
func (p *opPlan) readiness(in diffInput, sc *scope) *readySet {
	var enabled [core.KindLimit]bool // by gate kind
	for g := range core.Gates {
		enabled[g.Kind] = gateEnabled(in, g.GateKey)
	}
	// External keys of mappings that stay in VPP whatever we do.
	type holder struct {
		key vppcfg.Key
		why string
	}
	held := map[string]holder{}
	for k, it := range in.Foreign {
		if ext, ok := core.ExternalKeyOf(k, it); ok {
			held[ext] = holder{k, fmt.Sprintf("foreign %s", k)}
		}
	}
	for k, a := range in.Applied {
		if !in.mayHoldApplied() {
			break
		}
		if prunable(a, in.Resynced) {
			continue
		}
		if in.Desired.Has(k) {
			continue
		}
		if ext, ok := core.ExternalKeyOf(k, a.Item); ok {
			held[ext] = holder{k, fmt.Sprintf("%s kept for owner %q", k, a.Owner.String())}
		}
	}
	ready := &readySet{sc: sc}
	armed := in.bulkHoldArmed()
	var walked walkers
	sc.eachDesired(func(k vppcfg.Key, e core.DesiredEntry) {
		d := e.Item
		ready.count++ // hold takes it back
		if f, ok := in.Foreign[k]; ok {
			p.Blocked[k] = fmt.Errorf("%s: VPP holds a foreign object at this key (%s); not touching it", k, f)
			ready.hold(k)
			return
		}
		if len(held) > 0 {
			if ext, ok := core.ExternalKeyOf(k, d); ok {
				if h, taken := held[ext]; taken && core.ExternalConflict(h.key, k) {
					p.Blocked[k] = fmt.Errorf("%s: external %s is held by %s", k, ext, h.why)
					ready.hold(k)
					return
				}
			}
		}
		if missing := missingInterface(d, in.Interfaces); missing != "" {
			p.Pending[k] = fmt.Sprintf(reasonInterfacePrefix+"%q not found", missing)
			ready.hold(k)
			walked.note(d, missing, armed)
			return
		}
		if g := gatedBy(k.Kind); g != 0 && !enabled[g] {
			p.Pending[k] = fmt.Sprintf("%s is not enabled (no %s item)", core.Describe(g).GatePlugin, g)
			ready.hold(k)
		}
	})
	if walked != nil {
		p.holdBulk(sc, in, ready, walked)
	}
	p.waitForDependencies(sc, in, ready)
	return ready
}

// waitForDependencies holds back ready items whose kind names a key they
// wait for (vppcfg's kindSpec.WaitsFor) that is neither applied nor ready itself.
func (p *opPlan) waitForDependencies(sc *scope, in diffInput, ready *readySet) {
	sc.eachDesired(func(k vppcfg.Key, e core.DesiredEntry) {
		if ready.held(k) {
			return
		}
		dep, why, ok := core.Describe(k.Kind).WaitsFor(e.Item)
		if !ok {
			return
		}
		if _, applied := in.Applied[dep]; !ready.has(dep) && !applied {
			ready.hold(k)
			p.Pending[k] = why
		}
	})
}

// EqualInVPP tells whether VPP holding observed (an object of a dump)
// means desired is applied, as the layer judges it: Equal, with VPP's
// defaults standing for the zero values that ask for them, and the fields
// VPP never reports (the descriptors' WithUnobservable) taken as desired.
// Checkers of VPP's state compare with it.
func EqualInVPP(desired, observed vppcfg.Item) bool {
	return core.EqualApplied(desired, core.WithUnobservable(observed, desired))
}

// prunable reports whether an applied item nobody desires may be deleted.
func prunable(a appliedEntry, resynced map[string]bool) bool {
	return !a.Orphan || resynced[a.Owner.String()]
}

func missingInterface(it vppcfg.Item, ifaces map[string]uint32) string {
	if b, ok := it.(vppcfg.InterfaceBound); ok {
		for _, name := range b.Interfaces() {
			if _, ok := ifaces[name]; !ok {
				return name
			}
		}
	}
	return ""
}

func boundInterfacesExist(it vppcfg.Item, ifaces map[string]uint32) bool {
	return missingInterface(it, ifaces) == ""
}
