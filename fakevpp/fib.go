package fakevpp

import (
	"fmt"
	"net/netip"
)

// route is a FIB entry added with AddRoute: dst via an interface, no next hop
// (the fake does not model neighbours). It refers to the interface by name so
// that it survives nothing it should not: DeleteInterface removes it.
type route struct {
	dst     netip.Prefix
	ifName  string
	startup bool // added before the first client connected: kept by Restart
}

// AddRoute installs dst via the interface (pod /32 → its tap, 0.0.0.0/0 →
// uplink). An existing route for the same prefix is replaced. Routing an
// unknown interface panics: it is a mistake in the test.
func (v *VPP) AddRoute(dst netip.Prefix, ifName string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.ifaceNamed(ifName) == nil {
		panic(fmt.Sprintf("fakevpp: AddRoute %s via unknown interface %q", dst, ifName))
	}
	dst = dst.Masked()
	v.routes[dst] = &route{dst: dst, ifName: ifName, startup: !v.booted}
}

// DeleteRoute removes the route for dst added with AddRoute.
func (v *VPP) DeleteRoute(dst netip.Prefix) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	dst = dst.Masked()
	_, ok := v.routes[dst]
	delete(v.routes, dst)
	return ok
}

// fibResult is the outcome of a FIB lookup.
type fibResult struct {
	local  *iface       // dst is this interface's own address (receive entry)
	egress *iface       // otherwise: the interface the packet leaves by
	drop   bool         // otherwise: a drop route matched
	prefix netip.Prefix // the matching entry
}

func (r fibResult) found() bool { return r.local != nil || r.egress != nil }

// lookup is ip4-lookup / ip6-lookup of the packet being traced: the
// longest-prefix match in the FIB its buffer points at (the ingress
// interface's table, or the one NAT44-ED chose for a translated packet; see
// vrf.go).
func (v *VPP) lookup(dst netip.Addr) fibResult {
	return v.lookupIn(v.fibs().cur[famIdx(dst.Is6())], dst)
}

// lookupIn does the longest-prefix match in table fib over the receive
// entries (addresses of the table's interfaces), the connected subnets and
// the routes; a route that points into another table is followed there.
// A connected subnet wins over a route of the same length.
func (v *VPP) lookupIn(fib uint32, dst netip.Addr) fibResult {
	return v.lookupDepth(fib, dst, 0)
}

func (v *VPP) lookupDepth(fib uint32, dst netip.Addr, depth int) fibResult {
	best, via := v.bestIn(fib, dst)
	if via != nil && depth < 8 {
		// A deaggregation path: look the destination up again in the next
		// table (VPP's lookup DPO); a loop ends in a drop.
		return v.lookupDepth(via.next, dst, depth+1)
	}
	if via != nil {
		return fibResult{}
	}
	return best
}

// resolvingInterface is fib_entry_get_resolving_interface of
// fib_table_lookup in table fib alone (NAT44-ED's get_tx_fib_index and
// is_destination_resolvable): the interface of the entry dst matches
// there, nil for a route that continues in another table (a lookup DPO
// has no interface), a drop route or no match.
func (v *VPP) resolvingInterface(fib uint32, dst netip.Addr) *iface {
	r, via := v.bestIn(fib, dst)
	switch {
	case via != nil:
		return nil
	case r.egress != nil:
		return r.egress
	}
	return r.local
}

// bestIn is the longest-prefix match in table fib alone: an entry with an
// interface, or (via set) a route that continues in another table.
func (v *VPP) bestIn(fib uint32, dst netip.Addr) (fibResult, *tableRoute) {
	var best fibResult
	bestLen := -1
	fam := famIdx(dst.Is6())
	v.ifaces.each(func(_ uint32, ifc *iface) bool {
		if ifc.table[fam] != fib {
			return true
		}
		for _, p := range ifc.addrs {
			if p.Addr() == dst {
				best = fibResult{local: ifc, prefix: netip.PrefixFrom(dst, dst.BitLen())}
				bestLen = 1 << 10
				return false
			}
			if m := p.Masked(); m.Contains(dst) && m.Bits() > bestLen {
				best, bestLen = fibResult{egress: ifc, prefix: m}, m.Bits()
			}
		}
		return true
	})
	if best.local != nil {
		return best, nil
	}
	if fib == 0 {
		for _, r := range v.routes {
			if r.dst.Contains(dst) && r.dst.Bits() > bestLen {
				if ifc := v.ifaceNamed(r.ifName); ifc != nil {
					best, bestLen = fibResult{egress: ifc, prefix: r.dst}, r.dst.Bits()
				}
			}
		}
	}
	var via *tableRoute
	for k, r := range v.fibs().routes {
		if k.table != fib || k.ip6 != dst.Is6() || !k.dst.Contains(dst) || k.dst.Bits() <= bestLen {
			continue
		}
		if r.viaTable {
			via, bestLen = r, k.dst.Bits()
			best = fibResult{prefix: k.dst}
			continue
		}
		if r.drop {
			via = nil
			best, bestLen = fibResult{drop: true, prefix: k.dst}, k.dst.Bits()
			continue
		}
		if ifc := v.iface(r.sw); ifc != nil {
			via = nil
			best, bestLen = fibResult{egress: ifc, prefix: k.dst}, k.dst.Bits()
		}
	}
	// A neighbour's host entry (the adjacency source) loses to an API
	// route of the same length and wins over NAT44-ED's receive entries
	// (neighbours.go).
	if bestLen < dst.BitLen() {
		if ifc := v.neighbourIn(fib, dst); ifc != nil {
			return fibResult{egress: ifc, prefix: netip.PrefixFrom(dst, dst.BitLen())}, nil
		}
	}
	// NAT44-ED's receive entries (the plugin's low source) lose to an API
	// route of the same /32 and win over any shorter prefix.
	if bestLen < 32 {
		if ifc := v.natReceive(fib, dst); ifc != nil {
			return fibResult{local: ifc, prefix: netip.PrefixFrom(dst, 32)}, nil
		}
	}
	return best, via
}

// reachesTable0 tells whether a lookup of dst in table fib gets to table 0
// (fib is 0, or its best match continues there): where cnat's VIP entries
// live (cnat installs them in table 0 only), so a packet in a VRF meets a
// VIP only through a route into table 0.
func (v *VPP) reachesTable0(fib uint32, dst netip.Addr) bool {
	for i := 0; i < 8; i++ {
		if fib == 0 {
			return true
		}
		_, via := v.bestIn(fib, dst)
		if via == nil {
			return false
		}
		fib = via.next
	}
	return false
}
