package fakevpp

import (
	"net/netip"

	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/binapi/nat_types"
)

// NAT44-ED pool addresses that follow an interface (VPP 25.10 nat44_ed.c:
// nat44_ed_add_interface_address, nat44_ed_add_del_interface_address_cb,
// and nat44_ed_add_del_static_mapping_cb for mappings bound to an
// interface). A record (interface, twice-NAT or not) takes the interface's
// first IPv4 address into the pool with VRF ~0 when it is made and each
// time an address arrives while it is unresolved; it gives the address back
// when that address is removed.
//
// VPP's address callback looks for the interface's normal record first and
// for the twice-NAT record only when there is no normal one: with both, an
// address change reaches the normal record alone (the twice-NAT record
// resolves only when it is made). The fake does the same.

// addrResolve is one of VPP's addr_to_resolve records.
type addrResolve struct {
	sw       uint32
	twice    bool
	resolved bool
}

func (n *natState) findAddrResolve(sw uint32, twice bool) int {
	for i, r := range n.addrResolve {
		if r.sw == sw && r.twice == twice {
			return i
		}
	}
	return -1
}

// natInterfaceAddr serves nat44_add_del_interface_addr.
func natInterfaceAddr(c *call, req *nat44_ed.Nat44AddDelInterfaceAddr) []api.Message {
	v, n := c.v, c.v.nat()
	r := &nat44_ed.Nat44AddDelInterfaceAddrReply{}
	sw := uint32(req.SwIfIndex)
	ifc := v.iface(sw)
	twice := req.Flags&nat_types.NAT_IS_TWICE_NAT != 0
	switch {
	case ifc == nil:
		r.Retval = int32(api.INVALID_SW_IF_INDEX)
	case !n.enabled:
		r.Retval = int32(api.UNSUPPORTED)
	case req.IsAdd:
		if n.findAddrResolve(sw, twice) >= 0 {
			r.Retval = int32(api.VALUE_EXIST)
			break
		}
		rec := &addrResolve{sw: sw, twice: twice}
		n.addrResolve = append(n.addrResolve, rec)
		if a, ok := v.firstAddr(ifc, false); ok {
			if rv := n.addPoolAddr(v, a, anyVRF, twice); rv != 0 {
				n.dropAddrResolve(sw, twice)
				r.Retval = rv
				break
			}
			rec.resolved = true
		}
	default:
		if !n.dropAddrResolve(sw, twice) {
			r.Retval = int32(api.NO_SUCH_ENTRY)
			break
		}
		if a, ok := v.firstAddr(ifc, false); ok {
			r.Retval = n.delPoolAddr(v, a, twice)
		}
	}
	return c.reply(r)
}

// dropAddrResolve removes a record as vec_del1 does (the last one takes its
// place).
func (n *natState) dropAddrResolve(sw uint32, twice bool) bool {
	i := n.findAddrResolve(sw, twice)
	if i < 0 {
		return false
	}
	last := len(n.addrResolve) - 1
	n.addrResolve[i] = n.addrResolve[last]
	n.addrResolve = n.addrResolve[:last]
	return true
}

// natInterfaceAddrDump lists the records in their order.
func natInterfaceAddrDump(c *call, _ *nat44_ed.Nat44InterfaceAddrDump) []api.Message {
	var out []api.Message
	for _, r := range c.v.nat().addrResolve {
		d := &nat44_ed.Nat44InterfaceAddrDetails{SwIfIndex: interface_types.InterfaceIndex(r.sw)}
		if r.twice {
			d.Flags = nat_types.NAT_IS_TWICE_NAT
		}
		out = append(out, d)
	}
	return out
}

// natAddressChanged runs NAT44-ED's two address callbacks after an IPv4
// address was added to or removed from ifc: static mappings bound to the
// interface first, then the pool records (VPP registers them in that
// order in nat44_ed_plugin_enable... both run; their order does not
// change the outcome).
func natAddressChanged(v *VPP, ifc *iface, a netip.Addr, added bool) {
	n := v.nat()
	if !n.enabled {
		return
	}
	for _, rp := range append([]*resolveRec(nil), n.resolve...) {
		if rp.sw != ifc.index {
			continue
		}
		switch {
		case added && !rp.resolved:
			if n.addStaticInternal(v, rp.args(a)) == 0 {
				rp.resolved = true
			}
		case !added && rp.resolved:
			if n.delStaticInternal(v, rp.args(a)) == 0 {
				rp.resolved = false
			}
		}
	}
	i := n.findAddrResolve(ifc.index, false)
	if i < 0 {
		i = n.findAddrResolve(ifc.index, true)
	}
	if i < 0 {
		return
	}
	rec := n.addrResolve[i]
	switch {
	case added && !rec.resolved:
		if n.addPoolAddr(v, a, anyVRF, rec.twice) == 0 {
			rec.resolved = true
		}
	case !added && rec.resolved:
		if n.delPoolAddr(v, a, rec.twice) == 0 {
			rec.resolved = false
		}
	}
}
