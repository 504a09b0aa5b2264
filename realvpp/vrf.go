package realvpp

import (
	"context"
	"fmt"
	"net/netip"
	"slices"

	"go.fd.io/govpp/binapi/fib_types"
	interfaces "go.fd.io/govpp/binapi/interface"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip"

	"github.com/vppsvc/vppsvc/internal/govppnode"
)

// VRF tables, interfaces in them, routes that leave through an interface of
// a table or look the destination up in another table, addresses changed
// at run time and static neighbours: the topology pieces a CNI's pod VRFs
// are made of. Each change is a step replayed after a restart.

// AddTable creates VRF table id of a family.
func (n *Node) AddTable(id uint32, ip6 bool) error {
	return n.change(step{table: &tableStep{id: id, ip6: ip6}}, func(ctx context.Context) error {
		_, err := ip.NewServiceClient(n.conn).IPTableAddDel(ctx, &ip.IPTableAddDel{IsAdd: true, Table: ip.IPTable{TableID: id, IsIP6: ip6}})
		if err != nil {
			return fmt.Errorf("table %d: %w", id, err)
		}
		return nil
	})
}

// SetTable moves the interface name into table id of a family (VPP refuses
// while the interface has an address of the family).
func (n *Node) SetTable(name string, id uint32, ip6 bool) error {
	return n.change(step{table: &tableStep{id: id, ip6: ip6, iface: name}}, func(ctx context.Context) error {
		ifc := n.iface(name)
		if ifc == nil {
			return fmt.Errorf("table %d for %s: unknown interface", id, name)
		}
		_, err := interfaces.NewServiceClient(n.conn).SwInterfaceSetTable(ctx, &interfaces.SwInterfaceSetTable{
			SwIfIndex: interface_types.InterfaceIndex(ifc.sw), IsIPv6: ip6, VrfID: id})
		if err != nil {
			return fmt.Errorf("table %d for %s: %w", id, name, err)
		}
		ifc.table[famIdx(ip6)] = id
		return nil
	})
}

// AddAddress adds an address to an interface.
func (n *Node) AddAddress(name string, p netip.Prefix) error { return n.addDelAddress(name, p, true) }

// DelAddress removes an address from an interface.
func (n *Node) DelAddress(name string, p netip.Prefix) error { return n.addDelAddress(name, p, false) }

func (n *Node) addDelAddress(name string, p netip.Prefix, add bool) error {
	return n.change(step{address: &addrStep{iface: name, p: p, add: add}}, func(ctx context.Context) error {
		ifc := n.iface(name)
		if ifc == nil {
			return fmt.Errorf("address %s on %s: unknown interface", p, name)
		}
		if err := govppnode.AddDelAddress(ctx, n.conn, ifc.sw, p, add); err != nil {
			return fmt.Errorf("address %s on %s (add %t): %w", p, name, add, err)
		}
		if i := slices.Index(ifc.addrs, p); add && i < 0 {
			ifc.addrs = append(ifc.addrs, p)
		} else if !add && i >= 0 {
			ifc.addrs = slices.Delete(slices.Clone(ifc.addrs), i, i+1)
		}
		return nil
	})
}

// AddRouteIn sends dst out of ifName in table, with a next hop and its
// static neighbour chosen as AddRoute does.
func (n *Node) AddRouteIn(table uint32, dst netip.Prefix, ifName string) error {
	return n.change(step{routeIn: &routeStep{table: table, dst: dst, via: ifName}}, func(ctx context.Context) error {
		ifc := n.iface(ifName)
		if ifc == nil {
			return fmt.Errorf("route %s via %s in table %d: unknown interface", dst, ifName, table)
		}
		dst := dst.Masked()
		nh := nextHop(dst, ifc.addrs)
		if err := n.addNeighbour(ctx, ifc, nh); err != nil {
			return err
		}
		return n.addRoute(ctx, table, dst, govppnode.Path(ifc.sw, table, dst, nh))
	})
}

// AddRouteToTable makes dst in table a lookup in table next.
func (n *Node) AddRouteToTable(table uint32, dst netip.Prefix, next uint32) error {
	return n.change(step{routeIn: &routeStep{table: table, dst: dst, next: next, toTable: true}}, func(ctx context.Context) error {
		return n.addRoute(ctx, table, dst.Masked(), govppnode.Path(^uint32(0), next, dst, netip.Addr{}))
	})
}

// AddNeighbour makes a a static neighbour on ifName with the interface's
// peer MAC.
func (n *Node) AddNeighbour(ifName string, a netip.Addr) error {
	return n.change(step{nbr: &nbrStep{iface: ifName, ip: a}}, func(ctx context.Context) error {
		ifc := n.iface(ifName)
		if ifc == nil {
			return fmt.Errorf("neighbour %s on %s: unknown interface", a, ifName)
		}
		return n.addNeighbour(ctx, ifc, a)
	})
}

func (n *Node) addRoute(ctx context.Context, table uint32, dst netip.Prefix, path fib_types.FibPath) error {
	if err := govppnode.AddDelRoute(ctx, n.conn, govppnode.Route(table, dst, path), true); err != nil {
		return fmt.Errorf("route %s in table %d: %w", dst, table, err)
	}
	return nil
}

func famIdx(ip6 bool) int {
	if ip6 {
		return 1
	}
	return 0
}

// change runs one topology change under the node's lock and records it as
// a step for Restart when it succeeds.
func (n *Node) change(s step, do func(ctx context.Context) error) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	if err := do(ctx); err != nil {
		return err
	}
	n.steps = append(n.steps, s)
	return nil
}

// deleteTables removes every non-zero table of both families: the API's
// lock and routes go; a table held by nothing else disappears with them.
func (n *Node) deleteTables(ctx context.Context) error {
	c := ip.NewServiceClient(n.conn)
	ts, err := govppnode.RecvAll[*ip.IPTableDetails](c.IPTableDump(ctx, &ip.IPTableDump{}))
	if err != nil {
		return fmt.Errorf("ip_table_dump: %w", err)
	}
	for _, t := range ts {
		if t.Table.TableID == 0 {
			continue
		}
		if _, err := c.IPTableAddDel(ctx, &ip.IPTableAddDel{IsAdd: false, Table: t.Table}); err != nil {
			return fmt.Errorf("delete table %d: %w", t.Table.TableID, err)
		}
	}
	return nil
}

// unbindTables takes the addresses of sws away and moves them back to
// table 0 before they are deleted, so that no state of a VRF outlives the
// node on the interface index the next node's interface reuses.
func (n *Node) unbindTables(ctx context.Context, sws []uint32) error {
	c := interfaces.NewServiceClient(n.conn)
	for _, sw := range sws {
		idx := interface_types.InterfaceIndex(sw)
		if _, err := c.SwInterfaceAddDelAddress(ctx, &interfaces.SwInterfaceAddDelAddress{SwIfIndex: idx, DelAll: true}); err != nil {
			return fmt.Errorf("delete the addresses of %d: %w", sw, err)
		}
		for _, ip6 := range []bool{false, true} {
			t, err := c.SwInterfaceGetTable(ctx, &interfaces.SwInterfaceGetTable{SwIfIndex: idx, IsIPv6: ip6})
			if err != nil {
				return fmt.Errorf("table of %d: %w", sw, err)
			}
			if t.VrfID == 0 {
				continue
			}
			// An unnumbered interface counts its donor's addresses.
			if _, err := c.SwInterfaceSetUnnumbered(ctx, &interfaces.SwInterfaceSetUnnumbered{UnnumberedSwIfIndex: idx}); err != nil {
				return fmt.Errorf("unnumbered off for %d: %w", sw, err)
			}
			if _, err := c.SwInterfaceSetTable(ctx, &interfaces.SwInterfaceSetTable{SwIfIndex: idx, IsIPv6: ip6}); err != nil {
				return fmt.Errorf("table 0 for %d: %w", sw, err)
			}
		}
	}
	return nil
}
