package fakevpp

import "net/netip"

// Neighbours' host entries (docs/fakevpp.md#neighbours-and-nat44-ed-receive-entries).
//
// Every IP neighbour, static or learned, puts a /32 (/128) into its
// interface's FIB with the adjacency source (ip_neighbor_adj_fib_add,
// vnet/ip-neighbor/ip_neighbor.c). FIB sources rank by class, then by the
// order they were registered in (fib_source_reg_init,
// vnet/fib/fib_source.c): the adjacency source (class 0xd0) is built in,
// NAT44-ED's "nat-low" source is allocated later in the same class
// (nat44_ed.c), so a neighbour's entry hides NAT44-ED's receive entry of
// the same address; API routes (0x80) and interface addresses (0x03)
// outrank both.
//
// VPP learns a host on a connected subnet from the ARP request (IPv6:
// neighbour solicitation) the host sends before its first packet to VPP
// (arp_learn, vnet/ip-neighbor/ip4_neighbor.c; ip6-nd): Trace does the
// same for the source of each packet it injects, as the real test node
// does by adding that neighbour before it sends (realvpp learnNeighbour).

// learnNeighbour records src as a neighbour of rx when it is a host of
// one of rx's own subnets (not rx's own address).
func (v *VPP) learnNeighbour(rx *iface, src netip.Addr) {
	for _, p := range rx.addrs {
		if p.Masked().Contains(src) && p.Addr() != src {
			v.fibs().learned[nbrKey{rx.index, src}] = true
			return
		}
	}
}

// neighbourIn is the interface of dst's neighbour entry in table fib, nil
// when dst is no neighbour of an interface of that table.
func (v *VPP) neighbourIn(fib uint32, dst netip.Addr) *iface {
	fs := v.fibs()
	fam := famIdx(dst.Is6())
	var found *iface
	v.ifaces.each(func(sw uint32, ifc *iface) bool {
		k := nbrKey{sw, dst}
		if ifc.table[fam] == fib && (fs.nbrs[k] || fs.learned[k]) {
			found = ifc
			return false
		}
		return true
	})
	return found
}
