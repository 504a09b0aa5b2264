package vppcfg

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
)

// AppliedItem is an item as VPP holds it, with what the layer knows about it.
type AppliedItem struct {
	Item Item
	// Owner is the owner that created or adopted it (the first, for shared items).
	Owner string
	// Orphan marks an object adopted from VPP that nobody desired at the
	// time; it is deleted only once its owner has committed a ResyncTxn, so
	// that a renderer that has not caught up yet after a restart does not
	// lose its configuration.
	Orphan bool
	// Handle is the VPP index (ACL index, cnat translation ID).
	Handle uint32
	// Tag is the VPP tag written for taggable kinds.
	Tag string
	// known: the fields VPP does not report back (withUnobservable) are
	// what this layer wrote, not copied from the desired value. A resync
	// keeps them, so that a change whose write failed is not mistaken for
	// applied because a dump cannot show the difference.
	known bool
}

// ACLNames are the names of our ACLs bound to one interface, in VPP order.
type ACLNames struct {
	Input, Output []string
}

// DiffInput is everything the diff looks at. Diff never changes it.
type DiffInput struct {
	Desired map[Key]Item
	Applied map[Key]*AppliedItem
	// Interfaces are the interfaces that exist in VPP, by name.
	Interfaces map[string]uint32
	// Foreign are VPP objects of others; a desired item at the same VPP
	// identity is blocked instead of clobbering them.
	Foreign map[Key]Item
	// Resynced are the owners that committed a ResyncTxn: their orphans may go.
	Resynced map[string]bool
	// ACLOrder are our ACLs bound per interface in VPP order.
	ACLOrder map[string]ACLNames
	// Scope, when not nil, limits the diff to these keys (see scope).
	Scope map[Key]bool
	// OrphanOwners, when not nil, are all owners of Orphan items in Applied.
	// Once every one of them has resynced no applied item can hold an
	// external key, and the diff skips walking Applied for them: a commit
	// then costs what it touches, not what VPP holds. Nil means unknown.
	OrphanOwners map[string]bool
	// DesiredBindings and AppliedBindings, when not nil, are the ACL
	// binding keys of Desired and Applied (indexes the reconciler keeps):
	// a diff that touches ACLs merges every interface's bindings, and
	// without them it would walk every item to find them.
	DesiredBindings, AppliedBindings map[Key]bool
}

// eachBinding visits every ACL binding key of Desired and Applied once.
func (in *DiffInput) eachBinding(fn func(Key)) {
	if in.DesiredBindings == nil || in.AppliedBindings == nil {
		for k := range in.Desired {
			if k.Kind == KindACLBinding {
				fn(k)
			}
		}
		for k := range in.Applied {
			if _, desired := in.Desired[k]; !desired && k.Kind == KindACLBinding {
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
func (in *DiffInput) mayHoldApplied() bool {
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

// Plan is the ordered list of operations that turns applied into desired.
type Plan struct {
	Ops []Op
	// Pending are desired keys that cannot be applied yet (a missing
	// interface or dependency), and applied keys kept on purpose, with the reason.
	Pending map[Key]string
	// Blocked are desired keys that conflict with objects the layer must not touch.
	Blocked map[Key]error
	// NATReset is set when the plan disables and re-enables NAT44, which
	// removes every NAT44 object from VPP.
	NATReset bool
}

// change is how one desired key differs from its applied value.
type change uint8

const (
	changeNone change = iota
	changeCreate
	changeUpdate
	changeRecreate
)

// Diff computes the operations that make VPP hold the desired items. It is a
// pure function: deletes come first, in reverse kind order; then creates and
// in-place updates in kind order (dependencies first). An item whose value
// changed is updated in place where VPP can do that without disturbing
// traffic, and deleted and re-created otherwise.
func Diff(in DiffInput) Plan {
	p := Plan{Pending: map[Key]string{}, Blocked: map[Key]error{}}
	sc := newScope(in)
	ready := p.readiness(in, sc)

	changes := map[Key]change{}
	sc.eachDesired(func(k Key, d Item) {
		if !ready[k] || k.Kind == KindACLBinding {
			return
		}
		a, ok := in.Applied[k]
		switch {
		case !ok:
			changes[k] = changeCreate
		case equalApplied(d, a.Item):
		case needsRecreate(a.Item, d):
			changes[k] = changeRecreate
		default:
			changes[k] = changeUpdate
		}
	})
	if changes[NAT44GlobalKey()] == changeRecreate {
		// Re-enabling NAT44 wipes every NAT44 object: re-create them all.
		p.NATReset = true
		for k := range in.Desired {
			if isNAT44(k.Kind) && k.Kind != KindNAT44Global {
				if _, evaluated := ready[k]; !evaluated && p.Pending[k] == "" && p.Blocked[k] == nil {
					ready[k] = missingInterface(in.Desired[k], in.Interfaces) == ""
				}
				if ready[k] {
					changes[k] = changeCreate
				}
			}
		}
	}

	var deletes, creates []Op
	sc.eachApplied(func(k Key, a *AppliedItem) {
		if k.Kind == KindACLBinding || k.Kind == KindNAT44Global {
			return
		}
		if p.NATReset && isNAT44(k.Kind) {
			return
		}
		if !boundInterfacesExist(a.Item, in.Interfaces) {
			// VPP removed it with the interface (or cannot address it any more).
			return
		}
		if _, desired := in.Desired[k]; desired {
			if changes[k] == changeRecreate {
				deletes = append(deletes, Op{Type: OpDelete, Key: k, Item: a.Item})
			}
			return
		}
		if !prunable(a, in.Resynced) {
			p.Pending[k] = fmt.Sprintf("kept: not desired, but owner %q has not resynced", a.Owner)
			return
		}
		deletes = append(deletes, Op{Type: OpDelete, Key: k, Item: a.Item})
	})
	slices.SortFunc(deletes, func(a, b Op) int { return a.Key.Compare(b.Key) })
	for _, k := range sortedKeys(changes) {
		d, a := in.Desired[k], in.Applied[k]
		switch changes[k] {
		case changeCreate, changeRecreate:
			creates = append(creates, Op{Type: OpCreate, Key: k, Item: d})
		case changeUpdate:
			creates = append(creates, updateOps(k, a.Item, d)...)
		}
	}
	if sc.acls {
		aclDel, aclSet := p.aclAssignments(in, ready)
		deletes = append(deletes, aclDel...)
		creates = append(creates, aclSet...)
	}
	if sc.natGlobal {
		if op, ok := p.natGlobalDelete(in, deletes, changes); ok {
			deletes = append(deletes, op)
		}
	}

	// Stable sorts keep the per-key sequences (add-local before del-local) intact.
	slices.SortStableFunc(deletes, func(a, b Op) int { return cmp.Compare(b.Key.Kind, a.Key.Kind) })
	slices.SortStableFunc(creates, func(a, b Op) int { return cmp.Compare(a.Key.Kind, b.Key.Kind) })
	p.Ops = append(deletes, creates...)
	return p
}

// scope is the part of the configuration a diff looks at. A full diff
// (DiffInput.Scope nil) looks at everything; an incremental one only at the
// scoped keys, so that a commit costs what it changes rather than the size
// of the whole configuration. ACL bindings are merged per interface, so any
// ACL or binding key in scope brings every binding in; the NAT44 global
// concerns every NAT44 item and is only decided by a full diff or when in scope.
type scope struct {
	in              DiffInput
	acls, natGlobal bool
}

func newScope(in DiffInput) *scope {
	sc := &scope{in: in, acls: in.Scope == nil, natGlobal: in.Scope == nil}
	for k := range in.Scope {
		switch k.Kind {
		case KindACL, KindACLBinding:
			sc.acls = true
		case KindNAT44Global:
			sc.natGlobal = true
		}
	}
	return sc
}

// eachDesired visits the desired keys in scope, plus every desired binding
// when bindings are merged in this diff.
func (sc *scope) eachDesired(fn func(Key, Item)) {
	if sc.in.Scope == nil {
		for k, d := range sc.in.Desired {
			fn(k, d)
		}
		return
	}
	for k := range sc.in.Scope {
		if d, ok := sc.in.Desired[k]; ok && !(sc.acls && k.Kind == KindACLBinding) {
			fn(k, d)
		}
	}
	if sc.acls {
		sc.in.eachBinding(func(k Key) {
			if d, ok := sc.in.Desired[k]; ok {
				fn(k, d)
			}
		})
	}
}

// eachApplied visits the applied keys in scope.
func (sc *scope) eachApplied(fn func(Key, *AppliedItem)) {
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
func (p *Plan) readiness(in DiffInput, sc *scope) map[Key]bool {
	natEnabled := in.Desired[NAT44GlobalKey()] != nil || in.Applied[NAT44GlobalKey()] != nil ||
		in.Foreign[NAT44GlobalKey()] != nil
	// External keys of mappings that stay in VPP whatever we do.
	type holder struct {
		key Key
		why string
	}
	held := map[string]holder{}
	for k, it := range in.Foreign {
		if ext, ok := externalKeyOf(k, it); ok {
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
		if _, desired := in.Desired[k]; desired {
			continue
		}
		if ext, ok := externalKeyOf(k, a.Item); ok {
			held[ext] = holder{k, fmt.Sprintf("%s kept for owner %q", k, a.Owner)}
		}
	}
	size := len(in.Scope)
	if in.Scope == nil {
		size = len(in.Desired)
	}
	ready := make(map[Key]bool, size)
	sc.eachDesired(func(k Key, d Item) {
		if f, ok := in.Foreign[k]; ok {
			p.Blocked[k] = fmt.Errorf("%s: VPP holds a foreign object at this key (%s); not touching it", k, f)
			return
		}
		if len(held) > 0 {
			if ext, ok := externalKeyOf(k, d); ok {
				// Identity mappings of one address in several VRFs share the
				// external key legitimately.
				if h, taken := held[ext]; taken && h.key != k &&
					!(h.key.Kind == KindNAT44IdentityMapping && k.Kind == KindNAT44IdentityMapping) {
					p.Blocked[k] = fmt.Errorf("%s: external %s is held by %s", k, ext, h.why)
					return
				}
			}
		}
		if missing := missingInterface(d, in.Interfaces); missing != "" {
			p.Pending[k] = fmt.Sprintf(reasonInterfacePrefix+"%q not found", missing)
			return
		}
		if isNAT44(k.Kind) && k.Kind != KindNAT44Global && !natEnabled {
			p.Pending[k] = "NAT44 is not enabled (no nat44-global item)"
			return
		}
		ready[k] = true
	})
	// Bindings need their ACL applied or about to be created.
	sc.eachDesired(func(k Key, d Item) {
		if b, ok := d.(*ACLBinding); ok && ready[k] {
			acl := ACLKey(b.ACL)
			if !ready[acl] && in.Applied[acl] == nil {
				delete(ready, k)
				p.Pending[k] = fmt.Sprintf("waiting for acl %q", b.ACL)
			}
		}
	})
	return ready
}

// natGlobalDelete disables NAT44 only when no NAT44 item stays desired or
// applied: disabling deletes all NAT44 state in VPP.
func (p *Plan) natGlobalDelete(in DiffInput, deletes []Op, changes map[Key]change) (Op, bool) {
	gk := NAT44GlobalKey()
	a, applied := in.Applied[gk]
	if !applied {
		return Op{}, false
	}
	if changes[gk] == changeRecreate {
		return Op{Type: OpDelete, Key: gk, Item: a.Item}, true
	}
	if _, desired := in.Desired[gk]; desired {
		return Op{}, false
	}
	if !prunable(a, in.Resynced) {
		p.Pending[gk] = fmt.Sprintf("kept: not desired, but owner %q has not resynced", a.Owner)
		return Op{}, false
	}
	deleted := map[Key]bool{}
	for _, op := range deletes {
		deleted[op.Key] = true
	}
	for k := range in.Desired {
		if isNAT44(k.Kind) {
			p.Pending[gk] = fmt.Sprintf("kept: NAT44 item %s is still desired", k)
			return Op{}, false
		}
	}
	for k := range in.Applied {
		if isNAT44(k.Kind) && k != gk && !deleted[k] {
			p.Pending[gk] = fmt.Sprintf("kept: NAT44 item %s is still in VPP", k)
			return Op{}, false
		}
	}
	return Op{Type: OpDelete, Key: gk, Item: a.Item}, true
}

// aclAssignments merges the ACL bindings of every interface into one list
// per direction, ordered by (Priority, ACL name). An interface losing
// bindings gets the reduced list in the delete phase, before the ACLs are
// deleted (VPP refuses to delete a bound ACL); additions and reordering are
// set in the create phase, after new ACLs exist.
func (p *Plan) aclAssignments(in DiffInput, ready map[Key]bool) (dels, sets []Op) {
	// Bindings kept for owners that have not resynced have no known
	// priority (VPP does not store it): they keep their place in VPP's
	// current list relative to the desired ones, so that an agent restart,
	// where owners resync one after another, does not reorder the list.
	type dirLists struct{ in, out, keptIn, keptOut []*ACLBinding }
	want := map[string]*dirLists{}
	touch := map[string]bool{}
	addTo := func(b *ACLBinding, kept bool) {
		l := want[b.Interface]
		if l == nil {
			l = &dirLists{}
			want[b.Interface] = l
		}
		switch {
		case b.Direction == ACLOutput && kept:
			l.keptOut = append(l.keptOut, b)
		case b.Direction == ACLOutput:
			l.out = append(l.out, b)
		case kept:
			l.keptIn = append(l.keptIn, b)
		default:
			l.in = append(l.in, b)
		}
	}
	add := func(b *ACLBinding) { addTo(b, false) }
	in.eachBinding(func(k Key) {
		d, desired := in.Desired[k].(*ACLBinding)
		if desired {
			touch[d.Interface] = true
			if ready[k] {
				add(d)
			}
		}
		a, applied := in.Applied[k]
		if !applied {
			return
		}
		b, ok := a.Item.(*ACLBinding)
		if !ok {
			return
		}
		touch[b.Interface] = true
		if desired {
			if !ready[k] {
				add(b) // waiting for nothing we change now: keep it where it is
			}
			return
		}
		if !prunable(a, in.Resynced) {
			p.Pending[k] = fmt.Sprintf("kept: not desired, but owner %q has not resynced", a.Owner)
			addTo(b, true)
		}
	})
	for ifName := range in.ACLOrder {
		touch[ifName] = true
	}
	for _, ifName := range sortedKeys(touch) {
		if _, ok := in.Interfaces[ifName]; !ok {
			continue
		}
		l := want[ifName]
		if l == nil {
			l = &dirLists{}
		}
		cur := in.ACLOrder[ifName]
		finalIn := mergeKept(sortBindings(l.in), inOrder(l.keptIn, cur.Input), cur.Input)
		finalOut := mergeKept(sortBindings(l.out), inOrder(l.keptOut, cur.Output), cur.Output)
		if slices.Equal(cur.Input, finalIn) && slices.Equal(cur.Output, finalOut) {
			continue
		}
		keys := func(dir ACLDirection, names []string) []Key {
			var ks []Key
			for _, n := range names {
				ks = append(ks, ACLBindingKey(ifName, dir, n))
			}
			return ks
		}
		midIn, midOut := keepOnly(cur.Input, finalIn), keepOnly(cur.Output, finalOut)
		removedIn, removedOut := without(cur.Input, finalIn), without(cur.Output, finalOut)
		if len(removedIn)+len(removedOut) > 0 {
			dels = append(dels, Op{Type: OpSetACLs, Key: Key{KindACLBinding, ifName}, ACLs: &ACLAssignment{
				Interface: ifName, Input: midIn, Output: midOut,
				Bindings: append(keys(ACLInput, removedIn), keys(ACLOutput, removedOut)...),
			}})
			if slices.Equal(midIn, finalIn) && slices.Equal(midOut, finalOut) {
				continue
			}
		}
		sets = append(sets, Op{Type: OpSetACLs, Key: Key{KindACLBinding, ifName}, ACLs: &ACLAssignment{
			Interface: ifName, Input: finalIn, Output: finalOut,
			Bindings: append(keys(ACLInput, finalIn), keys(ACLOutput, finalOut)...),
		}})
	}
	return dels, sets
}

func sortBindings(bs []*ACLBinding) []string {
	slices.SortFunc(bs, func(a, b *ACLBinding) int {
		if c := cmp.Compare(a.Priority, b.Priority); c != 0 {
			return c
		}
		return cmp.Compare(a.ACL, b.ACL)
	})
	names := make([]string, 0, len(bs))
	seen := make(map[string]bool, len(bs))
	for _, b := range bs {
		if !seen[b.ACL] {
			seen[b.ACL] = true
			names = append(names, b.ACL)
		}
	}
	return names
}

// positions maps each name of list to its index. The helpers below look
// names up in it rather than scanning the list: an interface can carry a
// hundred or more ACLs (the renderers' filter shards), and a resync merges
// every interface's lists.
func positions(list []string) map[string]int {
	pos := make(map[string]int, len(list))
	for i, n := range list {
		if _, dup := pos[n]; !dup {
			pos[n] = i
		}
	}
	return pos
}

// at is n's index in the list pos was made from, or -1.
func at(pos map[string]int, n string) int {
	if i, ok := pos[n]; ok {
		return i
	}
	return -1
}

// inOrder returns the names of bs in the order they have in cur.
func inOrder(bs []*ACLBinding, cur []string) []string {
	pos := positions(cur)
	slices.SortStableFunc(bs, func(a, b *ACLBinding) int {
		return cmp.Compare(at(pos, a.ACL), at(pos, b.ACL))
	})
	names := make([]string, 0, len(bs))
	for _, b := range bs {
		names = append(names, b.ACL)
	}
	return names
}

// mergeKept inserts the kept names (in cur's order) into the desired list:
// each goes just before the first desired name that follows it in cur, or at
// the end when none does. A list that VPP already holds thus stays as it is.
func mergeKept(desired, kept, cur []string) []string {
	out := slices.Clone(desired)
	if len(kept) == 0 {
		return out
	}
	pos := positions(cur)
	for _, k := range kept {
		where := len(out)
		if p := at(pos, k); p >= 0 {
			for i, n := range out {
				if at(pos, n) > p {
					where = i
					break
				}
			}
		}
		out = slices.Insert(out, where, k)
	}
	return out
}

// keepOnly returns cur without the names missing from final, in cur's order.
func keepOnly(cur, final []string) []string {
	in := positions(final)
	var out []string
	for _, n := range cur {
		if _, ok := in[n]; ok {
			out = append(out, n)
		}
	}
	return out
}

// without returns the names of cur missing from final.
func without(cur, final []string) []string {
	in := positions(final)
	var out []string
	for _, n := range cur {
		if _, ok := in[n]; !ok {
			out = append(out, n)
		}
	}
	return out
}

// updateOps are the in-place operations from old to new (same key).
func updateOps(k Key, old, new Item) []Op {
	o, isLB := old.(*NAT44LBMapping)
	if !isLB {
		return []Op{{Type: OpUpdate, Key: k, Item: new, Old: old}}
	}
	n := new.(*NAT44LBMapping)
	added, removed, changed := diffLocals(o.Locals, n.Locals)
	var ops []Op
	for _, l := range added {
		ops = append(ops, Op{Type: OpAddLocal, Key: k, Item: new, Local: l})
	}
	for _, c := range changed {
		ops = append(ops,
			Op{Type: OpDelLocal, Key: k, Item: new, Local: c[0]},
			Op{Type: OpAddLocal, Key: k, Item: new, Local: c[1]})
	}
	for _, l := range removed {
		ops = append(ops, Op{Type: OpDelLocal, Key: k, Item: new, Local: l})
	}
	return ops
}

// localID is a local's identity in VPP (address, port and VRF).
type localID struct {
	addr netip.AddrPort
	vrf  uint32
}

func idOf(l NAT44LBLocal) localID { return localID{l.Addr, l.VRF} }

// diffLocals compares local sets: added, removed, and changed (old, new)
// pairs whose probability differs, each in canonical order. It runs twice
// per endpoint change. Both lists are canonical in practice (the store
// keeps desired values so, and applied ones come from the layer's writes
// or a sorted dump), so one merge walk suffices; others are sorted first.
func diffLocals(old, new []NAT44LBLocal) (added, removed []NAT44LBLocal, changed [][2]NAT44LBLocal) {
	old, new = canonicalLocals(old), canonicalLocals(new)
	i, j := 0, 0
	for i < len(old) || j < len(new) {
		var c int
		switch {
		case i == len(old):
			c = 1
		case j == len(new):
			c = -1
		default:
			c = compareLocals(old[i], new[j])
		}
		switch {
		case c < 0:
			removed = append(removed, old[i])
			i++
		case c > 0:
			added = append(added, new[j])
			j++
		default:
			if old[i].Probability != new[j].Probability {
				changed = append(changed, [2]NAT44LBLocal{old[i], new[j]})
			}
			i++
			j++
		}
	}
	return added, removed, changed
}

// canonicalLocals returns ls in canonical order, sorting a copy if needed.
func canonicalLocals(ls []NAT44LBLocal) []NAT44LBLocal {
	if slices.IsSortedFunc(ls, compareLocals) {
		return ls
	}
	c := slices.Clone(ls)
	SortLBLocals(c)
	return c
}

// needsRecreate reports whether VPP cannot change old into new in place.
func needsRecreate(old, new Item) bool {
	switch n := new.(type) {
	case *NAT44Global:
		o, c := canonicalGlobal(old.(*NAT44Global)), canonicalGlobal(n)
		return o.InsideVRF != c.InsideVRF || o.OutsideVRF != c.OutsideVRF || o.SessionLimit != c.SessionLimit
	case *NAT44LBMapping:
		o := old.(*NAT44LBMapping)
		if o.Affinity != n.Affinity || o.Out2InOnly != n.Out2InOnly || o.TwiceNAT != n.TwiceNAT || o.Label != n.Label {
			return true
		}
		added, removed, changed := diffLocals(o.Locals, n.Locals)
		// A changed weight is a del+add of that local, which must not leave
		// fewer than 2 locals while it is out.
		return len(changed) > 0 && len(o.Locals)+len(added) < 3 ||
			len(added)+len(removed)+len(changed) == 0 // identical sets in another order
	case *ACL, *CNATSnatConfig:
		return false
	case RecreateOnChange:
		if n.NeedsRecreate(old) {
			return true
		}
		_, isCNAT := new.(*CNATTranslation)
		return !isCNAT
	}
	return true
}

// EqualInVPP tells whether VPP holding observed (an object of a dump)
// means desired is applied, as the layer judges it: Equal, with VPP's
// defaults standing for the zero values that ask for them, and the fields
// VPP never reports (withUnobservable) taken as desired. Checkers of VPP's
// state compare with it.
func EqualInVPP(desired, observed Item) bool {
	return equalApplied(desired, withUnobservable(observed, desired))
}

// equalApplied compares a desired item with its applied value, treating VPP
// defaults as the values they stand for.
func equalApplied(desired, applied Item) bool {
	if d, ok := desired.(*NAT44Global); ok {
		a, ok := applied.(*NAT44Global)
		return ok && canonicalGlobal(d) == canonicalGlobal(a)
	}
	return desired.Equal(applied)
}

// NAT44 defaults VPP applies for zero values (session limit and timeouts).
const (
	DefaultNAT44Sessions       = 64512
	DefaultNAT44UDPTimeout     = 300
	DefaultNAT44TCPEstablished = 7440
	DefaultNAT44TCPTransitory  = 240
	DefaultNAT44ICMPTimeout    = 60
)

func canonicalGlobal(g *NAT44Global) NAT44Global {
	c := *g
	if c.SessionLimit == 0 {
		c.SessionLimit = DefaultNAT44Sessions
	}
	c.Timeouts = EffectiveTimeouts(c.Timeouts)
	return c
}

// EffectiveTimeouts replaces zero timeouts by VPP's defaults.
func EffectiveTimeouts(t NAT44Timeouts) NAT44Timeouts {
	def := func(v *uint32, d uint32) {
		if *v == 0 {
			*v = d
		}
	}
	def(&t.UDP, DefaultNAT44UDPTimeout)
	def(&t.TCPEstablished, DefaultNAT44TCPEstablished)
	def(&t.TCPTransitory, DefaultNAT44TCPTransitory)
	def(&t.ICMP, DefaultNAT44ICMPTimeout)
	return t
}

// prunable reports whether an applied item nobody desires may be deleted.
func prunable(a *AppliedItem, resynced map[string]bool) bool {
	return !a.Orphan || resynced[a.Owner]
}

func isNAT44(k Kind) bool { return k >= KindNAT44Global && k <= KindNAT44LBMapping }

// externalKey is VPP's external identity of a mapping: static, LB and
// identity mappings share one namespace keyed by address, port and protocol
// (without VRF).
// externalKeyOf is externalKey of an item whose key k is known: the key
// of an LB or a static (not address-only) mapping is built from the same
// fields, so its name is the external key and nothing is allocated.
func externalKeyOf(k Key, it Item) (string, bool) {
	switch v := it.(type) {
	case *NAT44LBMapping:
		return k.Name, true
	case *NAT44StaticMapping:
		if !v.AddrOnly {
			return k.Name, true
		}
	}
	return externalKey(it)
}

func externalKey(it Item) (string, bool) {
	switch v := it.(type) {
	case *NAT44StaticMapping:
		if v.AddrOnly {
			return v.External.Addr().String() + "/addr-only", true
		}
		return addrPortProto(v.External, v.Protocol), true
	case *NAT44LBMapping:
		return addrPortProto(v.External, v.Protocol), true
	case *NAT44IdentityMapping:
		if v.AddrOnly {
			return v.Addr.String() + "/addr-only", true
		}
		return fmt.Sprintf("%s:%d/%s", v.Addr, v.Port, v.Protocol), true
	}
	return "", false
}

func missingInterface(it Item, ifaces map[string]uint32) string {
	if b, ok := it.(InterfaceBound); ok {
		for _, name := range b.Interfaces() {
			if _, ok := ifaces[name]; !ok {
				return name
			}
		}
	}
	return ""
}

func boundInterfacesExist(it Item, ifaces map[string]uint32) bool {
	return missingInterface(it, ifaces) == ""
}
