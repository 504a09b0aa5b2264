package tracetest

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/vppsvc/vppsvc/dataplane"
	"github.com/vppsvc/vppsvc/fakevpp"
)

// LocalPods are the pods of ThisNode that the node builders give an
// interface: pod N is on tapN with 10.1.1.N and fd00:1:1::N.
var LocalPods = []int{2, 3, 4, 9}

// Topology is ThisNode as a CNI would build it in VPP: interfaces with
// their addresses, pod interfaces unnumbered to host0 (IP enabled without
// addresses of their own), and routes. Build creates it in a data plane.
type Topology struct {
	Interfaces []Interface
	Routes     []Route
	// Neighbours are hosts of a connected subnet that packets are sent to
	// (another node's IP): a real VPP would otherwise drop them in glean
	// while it resolves the address.
	Neighbours []Neighbour
}

// Neighbour is a host Addr on Interface's subnet.
type Neighbour struct {
	Interface string
	Addr      netip.Addr
}

// Interface is one interface of a Topology.
type Interface struct {
	Name         string
	Addrs        []netip.Prefix
	UnnumberedTo string
}

// Route sends Dst out of Interface.
type Route struct {
	Dst       netip.Prefix
	Interface string
}

// Build creates t in node, in order; any refusal fails the test.
func (t Topology) Build(tb testing.TB, node dataplane.Node) dataplane.Node {
	tb.Helper()
	if err := t.BuildIn(node); err != nil {
		tb.Fatal(err)
	}
	return node
}

// BuildIn creates t in node, in order: interfaces, then unnumbered
// links, then routes.
func (t Topology) BuildIn(node dataplane.Node) error {
	for _, ifc := range t.Interfaces {
		if err := node.AddInterface(ifc.Name, ifc.Addrs...); err != nil {
			return err
		}
	}
	for _, ifc := range t.Interfaces {
		if ifc.UnnumberedTo == "" {
			continue
		}
		if err := node.SetUnnumbered(ifc.Name, ifc.UnnumberedTo); err != nil {
			return err
		}
	}
	for _, r := range t.Routes {
		if err := node.AddRoute(r.Dst, r.Interface); err != nil {
			return err
		}
	}
	for _, n := range t.Neighbours {
		if err := node.AddNeighbour(n.Interface, n.Addr); err != nil {
			return err
		}
	}
	return nil
}

// PodTaps are the interfaces of LocalPods, unnumbered to host0, each with
// host routes to its pod's addresses of the given families.
func PodTaps(v4, v6 bool) Topology {
	var t Topology
	for _, n := range LocalPods {
		tap := fmt.Sprintf("tap%d", n)
		t.Interfaces = append(t.Interfaces, Interface{Name: tap, UnnumberedTo: "host0"})
		if v6 {
			t.Routes = append(t.Routes, Route{netip.MustParsePrefix(fmt.Sprintf("fd00:1:1::%d/128", n)), tap})
		}
		if v4 {
			t.Routes = append(t.Routes, Route{netip.MustParsePrefix(fmt.Sprintf("10.1.1.%d/32", n)), tap})
		}
	}
	return t
}

// Then appends u to t.
func (t Topology) Then(u Topology) Topology {
	t.Interfaces = append(t.Interfaces, u.Interfaces...)
	t.Routes = append(t.Routes, u.Routes...)
	t.Neighbours = append(t.Neighbours, u.Neighbours...)
	return t
}

// DualStackTopology is ThisNode with both families: uplink0
// (192.168.16.1/24, fd00:16::1/64; remote pods 10.1.2.0/24 and
// fd00:1:2::/64 and the default routes; OtherNode's 192.168.16.2 and
// fd00:16::2 as neighbours), host0 (172.30.1.1/24, fd00:30::1/64) and a tap
// per LocalPods.
func DualStackTopology() Topology {
	t := Topology{Interfaces: []Interface{
		{Name: "uplink0", Addrs: []netip.Prefix{netip.MustParsePrefix("fd00:16::1/64"), netip.MustParsePrefix("192.168.16.1/24")}},
		{Name: "host0", Addrs: []netip.Prefix{netip.MustParsePrefix("fd00:30::1/64"), netip.MustParsePrefix("172.30.1.1/24")}},
	}}.Then(PodTaps(true, true))
	for _, p := range []string{"fd00:1:2::/64", "::/0", "10.1.2.0/24", "0.0.0.0/0"} {
		t.Routes = append(t.Routes, Route{netip.MustParsePrefix(p), "uplink0"})
	}
	// OtherNode's addresses on the uplink's subnets.
	for _, a := range []string{"fd00:16::2", "192.168.16.2"} {
		t.Neighbours = append(t.Neighbours, Neighbour{"uplink0", netip.MustParseAddr(a)})
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
