package fakevpp

import (
	"fmt"
	"net/netip"
	"strings"

	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/ethernet_types"
	interfaces "go.fd.io/govpp/binapi/interface"
	"go.fd.io/govpp/binapi/interface_types"
)

const localIfName = "local0"

// iface is a VPP software interface. Except local0, it is admin and link up.
type iface struct {
	index   uint32
	name    string
	table   [2]uint32      // IPv4 and IPv6 FIB table (vrf.go)
	addrs   []netip.Prefix // own addresses with their subnets, in the order given
	startup bool           // re-created by Restart

	// IP enablement (ip_enable.go). unnumbered: the interface borrows the
	// addresses of interface unnumberedTo (an index, as VPP keeps it), which
	// enables both families. startupDonor: the donor's name as set before
	// the first client connected (VPP's startup configuration), re-applied
	// by Restart. ip6Link counts the locks on the IPv6 link: one per IPv6
	// address plus API enables minus disables.
	unnumbered   bool
	unnumberedTo uint32
	startupDonor string
	ip6Link      int

	// adminDown: set down by sw_interface_set_flags, or a loopback not yet
	// set up (VPP creates loopbacks admin down; their link follows the
	// admin state). loopback: created by create_loopback(_instance), with
	// its instance number and MAC (loopback.go).
	adminDown bool
	loopback  *loopbackDev
}

// firstAddr returns the interface's own first address of a family (see
// VPP.firstAddr for what ip4_interface_first_address returns).
func (i *iface) firstAddr(ip6 bool) (netip.Addr, bool) {
	for _, p := range i.addrs {
		if p.Addr().Is6() == ip6 {
			return p.Addr(), true
		}
	}
	return netip.Addr{}, false
}

// hasAddr tells whether a is one of the interface's own addresses.
func (i *iface) hasAddr(a netip.Addr) bool {
	for _, p := range i.addrs {
		if p.Addr() == a {
			return true
		}
	}
	return false
}

func (i *iface) flags() interface_types.IfStatusFlags {
	if i.index == 0 || i.adminDown {
		return 0
	}
	return interface_types.IF_STATUS_API_FLAG_ADMIN_UP | interface_types.IF_STATUS_API_FLAG_LINK_UP
}

// devType guesses the device class VPP would report from the name.
func (i *iface) devType() string {
	switch {
	case i.index == 0:
		return "local"
	case i.loopback != nil:
		return "Loopback"
	case strings.HasPrefix(i.name, "tap"):
		return "virtio"
	case strings.HasPrefix(i.name, "memif"):
		return "memif"
	case strings.HasPrefix(i.name, "loop"):
		return "Loopback"
	default:
		return "dpdk"
	}
}

// iface returns the interface with index sw, or nil.
func (v *VPP) iface(sw uint32) *iface { return v.ifaces.get(sw) }

// ifaceNamed returns the interface with that exact name, or nil.
func (v *VPP) ifaceNamed(name string) *iface {
	if sw, ok := v.ifaceByName[name]; ok {
		return v.ifaces.get(sw)
	}
	return nil
}

// createInterface adds an interface with the next pool index and lets the
// plugins resolve what waited for it.
func (v *VPP) createInterface(name string, addrs []netip.Prefix, startup bool) *iface {
	ifc := &iface{name: name, addrs: append([]netip.Prefix(nil), addrs...), startup: startup}
	ifc.ip6Link = countIP6Addrs(ifc)
	v.addIface(ifc)
	return ifc
}

// addIface gives ifc the next pool index and lets the plugins resolve what
// waited for it.
func (v *VPP) addIface(ifc *iface) {
	ifc.index = v.ifaces.add(ifc)
	v.ifaceByName[ifc.name] = ifc.index
	for _, p := range pipeline().plugins {
		if p.interfaceAdded != nil {
			p.interfaceAdded(v, ifc)
		}
	}
}

// AddInterface creates an interface (admin and link up) with its own
// addresses; each prefix also installs the connected subnet in the FIB. The
// index is the lowest free one, most recently freed first, as VPP allocates.
// Subscribed clients receive a SwInterfaceEvent. Interfaces added before the
// first client connects are startup interfaces (see Restart). Adding a name
// that exists panics: it is a mistake in the test.
func (v *VPP) AddInterface(name string, addrs ...netip.Prefix) uint32 {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.ifaceNamed(name) != nil {
		panic(fmt.Sprintf("fakevpp: interface %q already exists", name))
	}
	ifc := v.createInterface(name, addrs, !v.booted)
	v.interfaceEvent(ifc.index, ifc.flags(), false)
	return ifc.index
}

// DeleteInterface deletes an interface as VPP does when a tap is removed: the
// plugins drop what was bound to it (NAT roles and output feature, ACL
// bindings and reflect sessions, mappings resolved from its address), routes
// through it disappear, the index is freed for reuse, and subscribed clients
// receive a SwInterfaceEvent with Deleted set. It returns false for an
// unknown name and for local0, which cannot be deleted.
func (v *VPP) DeleteInterface(name string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	ifc := v.ifaceNamed(name)
	if ifc == nil || ifc.index == 0 {
		return false
	}
	v.deleteInterface(ifc)
	return true
}

// deleteInterface runs the plugins' delete callbacks (VPP's
// VNET_SW_INTERFACE_ADD_DEL_FUNCTIONs), drops the routes through the
// interface, frees its index and announces the deletion.
func (v *VPP) deleteInterface(ifc *iface) {
	for _, p := range pipeline().plugins {
		if p.interfaceDeleted != nil {
			p.interfaceDeleted(v, ifc)
		}
	}
	for dst, r := range v.routes {
		if r.ifName == ifc.name {
			delete(v.routes, dst)
		}
	}
	v.ifaces.del(ifc.index)
	delete(v.ifaceByName, ifc.name)
	v.interfaceEvent(ifc.index, 0, true)
}

// InterfaceIndex returns the sw_if_index of an interface.
func (v *VPP) InterfaceIndex(name string) (uint32, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	sw, ok := v.ifaceByName[name]
	return sw, ok
}

// SetStartup marks an interface as created by VPP's startup configuration
// (kept by Restart) or by the API (gone after Restart). It returns false for
// an unknown name.
func (v *VPP) SetStartup(name string, startup bool) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	ifc := v.ifaceNamed(name)
	if ifc == nil {
		return false
	}
	ifc.startup = startup
	return true
}

// interfaceEvent sends SwInterfaceEvent to the clients that asked for it. VPP
// batches the creation and the admin/link-up of a new interface into one
// event, so a created interface is announced once, already up.
func (v *VPP) interfaceEvent(sw uint32, flags interface_types.IfStatusFlags, deleted bool) {
	v.sendEvent(func(c *client) api.Message {
		if !c.wantIfEvents {
			return nil
		}
		return &interfaces.SwInterfaceEvent{PID: c.eventPID, SwIfIndex: interface_types.InterfaceIndex(sw), Flags: flags, Deleted: deleted}
	})
}

func init() {
	registerPlugin(&plugin{
		name:     ifPlugin,
		order:    1,
		newState: func(*VPP) any { return &ifState{loopInstances: map[uint32]bool{}} },
		handlers: handlers(
			handle(swInterfaceDump),
			handle(wantInterfaceEvents),
			handle(swInterfaceSetFlags),
			handle(createLoopback),
			handle(createLoopbackInstance),
			handle(deleteLoopback),
		),
	})
}

// swInterfaceDump: without a name filter, index 0 and ~0 both dump every
// interface (so the Go zero value dumps all) and any other index dumps that
// interface or nothing. With a name filter the index is ignored and the
// filter is a case-insensitive substring match.
func swInterfaceDump(c *call, req *interfaces.SwInterfaceDump) []api.Message {
	v := c.v
	sw := uint32(req.SwIfIndex)
	if !req.NameFilterValid && sw != ^uint32(0) && sw != 0 {
		if ifc := v.iface(sw); ifc != nil {
			return []api.Message{ifc.details()}
		}
		return nil
	}
	var out []api.Message
	filter := strings.ToLower(req.NameFilter)
	v.ifaces.each(func(_ uint32, ifc *iface) bool {
		if !req.NameFilterValid || strings.Contains(strings.ToLower(ifc.name), filter) {
			out = append(out, ifc.details())
		}
		return true
	})
	return out
}

func (i *iface) details() *interfaces.SwInterfaceDetails {
	mtu := uint32(9000)
	if i.index == 0 {
		mtu = 0
	}
	return &interfaces.SwInterfaceDetails{
		SwIfIndex:        interface_types.InterfaceIndex(i.index),
		SupSwIfIndex:     i.index,
		L2Address:        i.mac(),
		Flags:            i.flags(),
		Type:             interface_types.IF_API_TYPE_HARDWARE,
		LinkDuplex:       i.duplex(),
		LinkMtu:          uint16(mtu),
		Mtu:              []uint32{mtu, 0, 0, 0}, // L3; the IPv4, IPv6 and MPLS MTUs are 0 until set
		InterfaceName:    i.name,
		InterfaceDevType: i.devType(),
	}
}

// duplex: a loopback reports none (its simulated device sets no duplex).
func (i *iface) duplex() interface_types.LinkDuplex {
	if i.loopback != nil {
		return interface_types.LINK_DUPLEX_API_UNKNOWN
	}
	return interface_types.LINK_DUPLEX_API_FULL
}

// mac derives a stable locally administered MAC from the index.
func (i *iface) mac() ethernet_types.MacAddress {
	if i.index == 0 {
		return ethernet_types.MacAddress{}
	}
	if i.loopback != nil {
		return i.loopback.mac
	}
	return ethernet_types.MacAddress{0x02, 0xfe, 0, 0, byte(i.index >> 8), byte(i.index)}
}

// wantInterfaceEvents registers the client for SwInterfaceEvent. As VPP's
// pub/sub handler, enabling twice or disabling when not registered gives -31
// (INVALID_REGISTRATION).
func wantInterfaceEvents(c *call, req *interfaces.WantInterfaceEvents) []api.Message {
	r := &interfaces.WantInterfaceEventsReply{}
	on := req.EnableDisable != 0
	switch {
	case on == c.client.wantIfEvents:
		r.Retval = int32(api.INVALID_REGISTRATION)
	default:
		c.client.wantIfEvents = on
		c.client.eventPID = req.PID
	}
	return c.reply(r)
}
