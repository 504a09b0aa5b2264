package tracetest

import (
	"fmt"
	"net/netip"

	"github.com/vppsvc/vppsvc/fakevpp"
)

// LocalPods are the pods of ThisNode that NewDualStackNode gives a tap:
// pod N is on tapN with 10.1.1.N and fd00:1:1::N.
var LocalPods = []int{2, 3, 4, 9}

// NewDualStackNode returns the fake VPP of ThisNode with both families:
// uplink0 (192.168.16.1/24, fd00:16::1/64; remote pods 10.1.2.0/24 and
// fd00:1:2::/64 and the default routes), host0 (172.30.1.1/24,
// fd00:30::1/64) and a tap per LocalPods. They exist before the first
// connection, so they are VPP's startup configuration and survive a restart.
func NewDualStackNode(seed int64) *fakevpp.VPP {
	v := fakevpp.New(fakevpp.WithSeed(seed))
	v.AddInterface("uplink0", netip.MustParsePrefix("fd00:16::1/64"), netip.MustParsePrefix("192.168.16.1/24"))
	v.AddInterface("host0", netip.MustParsePrefix("fd00:30::1/64"), netip.MustParsePrefix("172.30.1.1/24"))
	for _, n := range LocalPods {
		tap := fmt.Sprintf("tap%d", n)
		v.AddInterface(tap)
		v.AddRoute(netip.MustParsePrefix(fmt.Sprintf("fd00:1:1::%d/128", n)), tap)
		v.AddRoute(netip.MustParsePrefix(fmt.Sprintf("10.1.1.%d/32", n)), tap)
	}
	for _, p := range []string{"fd00:1:2::/64", "::/0", "10.1.2.0/24", "0.0.0.0/0"} {
		v.AddRoute(netip.MustParsePrefix(p), "uplink0")
	}
	return v
}
