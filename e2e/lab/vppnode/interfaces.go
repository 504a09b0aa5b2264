package vppnode

import (
	"context"
	"fmt"
	"hash/fnv"
	"net"
	"strconv"
	"strings"

	"go.fd.io/govpp/binapi/af_packet"
	"go.fd.io/govpp/binapi/ethernet_types"
	interfaces "go.fd.io/govpp/binapi/interface"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip_neighbor"
	"go.fd.io/govpp/binapi/ip_types"
)

// Interface is one VPP interface as the node agent sees it.
type Interface struct {
	Name   string // VPP's name (uplink0, host0, tap-<ns>-<pod>)
	Index  uint32 // sw_if_index
	HostIf string // the host veth of an af_packet interface, "" otherwise
	MAC    net.HardwareAddr
	Up     bool   // admin up
	Tag    string // Tag:<veth ifindex> when a node agent created it through Client
}

// Interfaces lists VPP's interfaces (local0 aside), af_packet ones with
// their host veth.
func (c *Client) Interfaces(ctx context.Context) ([]Interface, error) {
	ds, err := recvAll[*interfaces.SwInterfaceDetails](interfaces.NewServiceClient(c.api).SwInterfaceDump(ctx,
		&interfaces.SwInterfaceDump{SwIfIndex: ^interface_types.InterfaceIndex(0)}))
	if err != nil {
		return nil, fmt.Errorf("sw_interface_dump: %w", err)
	}
	aps, err := recvAll[*af_packet.AfPacketDetails](af_packet.NewServiceClient(c.api).AfPacketDump(ctx, &af_packet.AfPacketDump{}))
	if err != nil {
		return nil, fmt.Errorf("af_packet_dump: %w", err)
	}
	host := map[interface_types.InterfaceIndex]string{}
	for _, a := range aps {
		host[a.SwIfIndex] = a.HostIfName
	}
	var out []Interface
	for _, d := range ds {
		if d.SwIfIndex == 0 {
			continue
		}
		out = append(out, Interface{
			Name:   d.InterfaceName,
			Index:  uint32(d.SwIfIndex),
			HostIf: host[d.SwIfIndex],
			MAC:    net.HardwareAddr(d.L2Address[:]),
			Up:     d.Flags&interface_types.IF_STATUS_API_FLAG_ADMIN_UP != 0,
			Tag:    d.Tag,
		})
	}
	return out, nil
}

// Interface finds VPP's interface called name.
func (c *Client) Interface(ctx context.Context, name string) (Interface, error) {
	ifs, err := c.Interfaces(ctx)
	if err != nil {
		return Interface{}, err
	}
	for _, i := range ifs {
		if i.Name == name {
			return i, nil
		}
	}
	return Interface{}, fmt.Errorf("VPP has no interface %s", name)
}

// MAC is the hardware address of VPP's interface name.
func (c *Client) MAC(ctx context.Context, name string) (net.HardwareAddr, error) {
	i, err := c.Interface(ctx, name)
	return i.MAC, err
}

// AfPacket describes an af_packet interface of VPP on a host veth.
type AfPacket struct {
	// HostIf is the root namespace's veth end VPP attaches to.
	HostIf string
	// Name is VPP's name for the interface (VPP would call it
	// host-<HostIf>).
	Name string
	// MAC is VPP's address on it; nil takes HostMAC(HostIf).
	MAC net.HardwareAddr
	// IO is its ring format and depth and its rx-mode (DefaultIO when
	// zero).
	IO IO
}

// RingFrames is the depth of a lab interface's rings. VPP's default
// af_packet ring is 79 MB: one 69 MB TX block (1024 frames of 66 KB, room
// for a GSO packet each) and 10 MB of RX blocks (with TPACKET_V2, another
// 69 MB), which the kernel allocates and zeroes inside
// af_packet_create_v3, on VPP's main thread, the one that forwards with
// workers 0. On the lab's machine that took up to 1.7 s at times and
// stalled every flow through the node (docs/lab.md, kube-proxy beside
// vppsvc, item 7); 256 frames, a full vector (the most VPP writes before
// it sends), are 17 MB a ring.
const RingFrames = 256

// EnsureAfPacket makes VPP's interface a.Name an af_packet interface on
// a.HostIf, tagged, admin up. One that exists on that veth is adopted (a
// restarted node agent, or a second run of a plan): renamed if needed,
// never created twice. The tag records the veth's ifindex and the
// rings: an interface left on a veth that was deleted and re-created
// under the same name (its socket bound to the dead one), or made with
// other rings, is deleted and created anew. Its IP configuration
// is the caller's.
func (c *Client) EnsureAfPacket(ctx context.Context, a AfPacket) (Interface, error) {
	if a.HostIf == "" || a.Name == "" || len(a.Name) >= 64 {
		return Interface{}, fmt.Errorf("af_packet %q on %q: want a host interface and a VPP name under 64 bytes", a.Name, a.HostIf)
	}
	if a.MAC != nil && len(a.MAC) != 6 {
		return Interface{}, fmt.Errorf("af_packet %s: MAC %v is not 6 bytes", a.Name, a.MAC)
	}
	ifindex, err := c.hostIfIndex(a.HostIf)
	if err != nil {
		return Interface{}, fmt.Errorf("af_packet %s: host interface %s: %w", a.Name, a.HostIf, err)
	}
	if a.IO.Name == "" {
		a.IO = DefaultIO
	}
	tag := afPacketTag(ifindex, a.IO)
	ifs, err := c.Interfaces(ctx)
	if err != nil {
		return Interface{}, err
	}
	var cur *Interface
	for i := range ifs {
		if ifs[i].HostIf == a.HostIf {
			cur = &ifs[i]
		} else if ifs[i].Name == a.Name {
			return Interface{}, fmt.Errorf("VPP's interface %s is on %q, not on the veth %s", a.Name, ifs[i].HostIf, a.HostIf)
		}
	}
	if cur != nil && strings.HasPrefix(cur.Tag, Tag) && cur.Tag != tag {
		// Ours, on an earlier veth of that name.
		if err := c.DeleteInterface(ctx, cur.Name); err != nil {
			return Interface{}, err
		}
		cur = nil
	}
	if cur == nil {
		req := a.IO.createRequest(a.HostIf)
		mac := a.MAC
		if mac == nil {
			mac = HostMAC(a.HostIf)
		}
		copy(req.HwAddr[:], mac)
		r, err := af_packet.NewServiceClient(c.api).AfPacketCreateV3(ctx, req)
		c.changed("af_packet_create_v3")
		if err != nil {
			return Interface{}, fmt.Errorf("af_packet_create_v3 on %s: %w", a.HostIf, err)
		}
		cur = &Interface{Index: uint32(r.SwIfIndex), HostIf: a.HostIf}
	}
	ic := interfaces.NewServiceClient(c.api)
	sw := interface_types.InterfaceIndex(cur.Index)
	if cur.Name != a.Name {
		if _, err := ic.SwInterfaceSetInterfaceName(ctx, &interfaces.SwInterfaceSetInterfaceName{SwIfIndex: sw, Name: a.Name}); err != nil {
			return Interface{}, fmt.Errorf("name the af_packet interface on %s %s: %w", a.HostIf, a.Name, err)
		}
		c.changed("sw_interface_set_interface_name")
	}
	if cur.Tag != tag {
		if _, err := ic.SwInterfaceTagAddDel(ctx, &interfaces.SwInterfaceTagAddDel{IsAdd: true, SwIfIndex: sw, Tag: tag}); err != nil {
			return Interface{}, fmt.Errorf("tag %s: %w", a.Name, err)
		}
		c.changed("sw_interface_tag_add_del")
	}
	if !cur.Up {
		if err := c.setUp(ctx, sw, a.Name); err != nil {
			return Interface{}, err
		}
	}
	if err := c.setRxMode(ctx, sw, a.Name, a.IO.Polling); err != nil {
		return Interface{}, err
	}
	return c.Interface(ctx, a.Name)
}

// HostMAC is VPP's default MAC on an af_packet interface on the veth
// hostIf: 02:fe and a hash of the name. Stable, so that a VPP restarted,
// or an interface re-created on a veth of the same name, keeps the
// address its neighbours have cached (VPP's own random one changed on
// every create, and the namespaces' ARP entries pointed at the old one);
// not the veth's own, so the kernel never takes VPP's frames as its own.
func HostMAC(hostIf string) net.HardwareAddr {
	h := fnv.New32a()
	h.Write([]byte(hostIf))
	s := h.Sum32()
	return net.HardwareAddr{0x02, 0xfe, byte(s >> 24), byte(s >> 16), byte(s >> 8), byte(s)}
}

// afPacketTag is the tag of an af_packet interface with I/O setting io on
// the veth with the kernel's ifindex: what cannot change without creating
// the interface anew (the rx-mode can).
func afPacketTag(ifindex int, io IO) string {
	return Tag + ":" + strconv.Itoa(ifindex) + ":" + io.rings()
}

// SetUp sets VPP's interface name admin up.
func (c *Client) SetUp(ctx context.Context, name string) error {
	i, err := c.Interface(ctx, name)
	if err != nil || i.Up {
		return err
	}
	return c.setUp(ctx, interface_types.InterfaceIndex(i.Index), name)
}

func (c *Client) setUp(ctx context.Context, sw interface_types.InterfaceIndex, name string) error {
	_, err := interfaces.NewServiceClient(c.api).SwInterfaceSetFlags(ctx, &interfaces.SwInterfaceSetFlags{SwIfIndex: sw, Flags: interface_types.IF_STATUS_API_FLAG_ADMIN_UP})
	c.changed("sw_interface_set_flags")
	if err != nil {
		return fmt.Errorf("set %s up: %w", name, err)
	}
	return nil
}

// DeleteInterface deletes the af_packet interface name with the routes
// through it and its static neighbours (a deleted interface's neighbours stay in VPP, and re-using
// its index then crashed VPP 25.10 in a neighbour add). A missing
// interface is no error.
func (c *Client) DeleteInterface(ctx context.Context, name string) error {
	ifs, err := c.Interfaces(ctx)
	if err != nil {
		return err
	}
	for _, i := range ifs {
		if i.Name != name {
			continue
		}
		if i.HostIf == "" {
			return fmt.Errorf("VPP's interface %s is not an af_packet interface: not deleted", name)
		}
		sw := interface_types.InterfaceIndex(i.Index)
		if err := c.deleteRoutesVia(ctx, sw); err != nil {
			return err
		}
		for _, af := range []ip_types.AddressFamily{ip_types.ADDRESS_IP4, ip_types.ADDRESS_IP6} {
			if _, err := ip_neighbor.NewServiceClient(c.api).IPNeighborFlush(ctx, &ip_neighbor.IPNeighborFlush{Af: af, SwIfIndex: sw}); err != nil {
				return fmt.Errorf("flush %s's neighbours: %w", name, err)
			}
			c.changed("ip_neighbor_flush")
		}
		if _, err := af_packet.NewServiceClient(c.api).AfPacketDelete(ctx, &af_packet.AfPacketDelete{HostIfName: i.HostIf}); err != nil {
			return fmt.Errorf("af_packet_delete %s (%s): %w", name, i.HostIf, err)
		}
		c.changed("af_packet_delete")
		return nil
	}
	return nil
}

func macAddress(m net.HardwareAddr) (ethernet_types.MacAddress, error) {
	var out ethernet_types.MacAddress
	if len(m) != 6 {
		return out, fmt.Errorf("MAC %v is not 6 bytes", m)
	}
	copy(out[:], m)
	return out, nil
}
