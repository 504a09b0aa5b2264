package vppcfg

import (
	"net/netip"
	"testing"
)

func TestDropRouteKey(t *testing.T) {
	for _, tc := range []struct {
		p    string
		vrf  uint32
		want string
	}{{"10.96.0.10/32", 0, "drop-route/vrf0/10.96.0.10/32"}, {"fd00:96::/108", 4294967294, "drop-route/vrf4294967294/fd00:96::/108"}} {
		if got := dropRouteKey(netip.MustParsePrefix(tc.p), tc.vrf).String(); got != tc.want {
			t.Errorf("dropRouteKey(%s, %d) = %s, want %s", tc.p, tc.vrf, got, tc.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = dropRouteKey(netip.MustParsePrefix("10.96.0.10/32"), 0) }); n > 1 {
		t.Errorf("dropRouteKey allocates %.0f times, want 1", n)
	}
}
