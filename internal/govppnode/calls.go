package govppnode

import (
	"context"
	"net/netip"

	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/ethernet_types"
	"go.fd.io/govpp/binapi/fib_types"
	interfaces "go.fd.io/govpp/binapi/interface"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip"
	"go.fd.io/govpp/binapi/ip_neighbor"
	"go.fd.io/govpp/binapi/ip_types"
)

// The messages that build a node. Each is one request (or one dump); the
// callers decide whether to check first, and wrap the error with what they
// were doing.

// AddDelAddress puts p (address and prefix length) on interface sw, or
// removes it.
func AddDelAddress(ctx context.Context, conn api.Connection, sw uint32, p netip.Prefix, add bool) error {
	_, err := interfaces.NewServiceClient(conn).SwInterfaceAddDelAddress(ctx, &interfaces.SwInterfaceAddDelAddress{
		SwIfIndex: interface_types.InterfaceIndex(sw), IsAdd: add, Prefix: AddressWithPrefix(p)})
	return err
}

// Addresses lists the addresses on interface sw, both families.
func Addresses(ctx context.Context, conn api.Connection, sw uint32) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, v6 := range []bool{false, true} {
		ds, err := RecvAll[*ip.IPAddressDetails](ip.NewServiceClient(conn).IPAddressDump(ctx, &ip.IPAddressDump{SwIfIndex: interface_types.InterfaceIndex(sw), IsIPv6: v6}))
		if err != nil {
			return nil, err
		}
		for _, d := range ds {
			out = append(out, FromPrefix(ip_types.Prefix(d.Prefix)))
		}
	}
	return out, nil
}

// SetUnnumbered makes interface sw borrow the addresses of interface from:
// IP enabled without an address of its own, as a CNI builds pod
// interfaces.
func SetUnnumbered(ctx context.Context, conn api.Connection, sw, from uint32) error {
	_, err := interfaces.NewServiceClient(conn).SwInterfaceSetUnnumbered(ctx, &interfaces.SwInterfaceSetUnnumbered{
		SwIfIndex: interface_types.InterfaceIndex(from), UnnumberedSwIfIndex: interface_types.InterfaceIndex(sw), IsAdd: true})
	return err
}

// Unnumbered reports whether interface sw borrows the addresses of from.
func Unnumbered(ctx context.Context, conn api.Connection, sw, from uint32) (bool, error) {
	ds, err := RecvAll[*ip.IPUnnumberedDetails](ip.NewServiceClient(conn).IPUnnumberedDump(ctx, &ip.IPUnnumberedDump{SwIfIndex: interface_types.InterfaceIndex(sw)}))
	if err != nil {
		return false, err
	}
	for _, d := range ds {
		if uint32(d.SwIfIndex) == sw && uint32(d.IPSwIfIndex) == from {
			return true, nil
		}
	}
	return false, nil
}

// PathProto is the next-hop protocol of a route to dst.
func PathProto(dst netip.Prefix) fib_types.FibPathNhProto {
	if dst.Addr().Is6() {
		return fib_types.FIB_API_PATH_NH_PROTO_IP6
	}
	return fib_types.FIB_API_PATH_NH_PROTO_IP4
}

// Path is the one path of a route to dst out of interface sw, resolved in
// table, through next hop nh (none: attached to sw).
func Path(sw, table uint32, dst netip.Prefix, nh netip.Addr) fib_types.FibPath {
	p := fib_types.FibPath{SwIfIndex: sw, TableID: table, Weight: 1, Proto: PathProto(dst)}
	if nh.IsValid() {
		p.Nh = fib_types.FibPathNh{Address: Address(nh).Un}
	}
	return p
}

// Route is a route to dst in table with one path.
func Route(table uint32, dst netip.Prefix, path fib_types.FibPath) ip.IPRoute {
	return ip.IPRoute{TableID: table, Prefix: Prefix(dst), NPaths: 1, Paths: []fib_types.FibPath{path}}
}

// AddDelRoute installs route (replacing the paths of a route to the same
// prefix) or removes it.
func AddDelRoute(ctx context.Context, conn api.Connection, route ip.IPRoute, add bool) error {
	_, err := ip.NewServiceClient(conn).IPRouteAddDel(ctx, &ip.IPRouteAddDel{IsAdd: add, Route: route})
	return err
}

// AddStaticNeighbour gives interface sw the static neighbour a with
// hardware address mac.
func AddStaticNeighbour(ctx context.Context, conn api.Connection, sw uint32, a netip.Addr, mac [6]byte) error {
	_, err := ip_neighbor.NewServiceClient(conn).IPNeighborAddDel(ctx, &ip_neighbor.IPNeighborAddDel{IsAdd: true, Neighbor: ip_neighbor.IPNeighbor{
		SwIfIndex: interface_types.InterfaceIndex(sw), Flags: ip_neighbor.IP_API_NEIGHBOR_FLAG_STATIC,
		MacAddress: ethernet_types.MacAddress(mac), IPAddress: Address(a)}})
	return err
}
