package apiaddr

import (
	"net/netip"
	"testing"

	"go.fd.io/govpp/binapi/ip_types"
)

func TestRoundTrip(t *testing.T) {
	for _, s := range []string{"10.1.1.2", "0.0.0.0", "fd00:96::10", "::"} {
		a := netip.MustParseAddr(s)
		got, ok := From(To(a))
		if !ok || got != a {
			t.Errorf("%s: round trip gave %s, %t", s, got, ok)
		}
	}
	if _, ok := From(ip_types.Address{Af: 7}); ok {
		t.Error("an unknown family converted")
	}
}
