package tracetest

import (
	"fmt"
	"net/netip"

	"github.com/vppsvc/vppsvc/dataplane"
	"github.com/vppsvc/vppsvc/fakevpp"
)

// LocalPods are the pods of ThisNode that the node builders give an
// interface: pod N is on tapN with 10.1.1.N and fd00:1:1::N.
var LocalPods = []int{2, 3, 4, 9}

// PodTaps are the interfaces of LocalPods, unnumbered to host0, each with
// host routes to its pod's addresses of the given families.
func PodTaps(v4, v6 bool) dataplane.Topology {
	var t dataplane.Topology
	for _, n := range LocalPods {
		tap := fmt.Sprintf("tap%d", n)
		t.Interfaces = append(t.Interfaces, dataplane.Interface{Name: tap, UnnumberedTo: "host0"})
		if v6 {
			t.Routes = append(t.Routes, dataplane.Route{Dst: netip.MustParsePrefix(fmt.Sprintf("fd00:1:1::%d/128", n)), Interface: tap})
		}
		if v4 {
			t.Routes = append(t.Routes, dataplane.Route{Dst: netip.MustParsePrefix(fmt.Sprintf("10.1.1.%d/32", n)), Interface: tap})
		}
	}
	return t
}

// The node IPs of DualStackTopology: ThisNode's on uplink0, and OtherNode's.
var (
	NodeIP4, OtherNodeIP4 = netip.MustParseAddr("192.168.16.1"), netip.MustParseAddr("192.168.16.2")
	NodeIP6, OtherNodeIP6 = netip.MustParseAddr("fd00:16::1"), netip.MustParseAddr("fd00:16::2")
)

// DualStackTopology is ThisNode with both families: uplink0
// (192.168.16.1/24, fd00:16::1/64; remote pods 10.1.2.0/24 and
// fd00:1:2::/64 and the default routes; OtherNode's 192.168.16.2 and
// fd00:16::2 as neighbours), host0 (172.30.1.1/24, fd00:30::1/64) and a tap
// per LocalPods.
func DualStackTopology() dataplane.Topology {
	t := dataplane.Topology{Interfaces: []dataplane.Interface{
		{Name: "uplink0", Addrs: []netip.Prefix{netip.MustParsePrefix("fd00:16::1/64"), netip.MustParsePrefix("192.168.16.1/24")}},
		{Name: "host0", Addrs: []netip.Prefix{netip.MustParsePrefix("fd00:30::1/64"), netip.MustParsePrefix("172.30.1.1/24")}},
	}}.Then(PodTaps(true, true))
	for _, p := range []string{"fd00:1:2::/64", "::/0", "10.1.2.0/24", "0.0.0.0/0"} {
		t.Routes = append(t.Routes, dataplane.Route{Dst: netip.MustParsePrefix(p), Interface: "uplink0"})
	}
	// OtherNode's addresses on the uplink's subnets.
	for _, a := range []string{"fd00:16::2", "192.168.16.2"} {
		t.Neighbours = append(t.Neighbours, dataplane.Neighbour{Interface: "uplink0", Addr: netip.MustParseAddr(a)})
	}
	return t
}

// NewDualStackNode returns the fake VPP of ThisNode with both families
// (DualStackTopology). Its interfaces exist before the first connection,
// so they are VPP's startup configuration and survive a restart.
func NewDualStackNode(seed int64) *fakevpp.VPP {
	f := dataplane.NewFake(seed)
	if err := DualStackTopology().BuildIn(f); err != nil {
		panic(err) // the fake refuses nothing this fixed topology asks for
	}
	return f.VPP
}
