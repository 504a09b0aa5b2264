package fakevpp

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// This file holds what NAT44-ED's packet nodes share
// (docs/fakevpp.md#nat44-ed-packet-path), read against nat44_ed.c,
// nat44_ed_inlines.h and the node files of VPP 25.10: node names, mapping
// lookups, the tx FIB, flow keys and the session rewrite. The nodes are
// nat44_classify.go (the graph entry and nat44-ed-classify),
// nat44_in2out.go and nat44_out2in.go. The rx FIB is the ingress
// interface's table (vrf.go), the tx FIB get_tx_fib_index's choice (txFib).

const (
	nodeClassify = "nat44-ed-classify"
	nodeIn2Out   = "nat44-ed-in2out"
	nodeOut2In   = "nat44-ed-out2in"
	nodeOutput   = "nat44-ed-in2out-output"
)

// portAttempts is ED_PORT_ALLOC_ATTEMPTS.
const portAttempts = 10

// fibOf returns the IPv4 FIB index of an interface (the fake uses the table
// ID as the index; see vrf.go).
func fibOf(i *iface) uint32 { return i.table[0] }

// matchExternal finds a mapping by external key, then address-only.
func (n *natState) matchExternal(addr netip.Addr, port uint16, proto uint8) *mapping {
	if m := n.byExt[extKey{addr: addr, port: port, proto: proto}]; m != nil {
		return m
	}
	return n.byExt[extKey{addr: addr, port: 0, proto: 0}]
}

// matchLocal is the by-local lookup of snat_static_mapping_match: the
// packet's FIB, then the inside VRF, then the outside VRF, each with the
// exact key and then address-only. Out2in-only mappings are not indexed.
func (n *natState) matchLocal(addr netip.Addr, port uint16, proto uint8, fib uint32) *mapping {
	fibs := []uint32{fib}
	if n.insideVrf != fib {
		fibs = append(fibs, n.insideVrf)
	}
	if n.outsideVrf != fib {
		fibs = append(fibs, n.outsideVrf)
	}
	for _, f := range fibs {
		if m := n.byLocal[localKey{addr: addr, port: port, proto: proto, fib: f}]; m != nil {
			return m
		}
		if m := n.byLocal[localKey{addr: addr, port: 0, proto: 0, fib: f}]; m != nil {
			return m
		}
	}
	return nil
}

// hasOutside tells whether some interface has the outside role (VPP's
// outside_fibs is not empty).
func (n *natState) hasOutside() bool {
	_, r := n.ifaces.find(func(r *natIface) bool { return r.outside })
	return r != nil
}

// txFib is get_tx_fib_index: with a NAT VRF table for the packet's FIB,
// the first of its route FIBs where dst resolves, else the packet's FIB
// (nat44_vrf.go); without one, the enable-time outside VRF unless dst
// resolves in the FIB of an outside interface (the first such FIB in the
// order the outside interfaces were added).
func (n *natState) txFib(v *VPP, dst netip.Addr) uint32 {
	rxFib := v.fibs().cur[0] // the packet's FIB, before any translation
	if fib, found, managed := n.vrfRouteFib(v, rxFib, dst); managed {
		if found {
			return fib
		}
		return rxFib
	}
	for _, f := range n.outsideFibs(v) {
		if v.resolvingInterface(f, dst) != nil {
			return f
		}
	}
	return n.outsideVrf
}

// outsideFibs is VPP's outside_fibs: the FIBs of the outside interfaces
// and of the output-feature interfaces (nat44_ed_add_interface and
// nat44_ed_add_output_interface both count the interface's FIB in it;
// nat44_ed_update_outside_fib_cb moves the count when the interface
// changes tables). VPP keeps them in the order they were first counted;
// the fake lists the roles' FIBs, then the output feature's.
func (n *natState) outsideFibs(v *VPP) []uint32 {
	var fibs []uint32
	add := func(_ uint32, r *natIface) bool {
		if ifc := v.iface(r.sw); r.outside && ifc != nil && !slices.Contains(fibs, fibOf(ifc)) {
			fibs = append(fibs, fibOf(ifc))
		}
		return true
	}
	n.ifaces.each(add)
	n.outputs.each(add)
	return fibs
}

func tcpInit(flags uint8) bool { return flags&tcpSYN != 0 && flags&tcpACK == 0 }

// translate applies one direction of an existing session.
func (n *natState) translate(c *pktCtx, node string, s *session, f *flow, dir int, what string) {
	before := c.pkt
	f.apply(&c.pkt)
	n.forwardFib(c, s, dir)
	n.touch(c.v, s, &c.pkt, dir)
	if before.src == c.pkt.src && before.dst == c.pkt.dst {
		c.step("%s: %s %s, not translated", node, what, s.describe())
		return
	}
	c.step("%s: %s %s", node, what, rewriteDesc(before, c.pkt))
}

// rewriteDesc describes what a translation changed: "dst A → B" and/or
// "src C → D".
func rewriteDesc(before, after pkt) string {
	var parts []string
	if before.dst != after.dst {
		parts = append(parts, fmt.Sprintf("dst %s → %s", before.dst, after.dst))
	}
	if before.src != after.src {
		parts = append(parts, fmt.Sprintf("src %s → %s", before.src, after.src))
	}
	return strings.Join(parts, ", ")
}

func (s *session) describe() string {
	return fmt.Sprintf("%s in %s out %s ext %s", protoName(s.proto), s.in, s.out, s.ext)
}

// o2iKey is the outside-side key of an in2out session; for ICMP both ports
// carry the (translated) identifier.
func o2iKey(proto uint8, remote, outside netip.AddrPort, fib uint32) flowKey {
	if proto == protoICMP {
		remote = netip.AddrPortFrom(remote.Addr(), outside.Port())
	}
	return flowKey{remote, outside, proto, fib}
}

// le32 reads an IPv4 address as VPP's as_u32 on a little-endian host.
func le32(a netip.Addr) uint32 {
	b := a.As4()
	return binary.LittleEndian.Uint32(b[:])
}
