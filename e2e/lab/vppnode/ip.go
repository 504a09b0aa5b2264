package vppnode

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"

	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip"
	"go.fd.io/govpp/binapi/ip_neighbor"
	"go.fd.io/govpp/binapi/ip_types"

	"github.com/vppsvc/vppsvc/internal/govppnode"
)

func (c *Client) index(ctx context.Context, name string) (interface_types.InterfaceIndex, error) {
	i, err := c.Interface(ctx, name)
	return interface_types.InterfaceIndex(i.Index), err
}

// Addresses lists the addresses on VPP's interface name, both families.
func (c *Client) Addresses(ctx context.Context, name string) ([]netip.Prefix, error) {
	sw, err := c.index(ctx, name)
	if err != nil {
		return nil, err
	}
	return c.addresses(ctx, sw)
}

func (c *Client) addresses(ctx context.Context, sw interface_types.InterfaceIndex) ([]netip.Prefix, error) {
	out, err := govppnode.Addresses(ctx, c.api, uint32(sw))
	if err != nil {
		return nil, fmt.Errorf("ip_address_dump: %w", err)
	}
	return out, nil
}

// AddAddress puts p (address and prefix length) on VPP's interface name,
// unless it is there.
func (c *Client) AddAddress(ctx context.Context, name string, p netip.Prefix) error {
	if !p.IsValid() {
		return fmt.Errorf("address on %s: invalid prefix", name)
	}
	sw, err := c.index(ctx, name)
	if err != nil {
		return err
	}
	have, err := c.addresses(ctx, sw)
	if err != nil {
		return err
	}
	for _, h := range have {
		if h == p {
			return nil
		}
	}
	err = govppnode.AddDelAddress(ctx, c.api, uint32(sw), p, true)
	c.changed("sw_interface_add_del_address")
	if err != nil {
		return fmt.Errorf("address %s on %s: %w", p, name, err)
	}
	return nil
}

// SetUnnumbered makes VPP's interface name borrow the addresses of from:
// IP enabled without an address of its own, as a CNI builds pod
// interfaces (without it VPP drops what arrives: ip4-not-enabled).
func (c *Client) SetUnnumbered(ctx context.Context, name, from string) error {
	sw, err := c.index(ctx, name)
	if err != nil {
		return err
	}
	src, err := c.index(ctx, from)
	if err != nil {
		return err
	}
	done, err := govppnode.Unnumbered(ctx, c.api, uint32(sw), uint32(src))
	if err != nil {
		return fmt.Errorf("ip_unnumbered_dump: %w", err)
	}
	if done {
		return nil
	}
	err = govppnode.SetUnnumbered(ctx, c.api, uint32(sw), uint32(src))
	c.changed("sw_interface_set_unnumbered")
	if err != nil {
		return fmt.Errorf("unnumbered %s to %s: %w", name, from, err)
	}
	return nil
}

// EnableIP6 enables IPv6 on VPP's interface name (a link-local address,
// neighbour discovery), unless it is enabled: VPP counts each enable, so
// a second one would leak a reference.
func (c *Client) EnableIP6(ctx context.Context, name string) error {
	sw, err := c.index(ctx, name)
	if err != nil {
		return err
	}
	_, err = ip.NewServiceClient(c.api).SwInterfaceIP6GetLinkLocalAddress(ctx, &ip.SwInterfaceIP6GetLinkLocalAddress{SwIfIndex: sw})
	if err == nil {
		return nil
	}
	if !errors.Is(err, api.IP6_NOT_ENABLED) {
		return fmt.Errorf("link-local address of %s: %w", name, err)
	}
	_, err = ip.NewServiceClient(c.api).SwInterfaceIP6EnableDisable(ctx, &ip.SwInterfaceIP6EnableDisable{SwIfIndex: sw, Enable: true})
	c.changed("sw_interface_ip6_enable_disable")
	if err != nil {
		return fmt.Errorf("enable IPv6 on %s: %w", name, err)
	}
	return nil
}

// Route is a route of VPP's default table.
type Route struct {
	Dst netip.Prefix
	// Via is the next hop; the zero Addr makes the route attached to Dev:
	// a host route's next hop is then the host itself, a wider route's
	// destinations are each resolved on Dev.
	Via netip.Addr
	// Dev is VPP's name of the interface the route leaves by.
	Dev string
}

func (r Route) String() string {
	if r.Via.IsValid() {
		return fmt.Sprintf("%s via %s %s", r.Dst, r.Via, r.Dev)
	}
	return fmt.Sprintf("%s %s", r.Dst, r.Dev)
}

func (c *Client) routeBody(ctx context.Context, r Route) (ip.IPRoute, error) {
	if !r.Dst.IsValid() || r.Dev == "" {
		return ip.IPRoute{}, fmt.Errorf("route %v: want a destination and an interface", r)
	}
	if r.Via.IsValid() && r.Via.Is4() != r.Dst.Addr().Is4() {
		return ip.IPRoute{}, fmt.Errorf("route %v: next hop of another family", r)
	}
	sw, err := c.index(ctx, r.Dev)
	if err != nil {
		return ip.IPRoute{}, err
	}
	nh := r.Via
	if !nh.IsValid() && r.Dst.IsSingleIP() {
		// A host route's next hop is the host: an attached-nexthop path,
		// resolved by the host's neighbour entry (as the CLI's "via
		// <interface>" builds it). A bare attached /32 did not forward
		// on VPP 25.10.
		nh = r.Dst.Addr()
	}
	return govppnode.Route(0, r.Dst.Masked(), govppnode.Path(uint32(sw), 0, r.Dst, nh)), nil
}

// deleteRoutesVia removes the routes of the default tables that have a
// path through sw: a deleted interface's routes would otherwise stay,
// and a new interface that gets its index would inherit them. Routes VPP
// keeps for the interface's own addresses refuse an API delete: skipped.
func (c *Client) deleteRoutesVia(ctx context.Context, sw interface_types.InterfaceIndex) error {
	for _, v6 := range []bool{false, true} {
		ds, err := govppnode.RecvAll[*ip.IPRouteDetails](ip.NewServiceClient(c.api).IPRouteDump(ctx, &ip.IPRouteDump{Table: ip.IPTable{IsIP6: v6}}))
		if err != nil {
			return fmt.Errorf("ip_route_dump: %w", err)
		}
		for _, d := range ds {
			via := false
			for _, p := range d.Route.Paths {
				via = via || p.SwIfIndex == uint32(sw)
			}
			if !via {
				continue
			}
			err := govppnode.AddDelRoute(ctx, c.api, d.Route, false)
			c.changed("ip_route_add_del")
			var verr api.VPPApiError
			if err != nil && !errors.As(err, &verr) {
				return fmt.Errorf("delete route %s: %w", govppnode.FromPrefix(d.Route.Prefix), err)
			}
		}
	}
	return nil
}

// hasRoute says whether VPP's default table holds exactly route (same
// prefix, one path through the same interface and next hop).
func (c *Client) hasRoute(ctx context.Context, route ip.IPRoute) (bool, error) {
	r, err := ip.NewServiceClient(c.api).IPRouteLookup(ctx, &ip.IPRouteLookup{Exact: 1, Prefix: route.Prefix})
	if errors.Is(err, api.NO_SUCH_ENTRY) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("ip_route_lookup: %w", err)
	}
	if len(r.Route.Paths) != 1 {
		return false, nil
	}
	got, want := r.Route.Paths[0], route.Paths[0]
	return got.SwIfIndex == want.SwIfIndex && got.Nh.Address == want.Nh.Address && govppnode.FromPrefix(r.Route.Prefix) == govppnode.FromPrefix(route.Prefix), nil
}

// AddRoute installs r in VPP's default table, replacing the paths of a
// route to the same prefix; one already as r is left alone.
func (c *Client) AddRoute(ctx context.Context, r Route) error {
	route, err := c.routeBody(ctx, r)
	if err != nil {
		return err
	}
	if ok, err := c.hasRoute(ctx, route); err != nil || ok {
		return err
	}
	err = govppnode.AddDelRoute(ctx, c.api, route, true)
	c.changed("ip_route_add_del")
	if err != nil {
		return fmt.Errorf("route %v: %w", r, err)
	}
	return nil
}

// DelRoute removes r from VPP's default table; a missing route is no
// error.
func (c *Client) DelRoute(ctx context.Context, r Route) error {
	route, err := c.routeBody(ctx, r)
	if err != nil {
		return err
	}
	if ok, err := c.hasRoute(ctx, route); err != nil || !ok {
		return err
	}
	err = govppnode.AddDelRoute(ctx, c.api, route, false)
	c.changed("ip_route_add_del")
	if err != nil {
		return fmt.Errorf("delete route %v: %w", r, err)
	}
	return nil
}

// AddNeighbour gives VPP a static neighbour ipAddr with hardware address
// mac on its interface name, unless it has exactly that one.
func (c *Client) AddNeighbour(ctx context.Context, name string, ipAddr netip.Addr, mac net.HardwareAddr) error {
	m, err := macAddress(mac)
	if err != nil || !ipAddr.IsValid() {
		return fmt.Errorf("neighbour %v on %s: want an address and a 6-byte MAC", ipAddr, name)
	}
	sw, err := c.index(ctx, name)
	if err != nil {
		return err
	}
	af := ip_types.ADDRESS_IP4
	if ipAddr.Is6() {
		af = ip_types.ADDRESS_IP6
	}
	ds, err := govppnode.RecvAll[*ip_neighbor.IPNeighborDetails](ip_neighbor.NewServiceClient(c.api).IPNeighborDump(ctx, &ip_neighbor.IPNeighborDump{SwIfIndex: sw, Af: af}))
	if err != nil {
		return fmt.Errorf("ip_neighbor_dump: %w", err)
	}
	for _, d := range ds {
		if govppnode.FromAddress(d.Neighbor.IPAddress) == ipAddr && d.Neighbor.MacAddress == m && d.Neighbor.Flags&ip_neighbor.IP_API_NEIGHBOR_FLAG_STATIC != 0 {
			return nil
		}
	}
	err = govppnode.AddStaticNeighbour(ctx, c.api, uint32(sw), ipAddr, m)
	c.changed("ip_neighbor_add_del")
	if err != nil {
		return fmt.Errorf("neighbour %s on %s: %w", ipAddr, name, err)
	}
	return nil
}

// AddPuntRedirect sends what VPP punts from interface rx (traffic to its
// own addresses that no VPP feature takes, such as TCP to a port of the
// node IP) to next hop nh through interface tx, as a VPP CNI hands the
// node's own traffic to the host; unless VPP has that redirect already.
func (c *Client) AddPuntRedirect(ctx context.Context, rx, tx string, nh netip.Addr) error {
	rxi, err := c.index(ctx, rx)
	if err != nil {
		return err
	}
	txi, err := c.index(ctx, tx)
	if err != nil {
		return err
	}
	ds, err := govppnode.RecvAll[*ip.IPPuntRedirectDetails](ip.NewServiceClient(c.api).IPPuntRedirectDump(ctx, &ip.IPPuntRedirectDump{SwIfIndex: rxi, IsIPv6: nh.Is6()}))
	if err != nil {
		return fmt.Errorf("ip_punt_redirect_dump: %w", err)
	}
	for _, d := range ds {
		if d.Punt.RxSwIfIndex == rxi && d.Punt.TxSwIfIndex == txi && govppnode.FromAddress(d.Punt.Nh) == nh {
			return nil
		}
	}
	_, err = ip.NewServiceClient(c.api).IPPuntRedirect(ctx, &ip.IPPuntRedirect{IsAdd: true,
		Punt: ip.PuntRedirect{RxSwIfIndex: rxi, TxSwIfIndex: txi, Nh: govppnode.Address(nh)}})
	c.changed("ip_punt_redirect")
	if err != nil {
		return fmt.Errorf("punt redirect %s → %s via %s: %w", rx, tx, nh, err)
	}
	return nil
}
