package fakevpp

import (
	"net/netip"
	"slices"

	"go.fd.io/govpp/api"
	interfaces "go.fd.io/govpp/binapi/interface"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip"
	"go.fd.io/govpp/binapi/ip_types"

	"github.com/vppsvc/vppsvc/fakevpp/internal/apiaddr"
)

// Interface addresses added and removed at run time (VPP 25.10
// ip4_add_del_interface_address_internal and its IPv6 twin). After each
// single change VPP runs the address callbacks the plugins registered;
// those of NAT44-ED (pool addresses and static mappings that follow an
// interface) and cnat (SNAT addresses and translation endpoints given by
// sw_if_index) are modelled, with the interface's address list as it is
// after the change.

// AddAddress adds an address (with its subnet) to an interface, as
// sw_interface_add_del_address does; it returns VPP's retval.
func (v *VPP) AddAddress(name string, p netip.Prefix) int32 {
	v.mu.Lock()
	defer v.mu.Unlock()
	ifc := v.ifaceNamed(name)
	if ifc == nil {
		return int32(api.INVALID_SW_IF_INDEX)
	}
	return v.addDelAddress(ifc, p, true)
}

// DelAddress removes an address from an interface; it returns VPP's retval.
func (v *VPP) DelAddress(name string, p netip.Prefix) int32 {
	v.mu.Lock()
	defer v.mu.Unlock()
	ifc := v.ifaceNamed(name)
	if ifc == nil {
		return int32(api.INVALID_SW_IF_INDEX)
	}
	return v.addDelAddress(ifc, p, false)
}

// addDelAddress changes one address and runs the plugins' callbacks. An
// address already on the interface is refused on add (VPP: the same
// address with another length is ADDRESS_IN_USE, the same one again is
// accepted and changes nothing); a missing one on delete answers
// ADDRESS_NOT_FOUND_FOR_INTERFACE.
func (v *VPP) addDelAddress(ifc *iface, p netip.Prefix, add bool) int32 {
	i := slices.IndexFunc(ifc.addrs, func(q netip.Prefix) bool { return q.Addr() == p.Addr() })
	switch {
	case add && v.addressConflicts(ifc, p):
		// ip4/ip6_add_del_interface_address_internal: an address
		// overlapping one of any interface in the same table (the same
		// address again included) is refused: -105 ADDRESS_IN_USE for
		// IPv4, -127 DUPLICATE_IF_ADDRESS for IPv6.
		if p.Addr().Is4() {
			return int32(api.ADDRESS_IN_USE)
		}
		return int32(api.DUPLICATE_IF_ADDRESS)
	case add:
		ifc.addrs = append(ifc.addrs, p)
		if p.Addr().Is6() {
			ifc.ip6Link++
		}
	case i < 0:
		return int32(api.ADDRESS_NOT_FOUND_FOR_INTERFACE)
	default:
		ifc.addrs = slices.Delete(ifc.addrs, i, i+1)
		if p.Addr().Is6() && ifc.ip6Link > 0 {
			ifc.ip6Link--
		}
	}
	if p.Addr().Is4() {
		natAddressChanged(v, ifc, p.Addr(), add)
	}
	v.cnat().InterfaceAddressChanged(ifc.index, p.Addr(), add)
	v.cnatViolations()
	return 0
}

// addressConflicts is the overlap check of an address add: p conflicts
// with an own address x/len of any interface in the same table of the
// family when either contains the other, except for another address of
// the same length on the same interface (an interface may hold several
// addresses of one subnet). Unnumbered interfaces' borrowed addresses do
// not count.
func (v *VPP) addressConflicts(ifc *iface, p netip.Prefix) bool {
	fam := famIdx(p.Addr().Is6())
	conflict := false
	v.ifaces.each(func(_ uint32, o *iface) bool {
		if o.table[fam] != ifc.table[fam] {
			return true
		}
		for _, x := range o.addrs {
			if x.Addr().Is6() != p.Addr().Is6() {
				continue
			}
			if !x.Masked().Contains(p.Addr()) && !p.Masked().Contains(x.Addr()) {
				continue
			}
			if o == ifc && x.Bits() == p.Bits() && x.Addr() != p.Addr() {
				continue
			}
			conflict = true
			return false
		}
		return true
	})
	return conflict
}

func swInterfaceAddDelAddress(c *call, req *interfaces.SwInterfaceAddDelAddress) []api.Message {
	v := c.v
	r := &interfaces.SwInterfaceAddDelAddressReply{}
	ifc := v.iface(uint32(req.SwIfIndex))
	if ifc == nil {
		r.Retval = int32(api.INVALID_SW_IF_INDEX)
		return c.reply(r)
	}
	if req.DelAll {
		for len(ifc.addrs) > 0 {
			v.addDelAddress(ifc, ifc.addrs[len(ifc.addrs)-1], false)
		}
		return c.reply(r)
	}
	p, ok := prefixOf(ip_types.Prefix(req.Prefix))
	if !ok {
		r.Retval = int32(api.INVALID_VALUE)
		return c.reply(r)
	}
	r.Retval = v.addDelAddress(ifc, p, req.IsAdd)
	return c.reply(r)
}

// ipAddressDump lists an interface's addresses of one family, in the order
// they were added.
func ipAddressDump(c *call, req *ip.IPAddressDump) []api.Message {
	ifc := c.v.iface(uint32(req.SwIfIndex))
	if ifc == nil {
		return nil
	}
	var out []api.Message
	for _, p := range ifc.addrs {
		if p.Addr().Is6() == req.IsIPv6 {
			out = append(out, &ip.IPAddressDetails{SwIfIndex: interface_types.InterfaceIndex(ifc.index),
				Prefix: ip_types.AddressWithPrefix{Address: apiaddr.To(p.Addr()), Len: uint8(p.Bits())}})
		}
	}
	return out
}
