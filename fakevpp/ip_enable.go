package fakevpp

import (
	"fmt"
	"net/netip"

	"go.fd.io/govpp/api"
	interfaces "go.fd.io/govpp/binapi/interface"
	"go.fd.io/govpp/binapi/ip"
)

// IP enablement (VPP 25.10, vnet/ip). Every new interface gets the
// ip4-not-enabled and ip6-not-enabled features on its ip4-unicast and
// ip6-unicast arcs (ip4_sw_interface_add_del, ip6_sw_interface_add_del); a
// per-interface, per-family reference count switches the feature off on its
// 0 → 1 transition and on again on 1 → 0 (ip4_sw_interface_enable_disable,
// ip6_sw_interface_enable_disable). References are taken by:
//
//   - each address of the family (ip4/ip6_add_del_interface_address_internal);
//   - being unnumbered, for both families at once, whatever addresses the
//     donor has (vnet_sw_interface_update_unnumbered, vnet/interface.c);
//   - for IPv6 only, the interface's IPv6 link (ip6_link.c): ip6_link_enable
//     creates it on the first call and only locks it afterwards; an IPv6
//     address and sw_interface_ip6_enable_disable both call it.
//
// The not-enabled node is an ordinary feature ordered only before ip4-lookup
// / ip6-lookup, so the input ACL, NAT44-ED and cnat-snat run before it: a
// packet on an interface without IP is classified, translated (sessions are
// created) and then dropped. See docs/fakevpp.md.

const ipPlugin = "ip"

func init() {
	registerPlugin(&plugin{
		name:  ipPlugin,
		order: 3,
		handlers: handlers(
			handle(swInterfaceSetUnnumbered),
			handle(swInterfaceIP6EnableDisable),
		),
		input:            []node{{name: "ip-not-enabled", order: orderNotEnabled, run: notEnabledNode}},
		interfaceDeleted: unnumberedDonorDeleted,
	})
}

// ipEnabled tells whether the family is enabled on the interface, that is
// whether VPP's reference count for it is above zero.
func (i *iface) ipEnabled(ip6 bool) bool {
	if i.unnumbered {
		return true
	}
	if ip6 && i.ip6Link > 0 {
		return true
	}
	_, ok := i.firstAddr(ip6)
	return ok
}

// countIP6Addrs is the number of IPv6 link locks an interface's addresses
// take (ip6_add_del_interface_address_internal calls ip6_link_enable once per
// address).
func countIP6Addrs(i *iface) int {
	n := 0
	for _, p := range i.addrs {
		if p.Addr().Is6() {
			n++
		}
	}
	return n
}

// notEnabledNode is ip4-not-enabled / ip6-not-enabled: on an interface
// where the packet's family is not enabled it is on the unicast arc, after
// every input feature and before the lookup, and drops the packet.
func notEnabledNode(c *pktCtx) {
	if c.rx.ipEnabled(!c.pkt.is4()) {
		return
	}
	fam := "IPv4"
	if !c.pkt.is4() {
		fam = "IPv6"
	}
	c.drop(c.family()+"-not-enabled", fmt.Sprintf("%s is not enabled on %s: it has no %s address and is not unnumbered", fam, c.rx.name, fam))
}

// SetUnnumbered makes the interface name unnumbered to borrowFrom, as `set
// interface unnumbered <name> use <borrowFrom>` or SwInterfaceSetUnnumbered
// do: it enables both IPv4 and IPv6 on name (whatever families borrowFrom
// has), so packets received on it are no longer dropped by ip4-not-enabled /
// ip6-not-enabled. An empty borrowFrom removes the unnumbered setting. The
// fake's FIB does not use the borrowed addresses (name gets no connected
// subnet or receive entry; route pod addresses to it with AddRoute). Set
// before the first client connects, the setting is startup configuration and
// survives Restart when both interfaces do. It returns false for an unknown
// interface and for a donor in other tables (VPP: -74).
func (v *VPP) SetUnnumbered(name, borrowFrom string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	ifc := v.ifaceNamed(name)
	if ifc == nil {
		return false
	}
	if borrowFrom == "" {
		v.setUnnumbered(ifc, 0, false)
		return true
	}
	donor := v.ifaceNamed(borrowFrom)
	if donor == nil || donor.table != ifc.table {
		return false
	}
	v.setUnnumbered(ifc, donor.index, true)
	return true
}

// setUnnumbered is vnet_sw_interface_update_unnumbered. Setting it again
// only changes the donor; removing it from an interface that is not
// unnumbered does nothing. The callers check that both interfaces are in
// the same tables (-74 UNEXPECTED_INTF_STATE).
func (v *VPP) setUnnumbered(ifc *iface, donor uint32, on bool) {
	ifc.unnumbered = on
	ifc.unnumberedTo = donor
	if !v.booted {
		ifc.startupDonor = ""
		if d := v.iface(donor); on && d != nil {
			ifc.startupDonor = d.name
		}
	}
}

// unnumberedDonorDeleted: VPP keeps the unnumbered flag and the donor's
// index when the donor is deleted (nothing walks the interfaces that borrow
// from it), so IP stays enabled and the index points at whichever interface
// reuses it next.
func unnumberedDonorDeleted(v *VPP, gone *iface) {
	v.ifaces.each(func(_ uint32, ifc *iface) bool {
		if ifc != gone && ifc.unnumbered && ifc.unnumberedTo == gone.index {
			v.violate("unnumbered donor deleted", fmt.Sprintf("%s stays unnumbered to index %d after %s was deleted: VPP keeps the index, so the next interface created there becomes its donor", ifc.name, gone.index, gone.name))
		}
		return true
	})
}

// swInterfaceSetUnnumbered (interface_api.c). The field names are inverted
// with respect to what they mean: SwIfIndex is the interface that has the
// address, UnnumberedSwIfIndex the one that borrows it. The borrower is
// validated first (-2), the donor only when adding (-10).
func swInterfaceSetUnnumbered(c *call, req *interfaces.SwInterfaceSetUnnumbered) []api.Message {
	v := c.v
	r := &interfaces.SwInterfaceSetUnnumberedReply{}
	ifc := v.iface(uint32(req.UnnumberedSwIfIndex))
	switch {
	case ifc == nil:
		r.Retval = int32(api.INVALID_SW_IF_INDEX)
	case req.IsAdd && v.iface(uint32(req.SwIfIndex)) == nil:
		r.Retval = int32(api.INVALID_SW_IF_INDEX_2)
	case req.IsAdd && ifc.table != v.iface(uint32(req.SwIfIndex)).table:
		// vnet_sw_interface_check_table_same: borrower and donor must be
		// in the same tables of both families.
		r.Retval = int32(api.UNEXPECTED_INTF_STATE)
	default:
		v.setUnnumbered(ifc, uint32(req.SwIfIndex), req.IsAdd)
	}
	return c.reply(r)
}

// swInterfaceIP6EnableDisable (ip_api.c, ip6_link.c): enable creates the
// IPv6 link (0) or, when it exists — an earlier enable or an IPv6 address —
// answers -81 VALUE_EXIST but still takes a lock; disable drops a lock, -62
// IP6_NOT_ENABLED without a link. IPv6 stays enabled while a link lock, an
// IPv6 address or the unnumbered setting holds it.
func swInterfaceIP6EnableDisable(c *call, req *ip.SwInterfaceIP6EnableDisable) []api.Message {
	v := c.v
	r := &ip.SwInterfaceIP6EnableDisableReply{}
	ifc := v.iface(uint32(req.SwIfIndex))
	switch {
	case ifc == nil:
		r.Retval = int32(api.INVALID_SW_IF_INDEX)
	case req.Enable:
		if ifc.ip6Link > 0 {
			r.Retval = int32(api.VALUE_EXIST)
		}
		ifc.ip6Link++
	case ifc.ip6Link == 0:
		r.Retval = int32(api.IP6_NOT_ENABLED)
	default:
		ifc.ip6Link--
	}
	return c.reply(r)
}

// firstAddr is ip4_interface_first_address / ip6_interface_first_address
// as NAT44-ED and cnat call them: the interface's first address of the
// family, its donor's when it is unnumbered (VPP points the borrower's
// address list at the donor's).
func (v *VPP) firstAddr(ifc *iface, ip6 bool) (netip.Addr, bool) {
	if ifc.unnumbered {
		if d := v.iface(ifc.unnumberedTo); d != nil {
			return d.firstAddr(ip6)
		}
	}
	return ifc.firstAddr(ip6)
}
