package vppcfg

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
	"github.com/vppsvc/vppsvc/vppcfg/internal/acllists"
	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
)

// ACL bindings are not applied one by one: VPP takes the whole ACL list of
// an interface in one message, so the diff merges the bindings of every
// owner into one list per interface and direction (an ACLAssignment), and
// the dump's lists map back to bindings. This file is the binding kind's
// merger (core.Merger); the merged value, driverapi.ACLAssignment, is what the
// driver sends and dumps. What the kind remembers of VPP, the lists per
// interface (acllists.Lists), is its own state, which the engine keeps
// without looking inside.

// bindingMerger is the binding kind's merger.
var bindingMerger = &core.Merger{
	NewState: func() core.MergedState { return acllists.New() },
	Plan:     aclAssignments,
	Prepare:  resolveACLs,
	Record:   applyACLAssignment,
	Observe:  observeACLLists,
}

// listsOf is the kind's state among the hooks' arguments: the engine keeps
// what NewState made.
func listsOf(s core.MergedState) *acllists.Lists {
	if l, ok := s.(*acllists.Lists); ok {
		return l
	}
	return acllists.New()
}

// bindingWaitsFor holds back a binding whose ACL is neither applied nor
// about to be created: VPP binds ACLs by index.
func bindingWaitsFor(b *ACLBinding) (Key, string) {
	return ACLKey(b.ACL), fmt.Sprintf("waiting for acl %q", b.ACL)
}

// bindingOpText renders a merged op as "set-acls <interface> in=[…] out=[…]".
func bindingOpText(op driverapi.Op) string {
	a, ok := op.Item.(*driverapi.ACLAssignment)
	if !ok {
		return op.String()
	}
	return fmt.Sprintf("set-acls %s in=[%s] out=[%s]", a.Interface, strings.Join(a.Input, ","), strings.Join(a.Output, ","))
}

// aclAssignments merges the ACL bindings of every interface into one list
// per direction, ordered by (Priority, ACL name). An interface losing
// bindings gets the reduced list in the delete phase, before the ACLs are
// deleted (VPP refuses to delete a bound ACL); additions and reordering are
// set in the create phase, after new ACLs exist.
func aclAssignments(in core.MergeInput) (dels, sets []core.MergedOp) {
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
	in.EachKey(func(k Key) {
		di, _ := in.Desired(k)
		d, desired := di.(*ACLBinding)
		if desired {
			touch[d.Interface] = true
			if in.Ready(k) {
				add(d)
			}
		}
		ai, owner, prunable, applied := in.Applied(k)
		if !applied {
			return
		}
		b, ok := ai.(*ACLBinding)
		if !ok {
			return
		}
		touch[b.Interface] = true
		if desired {
			if !in.Ready(k) {
				add(b) // waiting for nothing we change now: keep it where it is
			}
			return
		}
		if !prunable {
			in.Pend(k, fmt.Sprintf("kept: not desired, but owner %q has not resynced", owner))
			addTo(b, true)
		}
	})
	lists := listsOf(in.State())
	for ifName := range lists.Order {
		touch[ifName] = true
	}
	for _, ifName := range core.SortedKeys(touch) {
		if !in.HasInterface(ifName) {
			continue
		}
		l := want[ifName]
		if l == nil {
			l = &dirLists{}
		}
		cur := lists.Order[ifName]
		finalIn := mergeKept(sortBindings(l.in), inOrder(l.keptIn, cur.Input), cur.Input)
		finalOut := mergeKept(sortBindings(l.out), inOrder(l.keptOut, cur.Output), cur.Output)
		if slices.Equal(cur.Input, finalIn) && slices.Equal(cur.Output, finalOut) {
			continue
		}
		keys := func(dir ACLDirection, names []string) []Key {
			var ks []Key
			for _, n := range names {
				ks = append(ks, aclBindingKey(ifName, dir, n))
			}
			return ks
		}
		midIn, midOut := keepOnly(cur.Input, finalIn), keepOnly(cur.Output, finalOut)
		removedIn, removedOut := without(cur.Input, finalIn), without(cur.Output, finalOut)
		if len(removedIn)+len(removedOut) > 0 {
			dels = append(dels, core.MergedOp{Op: driverapi.Op{Type: driverapi.OpUpdate, Key: driverapi.ACLListKey(ifName),
				Item: &driverapi.ACLAssignment{Interface: ifName, Input: midIn, Output: midOut}},
				Covers: append(keys(ACLInput, removedIn), keys(ACLOutput, removedOut)...),
			})
			if slices.Equal(midIn, finalIn) && slices.Equal(midOut, finalOut) {
				continue
			}
		}
		sets = append(sets, core.MergedOp{Op: driverapi.Op{Type: driverapi.OpUpdate, Key: driverapi.ACLListKey(ifName),
			Item: &driverapi.ACLAssignment{Interface: ifName, Input: finalIn, Output: finalOut}},
			Covers: append(keys(ACLInput, finalIn), keys(ACLOutput, finalOut)...),
		})
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

// resolveACLs maps ACL names to VPP indexes, foreign ACLs first. A name
// whose ACL is not in VPP (its create failed) is left out, and its binding
// fails, so that the other bindings of the interface still apply.
func resolveACLs(v core.AppliedView, op driverapi.Op, now time.Time) driverapi.Op {
	a, ok := op.Item.(*driverapi.ACLAssignment)
	if !ok {
		return op
	}
	c := *a
	front := listsOf(v.State()).Front[a.Interface]
	c.InputIndexes = slices.Clone(front.Input)
	c.OutputIndexes = slices.Clone(front.Output)
	c.Input, c.Output = nil, nil
	resolve := func(dir ACLDirection, names []string, idx *[]uint32, out *[]string) {
		for _, n := range names {
			handle, ok := v.Handle(ACLKey(n))
			if !ok {
				k := aclBindingKey(a.Interface, dir, n)
				v.Fail(k, fmt.Errorf("acl %q is not in VPP", n), now)
				continue
			}
			*idx = append(*idx, handle)
			*out = append(*out, n)
		}
	}
	resolve(ACLInput, a.Input, &c.InputIndexes, &c.Input)
	resolve(ACLOutput, a.Output, &c.OutputIndexes, &c.Output)
	op.Item = &c
	return op
}

// applyACLAssignment rebuilds the applied bindings of one interface.
func applyACLAssignment(v core.AppliedView, op driverapi.Op) {
	a, ok := op.Item.(*driverapi.ACLAssignment)
	if !ok {
		return
	}
	var keys []Key
	for _, n := range a.Input {
		keys = append(keys, aclBindingKey(a.Interface, ACLInput, n))
	}
	for _, n := range a.Output {
		keys = append(keys, aclBindingKey(a.Interface, ACLOutput, n))
	}
	v.Replace(func(it Item) bool {
		b, ok := it.(*ACLBinding)
		return ok && b.Interface == a.Interface
	}, keys)
	lists := listsOf(v.State())
	if len(a.Input)+len(a.Output) == 0 {
		delete(lists.Order, a.Interface)
	} else {
		lists.Order[a.Interface] = acllists.Names{Input: slices.Clone(a.Input), Output: slices.Clone(a.Output)}
	}
}

// observeACLLists maps the ACL lists a dump found on one interface back to
// bindings: indexes of our ACLs (classified before) become applied
// bindings in VPP order, the others stay in front as foreign.
func observeACLLists(v core.DumpView, o driverapi.Observed) {
	lists, ok := o.Item.(*driverapi.ACLAssignment)
	if !ok {
		return
	}
	ifName := lists.Interface
	var front acllists.Indexes
	var ours acllists.Names
	for _, dir := range []ACLDirection{ACLInput, ACLOutput} {
		idxs := lists.InputIndexes
		if dir == ACLOutput {
			idxs = lists.OutputIndexes
		}
		for _, idx := range idxs {
			name, ok := v.Name(KindACL, idx)
			if !ok {
				if dir == ACLInput {
					front.Input = append(front.Input, idx)
				} else {
					front.Output = append(front.Output, idx)
				}
				continue
			}
			if dir == ACLInput {
				ours.Input = append(ours.Input, name)
			} else {
				ours.Output = append(ours.Output, name)
			}
			addBinding(v, ifName, dir, name)
		}
	}
	found := listsOf(v.State())
	if len(front.Input)+len(front.Output) > 0 {
		found.Front[ifName] = front
	}
	if len(ours.Input)+len(ours.Output) > 0 {
		found.Order[ifName] = ours
	}
}

// addBinding records one of our ACLs bound to an interface as an applied
// binding, with the desired priority (VPP keeps none but the order), owned
// by its ACL's owner when nobody desires it.
func addBinding(v core.DumpView, ifName string, dir ACLDirection, aclName string) {
	key := aclBindingKey(ifName, dir, aclName)
	b := &ACLBinding{Interface: ifName, Direction: dir, ACL: aclName, Priority: math.MaxInt32}
	if d, ok := v.Desired(key); ok {
		if db, ok := d.(*ACLBinding); ok {
			b.Priority = db.Priority
		}
	}
	v.Adopt(key, b, ACLKey(aclName))
}
