package model

import (
	"slices"
	"testing"
)

// TestZones: a set is sorted and distinct, without empty names; List is a
// copy, so that a set never changes once made; Equal compares contents.
func TestZones(t *testing.T) {
	check := func(what string, ok bool) {
		t.Helper()
		if !ok {
			t.Error(what)
		}
	}
	check("no names: empty", NewZones().Len() == 0 && NewZones("", "").Len() == 0 && NewZones("").List() == nil)
	check("the empty set has nothing", !Zones{}.Has(""))

	z := NewZones("zone-b", "zone-a", "", "zone-b")
	check("sorted, distinct, no empty name", slices.Equal(z.List(), []string{"zone-a", "zone-b"}) && z.Len() == 2)
	check("Has", z.Has("zone-a") && !z.Has("zone-c"))

	l := z.List()
	l[0] = "changed"
	check("List is a copy", slices.Equal(z.List(), []string{"zone-a", "zone-b"}))
	names := []string{"x", "y"}
	y := NewZones(names...)
	names[0] = "changed"
	check("NewZones copies its input", slices.Equal(y.List(), []string{"x", "y"}))

	check("Equal by contents", z.Equal(NewZones("zone-a", "zone-b")) && Zones{}.Equal(NewZones("")))
	check("Equal tells sets apart", !z.Equal(NewZones("zone-a")) && !z.Equal(Zones{}) && !(Zones{}).Equal(z))
}
