package vppcfg

import (
	"cmp"
	"fmt"
	"slices"
)

// ACL bindings are not applied one by one: VPP takes the whole ACL list of
// an interface in one message, so the diff merges the bindings of every
// owner into one list per interface and direction.

// bindingsWaitForACLs holds back bindings whose ACL is neither applied nor
// about to be created: VPP binds ACLs by index.
func (p *opPlan) bindingsWaitForACLs(sc *scope, in diffInput, ready map[Key]bool) {
	sc.eachDesired(func(k Key, d Item) {
		if b, ok := d.(*ACLBinding); ok && ready[k] {
			acl := ACLKey(b.ACL)
			if _, applied := in.Applied[acl]; !ready[acl] && !applied {
				delete(ready, k)
				p.Pending[k] = fmt.Sprintf("waiting for acl %q", b.ACL)
			}
		}
	})
}

// aclAssignments merges the ACL bindings of every interface into one list
// per direction, ordered by (Priority, ACL name). An interface losing
// bindings gets the reduced list in the delete phase, before the ACLs are
// deleted (VPP refuses to delete a bound ACL); additions and reordering are
// set in the create phase, after new ACLs exist.
func (p *opPlan) aclAssignments(in diffInput, ready map[Key]bool) (dels, sets []Op) {
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
		d, desired := in.Desired[k].item.(*ACLBinding)
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
			p.Pending[k] = fmt.Sprintf("kept: not desired, but owner %q has not resynced", a.Owner.String())
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
