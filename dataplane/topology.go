package dataplane

import (
	"net/netip"
	"testing"
)

// Topology is a node as a CNI would build it in VPP before vppsvc's agent
// connects: interfaces with their addresses, pod interfaces unnumbered to
// another one (IP enabled without addresses of their own), routes and
// static neighbours. The trace tests' ThisNode and the CLI's simulated
// node are both one; BuildIn creates it in any Node.
type Topology struct {
	Interfaces []Interface
	Routes     []Route
	// Neighbours are hosts of a connected subnet that packets are sent to
	// (another node's IP): a real VPP would otherwise drop them in glean
	// while it resolves the address.
	Neighbours []Neighbour
}

// Interface is one interface of a Topology.
type Interface struct {
	Name  string
	Addrs []netip.Prefix
	// UnnumberedTo names the interface whose addresses this one borrows
	// (`set interface unnumbered`), as a CNI builds a pod's tap: the tap
	// has no address of its own, and VPP drops every packet received on
	// an interface where IPv4 or IPv6 is not enabled (ip4-not-enabled /
	// ip6-not-enabled); being unnumbered enables both families. Empty: not
	// unnumbered.
	UnnumberedTo string
}

// Route sends Dst out of Interface.
type Route struct {
	Dst       netip.Prefix
	Interface string
}

// Neighbour is a host Addr on Interface's subnet.
type Neighbour struct {
	Interface string
	Addr      netip.Addr
}

// BuildIn creates t in node, in order: interfaces, then unnumbered links,
// then routes, then neighbours.
func (t Topology) BuildIn(node Node) error {
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

// Build is BuildIn for a test: any refusal fails it.
func (t Topology) Build(tb testing.TB, node Node) Node {
	tb.Helper()
	if err := t.BuildIn(node); err != nil {
		tb.Fatal(err)
	}
	return node
}

// Then appends u to t.
func (t Topology) Then(u Topology) Topology {
	t.Interfaces = append(t.Interfaces, u.Interfaces...)
	t.Routes = append(t.Routes, u.Routes...)
	t.Neighbours = append(t.Neighbours, u.Neighbours...)
	return t
}
