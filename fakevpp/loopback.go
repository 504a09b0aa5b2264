package fakevpp

import (
	"fmt"

	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/ethernet_types"
	interfaces "go.fd.io/govpp/binapi/interface"
	"go.fd.io/govpp/binapi/interface_types"
)

// Loopbacks and admin state (docs/fakevpp.md#loopbacks): create_loopback,
// create_loopback_instance and delete_loopback (interface_api.c,
// vnet/ethernet/interface.c), and sw_interface_set_flags.

const ifPlugin = "interface"

// maxLoopbackInstance is LOOPBACK_MAX_INSTANCE: instances are 0 to 16383.
const maxLoopbackInstance = 16 * 1024

// ifState is the interface module's state beyond the interface pool: the
// bitmap of loopback instance numbers in use.
type ifState struct {
	loopInstances map[uint32]bool
}

// loopbackDev is what a loopback has beyond an interface: its instance
// (its name is loop<instance>) and MAC.
type loopbackDev struct {
	instance uint32
	mac      ethernet_types.MacAddress
}

var ifsSlot = stateOf[ifState](ifPlugin)

func (v *VPP) ifs() *ifState { return ifsSlot.of(v) }

// allocInstance is loopback_instance_alloc: the lowest free instance, or
// the one asked for when it is in range and free; false otherwise.
func (s *ifState) allocInstance(specified bool, want uint32) (uint32, bool) {
	if !specified {
		for i := uint32(0); i < maxLoopbackInstance; i++ {
			if !s.loopInstances[i] {
				s.loopInstances[i] = true
				return i, true
			}
		}
		return 0, false
	}
	if want >= maxLoopbackInstance || s.loopInstances[want] {
		return 0, false
	}
	s.loopInstances[want] = true
	return want, true
}

// createLoopbackIface is vnet_create_loopback_interface: an instance, the
// MAC (de:ad:00:00:00:<instance's low byte> when the request's is zero),
// an interface named loop<instance>, admin and link down, in table 0 of
// both families. An exhausted or taken instance answers -31
// (INVALID_REGISTRATION) and ~0.
func (v *VPP) createLoopbackIface(mac ethernet_types.MacAddress, specified bool, want uint32) (int32, uint32) {
	inst, ok := v.ifs().allocInstance(specified, want)
	if !ok {
		return int32(api.INVALID_REGISTRATION), ^uint32(0)
	}
	if mac == (ethernet_types.MacAddress{}) {
		mac = ethernet_types.MacAddress{0xde, 0xad, 0, 0, 0, byte(inst)}
	}
	name := fmt.Sprintf("loop%d", inst)
	if v.ifaceNamed(name) != nil {
		v.violate("duplicate interface name", fmt.Sprintf("create_loopback made %s, a name a test interface already has: VPP names its own loopbacks so, name test interfaces otherwise", name))
	}
	ifc := &iface{name: name, loopback: &loopbackDev{instance: inst, mac: mac}, adminDown: true}
	v.addIface(ifc)
	v.interfaceEvent(ifc.index, ifc.flags(), false)
	return 0, ifc.index
}

func createLoopback(c *call, req *interfaces.CreateLoopback) []api.Message {
	rv, sw := c.v.createLoopbackIface(req.MacAddress, false, 0)
	return c.reply(&interfaces.CreateLoopbackReply{Retval: rv, SwIfIndex: interface_types.InterfaceIndex(sw)})
}

func createLoopbackInstance(c *call, req *interfaces.CreateLoopbackInstance) []api.Message {
	rv, sw := c.v.createLoopbackIface(req.MacAddress, req.IsSpecified, req.UserInstance)
	return c.reply(&interfaces.CreateLoopbackInstanceReply{Retval: rv, SwIfIndex: interface_types.InterfaceIndex(sw)})
}

// deleteLoopback is vnet_delete_loopback_interface: -2 for an index that is
// no interface or no loopback (local0, a tap); otherwise the instance is
// freed and the interface deleted with everything VPP's delete callbacks
// take with it (docs/fakevpp.md#what-a-deleted-interface-takes-with-it).
func deleteLoopback(c *call, req *interfaces.DeleteLoopback) []api.Message {
	v := c.v
	r := &interfaces.DeleteLoopbackReply{}
	ifc := v.iface(uint32(req.SwIfIndex))
	if ifc == nil || ifc.loopback == nil {
		r.Retval = int32(api.INVALID_SW_IF_INDEX)
		return c.reply(r)
	}
	delete(v.ifs().loopInstances, ifc.loopback.instance)
	v.deleteInterface(ifc)
	return c.reply(r)
}

// swInterfaceSetFlags sets the admin state (only IF_STATUS_API_FLAG_ADMIN_UP
// of the request counts); the link follows it, as for loopbacks and
// packet-generator interfaces. -2 for an unknown index. A change is
// announced to subscribed clients as one event (VPP's link-state process
// batches the admin and link events of one request).
func swInterfaceSetFlags(c *call, req *interfaces.SwInterfaceSetFlags) []api.Message {
	v := c.v
	r := &interfaces.SwInterfaceSetFlagsReply{}
	ifc := v.iface(uint32(req.SwIfIndex))
	if ifc == nil {
		r.Retval = int32(api.INVALID_SW_IF_INDEX)
		return c.reply(r)
	}
	down := req.Flags&interface_types.IF_STATUS_API_FLAG_ADMIN_UP == 0
	if ifc.index == 0 {
		// local0 has no device behind it; the fake keeps it down.
		return c.reply(r)
	}
	if down != ifc.adminDown {
		ifc.adminDown = down
		v.interfaceEvent(ifc.index, ifc.flags(), false)
	}
	return c.reply(r)
}
