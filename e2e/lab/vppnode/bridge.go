package vppnode

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"

	"go.fd.io/govpp/api"
	interfaces "go.fd.io/govpp/binapi/interface"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip_neighbor"
	"go.fd.io/govpp/binapi/ip_types"
	"go.fd.io/govpp/binapi/l2"

	"github.com/vppsvc/vppsvc/internal/govppnode"
)

// The pods' bridge: every pod interface an L2 member of one bridge domain
// whose BVI (a loopback) is the one L3 interface of all pods. vppsvc then
// sees a single pod interface, given its NAT44 roles, ACLs and cnat
// features once, and a new pod adds no NAT44 interface: NAT44-ED's outside
// role on an interface walks every static and LB mapping
// (docs/renderer-nat44.md, "Pods behind one bridge").

// MemberGroup is the split-horizon group of every member but the BVI
// (group 0). VPP's l2-output drops a frame leaving by a member of the
// group it entered by, so the members (pods) reach the BVI and are
// reached from it, never each other directly: every packet between two
// pods crosses the BVI's L3 features (NAT44, ACLs, cnat), as it crossed
// them with an interface per pod.
const MemberGroup = 1

// bridge is the bridge domain id's details, or nil when VPP has none.
func (c *Client) bridge(ctx context.Context, id uint32) (*l2.BridgeDomainDetails, error) {
	ds, err := recvAll[*l2.BridgeDomainDetails](l2.NewServiceClient(c.api).BridgeDomainDump(ctx, &l2.BridgeDomainDump{BdID: id, SwIfIndex: ^interface_types.InterfaceIndex(0)}))
	if err != nil {
		return nil, fmt.Errorf("bridge_domain_dump: %w", err)
	}
	for _, d := range ds {
		if d.BdID == id {
			return d, nil
		}
	}
	return nil, nil
}

// EnsureBridge makes VPP's bridge domain id (forwarding, learning and
// flooding on, ARP termination off) unless it exists, and a loopback
// called bvi with hardware address mac, admin up, its BVI. The BVI's IP
// configuration is the caller's.
func (c *Client) EnsureBridge(ctx context.Context, id uint32, bvi string, mac net.HardwareAddr) (Interface, error) {
	m, err := macAddress(mac)
	if err != nil || id == 0 || bvi == "" || len(bvi) >= 64 {
		return Interface{}, fmt.Errorf("bridge %d with BVI %q: want an id, a name under 64 bytes and a 6-byte MAC", id, bvi)
	}
	bd, err := c.bridge(ctx, id)
	if err != nil {
		return Interface{}, err
	}
	if bd == nil {
		_, err := l2.NewServiceClient(c.api).BridgeDomainAddDelV2(ctx, &l2.BridgeDomainAddDelV2{BdID: id, IsAdd: true,
			Flood: true, UuFlood: true, Forward: true, Learn: true})
		c.changed("bridge_domain_add_del_v2")
		if err != nil {
			return Interface{}, fmt.Errorf("bridge domain %d: %w", id, err)
		}
	}
	cur, err := c.lookup(ctx, bvi)
	if err != nil {
		return Interface{}, err
	}
	if cur == nil {
		r, err := interfaces.NewServiceClient(c.api).CreateLoopback(ctx, &interfaces.CreateLoopback{MacAddress: m})
		c.changed("create_loopback")
		if err != nil {
			return Interface{}, fmt.Errorf("create_loopback for %s: %w", bvi, err)
		}
		ic := interfaces.NewServiceClient(c.api)
		_, err = ic.SwInterfaceSetInterfaceName(ctx, &interfaces.SwInterfaceSetInterfaceName{SwIfIndex: r.SwIfIndex, Name: bvi})
		c.changed("sw_interface_set_interface_name")
		if err != nil {
			return Interface{}, fmt.Errorf("name the loopback %s: %w", bvi, err)
		}
		_, err = ic.SwInterfaceTagAddDel(ctx, &interfaces.SwInterfaceTagAddDel{IsAdd: true, SwIfIndex: r.SwIfIndex, Tag: Tag})
		c.changed("sw_interface_tag_add_del")
		if err != nil {
			return Interface{}, fmt.Errorf("tag %s: %w", bvi, err)
		}
		cur = &Interface{Name: bvi, Index: uint32(r.SwIfIndex)}
	}
	if cur.HostIf != "" {
		return Interface{}, fmt.Errorf("VPP's interface %s is on the veth %s, not a loopback", bvi, cur.HostIf)
	}
	sw := interface_types.InterfaceIndex(cur.Index)
	if bd == nil || bd.BviSwIfIndex != sw {
		_, err := l2.NewServiceClient(c.api).SwInterfaceSetL2Bridge(ctx, &l2.SwInterfaceSetL2Bridge{RxSwIfIndex: sw, BdID: id, PortType: l2.L2_API_PORT_TYPE_BVI, Enable: true})
		c.changed("sw_interface_set_l2_bridge")
		if err != nil {
			return Interface{}, fmt.Errorf("%s the BVI of bridge %d: %w", bvi, id, err)
		}
	}
	if !cur.Up {
		if err := c.setUp(ctx, sw, bvi); err != nil {
			return Interface{}, err
		}
	}
	return c.Interface(ctx, bvi)
}

// AddBridgeMember makes VPP's interface name an L2 member of bridge domain
// id in split-horizon group MemberGroup unless it is one, and gives the
// bridge a static L2 FIB entry sending mac (the pod's) to it, so that a
// frame for the pod is not flooded.
func (c *Client) AddBridgeMember(ctx context.Context, id uint32, name string, mac net.HardwareAddr) error {
	m, err := macAddress(mac)
	if err != nil {
		return fmt.Errorf("bridge member %s: %w", name, err)
	}
	sw, err := c.index(ctx, name)
	if err != nil {
		return err
	}
	bd, err := c.bridge(ctx, id)
	if err != nil {
		return err
	}
	if bd == nil {
		return fmt.Errorf("bridge member %s: VPP has no bridge domain %d", name, id)
	}
	member := false
	for _, s := range bd.SwIfDetails {
		member = member || (s.SwIfIndex == sw && s.Shg == MemberGroup)
	}
	if !member {
		_, err := l2.NewServiceClient(c.api).SwInterfaceSetL2Bridge(ctx, &l2.SwInterfaceSetL2Bridge{RxSwIfIndex: sw, BdID: id,
			PortType: l2.L2_API_PORT_TYPE_NORMAL, Shg: MemberGroup, Enable: true})
		c.changed("sw_interface_set_l2_bridge")
		if err != nil {
			return fmt.Errorf("%s into bridge %d: %w", name, id, err)
		}
	}
	fib, err := c.l2FIB(ctx, id)
	if err != nil {
		return err
	}
	if e, ok := fib[m]; ok && e.SwIfIndex == sw && e.StaticMac {
		return nil
	}
	_, err = l2.NewServiceClient(c.api).L2fibAddDel(ctx, &l2.L2fibAddDel{Mac: m, BdID: id, SwIfIndex: sw, IsAdd: true, StaticMac: true})
	c.changed("l2fib_add_del")
	if err != nil {
		return fmt.Errorf("L2 FIB entry %s → %s in bridge %d: %w", mac, name, id, err)
	}
	return nil
}

// DelBridgeMember removes the L2 FIB entries of bridge domain id that
// send to VPP's interface name (static ones stay when the interface is
// deleted) and takes the interface out of the bridge (back to L3); what is
// missing is no error.
func (c *Client) DelBridgeMember(ctx context.Context, id uint32, name string) error {
	i, err := c.lookup(ctx, name)
	if err != nil || i == nil {
		return err
	}
	sw := interface_types.InterfaceIndex(i.Index)
	fib, err := c.l2FIB(ctx, id)
	if err != nil {
		return err
	}
	for mac, e := range fib {
		if e.SwIfIndex != sw {
			continue
		}
		_, err := l2.NewServiceClient(c.api).L2fibAddDel(ctx, &l2.L2fibAddDel{Mac: mac, BdID: id, SwIfIndex: sw})
		c.changed("l2fib_add_del")
		if err != nil && !errors.Is(err, api.NO_SUCH_ENTRY) {
			return fmt.Errorf("delete L2 FIB entry %s from bridge %d: %w", net.HardwareAddr(mac[:]), id, err)
		}
	}
	bd, err := c.bridge(ctx, id)
	if err != nil || bd == nil {
		return err
	}
	for _, s := range bd.SwIfDetails {
		if s.SwIfIndex != sw {
			continue
		}
		_, err := l2.NewServiceClient(c.api).SwInterfaceSetL2Bridge(ctx, &l2.SwInterfaceSetL2Bridge{RxSwIfIndex: sw, BdID: id, Enable: false})
		c.changed("sw_interface_set_l2_bridge")
		if err != nil {
			return fmt.Errorf("%s out of bridge %d: %w", name, id, err)
		}
	}
	return nil
}

// l2FIB is bridge domain id's L2 FIB by MAC.
func (c *Client) l2FIB(ctx context.Context, id uint32) (map[[6]byte]*l2.L2FibTableDetails, error) {
	ds, err := recvAll[*l2.L2FibTableDetails](l2.NewServiceClient(c.api).L2FibTableDump(ctx, &l2.L2FibTableDump{BdID: id}))
	if err != nil {
		return nil, fmt.Errorf("l2_fib_table_dump: %w", err)
	}
	out := make(map[[6]byte]*l2.L2FibTableDetails, len(ds))
	for _, d := range ds {
		if d.BdID == id {
			out[d.Mac] = d
		}
	}
	return out, nil
}

// DelNeighbour removes VPP's neighbour ipAddr on its interface name; a
// missing one (or interface) is no error. A pod's neighbour on the BVI
// outlives the pod's own interface, unlike one on that interface.
func (c *Client) DelNeighbour(ctx context.Context, name string, ipAddr netip.Addr) error {
	i, err := c.lookup(ctx, name)
	if err != nil || i == nil {
		return err
	}
	sw := interface_types.InterfaceIndex(i.Index)
	af := ip_types.ADDRESS_IP4
	if ipAddr.Is6() {
		af = ip_types.ADDRESS_IP6
	}
	ds, err := recvAll[*ip_neighbor.IPNeighborDetails](ip_neighbor.NewServiceClient(c.api).IPNeighborDump(ctx, &ip_neighbor.IPNeighborDump{SwIfIndex: sw, Af: af}))
	if err != nil {
		return fmt.Errorf("ip_neighbor_dump: %w", err)
	}
	for _, d := range ds {
		if govppnode.FromAddress(d.Neighbor.IPAddress) != ipAddr {
			continue
		}
		_, err := ip_neighbor.NewServiceClient(c.api).IPNeighborAddDel(ctx, &ip_neighbor.IPNeighborAddDel{IsAdd: false, Neighbor: d.Neighbor})
		c.changed("ip_neighbor_add_del")
		if err != nil && !errors.Is(err, api.NO_SUCH_ENTRY) {
			return fmt.Errorf("delete neighbour %s on %s: %w", ipAddr, name, err)
		}
	}
	return nil
}

// lookup finds VPP's interface called name; nil when VPP has none.
func (c *Client) lookup(ctx context.Context, name string) (*Interface, error) {
	ifs, err := c.Interfaces(ctx)
	if err != nil {
		return nil, err
	}
	for i := range ifs {
		if ifs[i].Name == name {
			return &ifs[i], nil
		}
	}
	return nil, nil
}
