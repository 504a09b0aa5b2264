package renderer

import (
	"net/netip"
	"testing"

	"github.com/vppsvc/vppsvc/vppcfg"
)

func TestPermitAllACLIsSharedByValue(t *testing.T) {
	a, b := PermitAllACL(), PermitAllACL()
	if a == b {
		t.Fatal("PermitAllACL must return a fresh value each time (items are owned by callers)")
	}
	if a.Key() != b.Key() || !a.Equal(b) {
		t.Fatalf("two calls differ: %s vs %s", a, b)
	}
	if a.Key() != vppcfg.ACLKey(PermitAllACLName) {
		t.Fatalf("key = %s", a.Key())
	}
}

func TestPermitAllACLCoversBothFamilies(t *testing.T) {
	want := map[netip.Prefix]bool{
		netip.MustParsePrefix("0.0.0.0/0"): false,
		netip.MustParsePrefix("::/0"):      false,
	}
	for _, r := range PermitAllACL().Rules {
		if r.Action != vppcfg.ACLPermit || r.Protocol != vppcfg.ProtoAny || r.Src != r.Dst {
			t.Fatalf("unexpected rule %s", r)
		}
		if _, ok := want[r.Src]; !ok {
			t.Fatalf("unexpected prefix in %s", r)
		}
		want[r.Src] = true
	}
	for p, seen := range want {
		if !seen {
			t.Fatalf("no rule for %s", p)
		}
	}
}

func TestPermitAllBindingComesLast(t *testing.T) {
	b := PermitAllBinding("tap0")
	want := &vppcfg.ACLBinding{Interface: "tap0", Direction: vppcfg.ACLInput, ACL: PermitAllACLName, Priority: PermitAllPriority}
	if !b.Equal(want) {
		t.Fatalf("PermitAllBinding = %s, want %s", b, want)
	}
	if PermitAllPriority <= ServiceACLPriority {
		t.Fatal("the permit-all ACL must sort after service ACLs")
	}
}
