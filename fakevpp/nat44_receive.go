package fakevpp

import "net/netip"

// NAT44-ED's receive entries (nat44_ed_add_fib_entry_reg, nat44_ed.c): the
// external addresses NAT44-ED answers for become local /32 entries in the
// FIB of every outside interface, so that VPP answers ARP for them. They
// are registered, counted per address and interface:
//
//   - for a pool address (not a twice-NAT one), on every outside interface
//     when it is added, and removed with it;
//   - for a static or identity mapping's external address, on every outside
//     interface when it is created, and removed when it goes;
//   - on an interface that becomes outside (a role or the output feature),
//     for every pool address and every mapping of the pool, LB mappings
//     included; removed for the same when it stops being outside.
//
// The counts are per address and interface, but the entry is one FIB source
// per table and prefix: a registration reaching 1 adds it (again), one
// reaching 0 deletes it, even while another interface of the same table
// still counts it. An LB mapping registers nothing when it is added and
// unregisters nothing when it goes, so an outside interface added after an
// LB mapping keeps a receive entry for its address after the mapping is
// deleted. The entry's source (the plugin's low source) loses to an API
// route of the same prefix and wins over a shorter one.

// natRegKey is one registration: an address on an interface.
type natRegKey struct {
	addr netip.Addr
	sw   uint32
}

// natReceiveKey is a receive entry: a /32 in a table.
type natReceiveKey struct {
	table uint32
	addr  netip.Addr
}

func (n *natState) register(v *VPP, a netip.Addr, sw uint32, add bool) {
	ifc := v.iface(sw)
	if ifc == nil {
		return
	}
	k := natRegKey{a, sw}
	switch {
	case add:
		if n.regs[k]++; n.regs[k] == 1 {
			n.receive[natReceiveKey{ifc.table[0], a}] = sw
		}
	case n.regs[k] > 0:
		if n.regs[k]--; n.regs[k] == 0 {
			delete(n.regs, k)
			delete(n.receive, natReceiveKey{ifc.table[0], a})
		}
	}
}

// registerAddr (un)registers a on every outside interface
// (nat44_ed_add_del_interface_fib_reg_entries).
func (n *natState) registerAddr(v *VPP, a netip.Addr, add bool) {
	for _, sw := range n.outsideInterfaces() {
		n.register(v, a, sw, add)
	}
}

// registerInterface (un)registers every pool address and every mapping's
// external address on sw (nat44_ed_add_del_nat_addr_fib_reg_entries and
// nat44_ed_add_del_sm_fib_reg_entries).
func (n *natState) registerInterface(v *VPP, sw uint32, add bool) {
	for _, a := range n.addrs {
		n.register(v, a.addr, sw, add)
	}
	n.mappings.each(func(_ uint32, m *mapping) bool {
		n.register(v, m.ext, sw, add)
		return true
	})
}

// disableReceiveEntries is what nat44_plugin_disable does to the
// registrations: it deletes the static mappings (each unregisters its
// address; an LB mapping nothing), then the pool addresses, then the
// interfaces (which find no address or mapping left to unregister). What
// an LB mapping left behind stays, and VPP's table with it.
func (n *natState) disableReceiveEntries(v *VPP) {
	n.mappings.each(func(_ uint32, m *mapping) bool {
		if m.kind != smLB {
			n.registerAddr(v, m.ext, false)
		}
		return true
	})
	for _, a := range n.addrs {
		n.registerAddr(v, a.addr, false)
	}
}

// outsideInterfaces are the interfaces with the outside role or the output
// feature, in VPP's order (roles first).
func (n *natState) outsideInterfaces() []uint32 {
	var out []uint32
	for _, p := range []*pool[natIface]{&n.ifaces, &n.outputs} {
		p.each(func(_ uint32, r *natIface) bool {
			if r.outside {
				out = append(out, r.sw)
			}
			return true
		})
	}
	return out
}

// natReceive returns the interface of a NAT44-ED receive entry for dst in
// table, if there is one.
func (v *VPP) natReceive(table uint32, dst netip.Addr) *iface {
	if !dst.Is4() {
		return nil
	}
	n := v.nat()
	if sw, ok := n.receive[natReceiveKey{table, dst}]; ok {
		return v.iface(sw)
	}
	return nil
}
