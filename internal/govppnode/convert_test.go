package govppnode

import (
	"net/netip"
	"testing"

	"go.fd.io/govpp/binapi/fib_types"
	"go.fd.io/govpp/binapi/ip_types"
)

func TestConversionsRoundTrip(t *testing.T) {
	for _, s := range []string{"10.1.2.3/24", "192.168.16.1/32", "fd00::1/64", "::/0"} {
		p := netip.MustParsePrefix(s)
		if got := FromAddress(Address(p.Addr())); got != p.Addr() {
			t.Errorf("address %s came back as %s", p.Addr(), got)
		}
		if got := FromPrefix(Prefix(p)); got != p {
			t.Errorf("prefix %s came back as %s", p, got)
		}
		if got := FromPrefix(ip_types.Prefix(AddressWithPrefix(p))); got != p {
			t.Errorf("interface address %s came back as %s", p, got)
		}
	}
	if Address(netip.MustParseAddr("10.0.0.1")).Af != ip_types.ADDRESS_IP4 || Address(netip.MustParseAddr("fd00::1")).Af != ip_types.ADDRESS_IP6 {
		t.Error("an address takes its own family")
	}
}

// TestPath: the next hop is set only when given, and the protocol follows
// the destination's family.
func TestPath(t *testing.T) {
	p4 := Path(3, 7, netip.MustParsePrefix("10.0.0.0/8"), netip.Addr{})
	if p4.Proto != fib_types.FIB_API_PATH_NH_PROTO_IP4 || p4.Nh != (fib_types.FibPathNh{}) || p4.SwIfIndex != 3 || p4.TableID != 7 || p4.Weight != 1 {
		t.Errorf("attached IPv4 path: %+v", p4)
	}
	nh := netip.MustParseAddr("fd00::1")
	p6 := Path(4, 0, netip.MustParsePrefix("fd00::/64"), nh)
	if p6.Proto != fib_types.FIB_API_PATH_NH_PROTO_IP6 || p6.Nh.Address != Address(nh).Un {
		t.Errorf("IPv6 path through %s: %+v", nh, p6)
	}
}
