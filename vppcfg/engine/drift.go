package engine

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
)

// Drift is how VPP differs from a desired state, found by classifying a dump
// as a resync does but without planning or applying anything: the read-only
// half of a resync, for an operator's check of a live VPP.
type Drift struct {
	// Missing are desired items VPP does not hold.
	Missing []DriftItem
	// Extra are objects in VPP that an owner of this layer made (tagged
	// vppsvc:<owner>:…) or claims, and that nobody desires: a resync of
	// that owner would delete them.
	Extra []DriftItem
	// Changed are desired items VPP holds with other values.
	Changed []DriftChange
	// Unverifiable counts desired items of kinds VPP cannot dump
	// (State.Unobservable): they are re-asserted, never compared.
	Unverifiable int
	// InSync counts desired items VPP holds as desired.
	InSync int
}

// Empty reports whether VPP holds exactly the desired state (as far as a
// dump can tell).
func (d Drift) Empty() bool { return len(d.Missing)+len(d.Extra)+len(d.Changed) == 0 }

// DriftItem is one missing or extra item.
type DriftItem struct {
	Key   vppcfg.Key
	Owner string
	Item  vppcfg.Item
	// Reason says why a missing item is missing, when the dump tells: an
	// interface VPP does not have, or an object at its identity that this
	// layer must not touch.
	Reason string
}

// DriftChange is one item VPP holds with other values than desired.
type DriftChange struct {
	Key      vppcfg.Key
	Owner    string
	Desired  vppcfg.Item
	Observed vppcfg.Item
	// Fields are the differing fields; empty when only VPP's canonical form
	// tells them apart.
	Fields []FieldDiff
}

// FieldDiff is one differing field of a changed item. For a list field
// (LB locals, ACL rules, cnat paths) Desired and Observed hold only the
// elements the other side lacks, and Reordered is set when both hold the
// same elements in another order.
type FieldDiff struct {
	Reordered bool
	Field     string
	Desired   string
	Observed  string
}

// CompareWithVPP compares desired items (with their owners) with a dump of
// VPP. claims are the owners' claims on untagged objects, as given to the
// reconciler (Options.Claims). It neither changes VPP nor needs a
// reconciler: the desired state may come from a simulation.
func CompareWithVPP(desired []OwnedItem, st *driverapi.State, claims map[string]vppcfg.UntaggedClaimFunc) Drift {
	s := core.NewStore()
	for _, d := range desired {
		for _, o := range d.Owners {
			s.Hold(d.Key, o, d.Item)
		}
	}
	c := classify(st, viewOf(s), claims)
	var out Drift
	for _, k := range core.SortedKeys(s.Items) {
		want, owner := s.Items[k].Item, s.OwnerNames(k)
		if st.Unobservable[k.Kind] {
			out.Unverifiable++
			continue
		}
		got, ok := c.applied[k]
		if !ok {
			di := DriftItem{Key: k, Owner: owner, Item: want}
			if name := missingInterface(want, st.Interfaces); name != "" {
				di.Reason = fmt.Sprintf("interface %s does not exist in VPP", name)
			} else if f, foreign := c.foreign[k]; foreign {
				di.Reason = fmt.Sprintf("VPP holds an object of another control plane there: %s", f)
			}
			out.Missing = append(out.Missing, di)
			continue
		}
		if EqualInVPP(want, got.Item) {
			out.InSync++
			continue
		}
		out.Changed = append(out.Changed, DriftChange{Key: k, Owner: owner, Desired: want, Observed: got.Item,
			Fields: fieldDiffs(want, core.WithUnobservable(got.Item, want))})
	}
	for _, k := range core.SortedKeys(c.applied) {
		if a := c.applied[k]; a.Orphan {
			out.Extra = append(out.Extra, DriftItem{Key: k, Owner: a.Owner.String(), Item: a.Item})
		}
	}
	return out
}

// fieldDiffs lists the exported fields in which two items of one kind
// differ. List fields are compared as sets of elements, so that one local
// added to an LB mapping reads as that local rather than as two lists.
func fieldDiffs(desired, observed vppcfg.Item) []FieldDiff {
	dv, ov := reflect.Indirect(reflect.ValueOf(desired)), reflect.Indirect(reflect.ValueOf(observed))
	if dv.Kind() != reflect.Struct || dv.Type() != ov.Type() {
		return []FieldDiff{{Field: "kind", Desired: fmt.Sprintf("%T", desired), Observed: fmt.Sprintf("%T", observed)}}
	}
	var out []FieldDiff
	for i := range dv.NumField() {
		f := dv.Type().Field(i)
		if !f.IsExported() {
			continue
		}
		a, b := dv.Field(i).Interface(), ov.Field(i).Interface()
		if reflect.DeepEqual(a, b) {
			continue
		}
		if dv.Field(i).Kind() == reflect.Slice {
			only, extra, reordered := sliceDiff(dv.Field(i), ov.Field(i))
			out = append(out, FieldDiff{Field: f.Name, Desired: only, Observed: extra, Reordered: reordered})
			continue
		}
		out = append(out, FieldDiff{Field: f.Name, Desired: fmt.Sprint(a), Observed: fmt.Sprint(b)})
	}
	return out
}

// sliceDiff renders the elements only in a and only in b; for a pure
// reordering, both lists whole.
func sliceDiff(a, b reflect.Value) (onlyA, onlyB string, reordered bool) {
	render := func(v reflect.Value) []string {
		out := make([]string, v.Len())
		for i := range out {
			out[i] = fmt.Sprint(v.Index(i).Interface())
		}
		return out
	}
	as, bs := render(a), render(b)
	var ao, bo []string
	for _, x := range as {
		if !slices.Contains(bs, x) {
			ao = append(ao, x)
		}
	}
	for _, x := range bs {
		if !slices.Contains(as, x) {
			bo = append(bo, x)
		}
	}
	if len(ao)+len(bo) == 0 {
		return "[" + strings.Join(as, " ") + "]", "[" + strings.Join(bs, " ") + "]", true
	}
	return "[" + strings.Join(ao, " ") + "]", "[" + strings.Join(bo, " ") + "]", false
}
