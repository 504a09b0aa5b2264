package vppcfg

import (
	"cmp"
	"testing"
)

// Key.Compare orders by kind, then by name byte-wise, as cmp.Compare does.
func TestKeyCompareOrder(t *testing.T) {
	keys := []Key{
		{}, {Kind: KindNAT44Global}, {Kind: KindNAT44StaticMapping, Name: "10.0.0.1:80/TCP"},
		{Kind: KindNAT44StaticMapping, Name: "10.0.0.1:80/UDP"}, {Kind: KindNAT44StaticMapping, Name: "10.0.0.10:80/TCP"},
		{Kind: KindNAT44LBMapping, Name: "10.0.0.1:80/TCP"}, {Kind: KindDropRoute, Name: "é"}, {Kind: KindDropRoute, Name: "e"},
	}
	for _, a := range keys {
		for _, b := range keys {
			want := cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name))
			if got := a.Compare(b); got != want {
				t.Errorf("%v.Compare(%v) = %d, want %d", a, b, got, want)
			}
		}
	}
}
