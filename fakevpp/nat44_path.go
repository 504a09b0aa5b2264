package fakevpp

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// This file holds NAT44-ED's packet algorithms (docs/fakevpp.md#nat44-ed-packet-path), read
// against nat44_ed_in2out.c, nat44_ed_out2in.c and nat44_ed_classify.c of
// VPP 25.10. The rx FIB is the ingress interface's table (vrf.go), the tx
// FIB get_tx_fib_index's choice (txFib).

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

// natInputNode runs NAT44-ED on ip4-unicast according to the ingress
// interface's role.
func natInputNode(c *pktCtx) {
	n := c.v.nat()
	if !n.enabled || !c.pkt.is4() {
		return
	}
	rec := n.role(c.rx.index)
	isOutput := n.output(c.rx.index) != nil
	if rec == nil && !isOutput {
		return
	}
	switch {
	case isOutput:
		n.out2in(c)
	case rec.inside && rec.outside:
		n.classify(c)
	case rec.inside:
		n.in2out(c, false)
	default:
		n.out2in(c)
	}
}

// natOutputNode runs nat44-ed-in2out-output on ip4-output of an
// output-feature interface.
func natOutputNode(c *pktCtx) {
	n := c.v.nat()
	if !n.enabled || !c.pkt.is4() || c.tx == nil || n.output(c.tx.index) == nil {
		return
	}
	n.in2out(c, true)
}

// classify is nat44-ed-classify on an inside+outside interface: an existing
// session decides (except for ICMP), then pool addresses and mappings whose
// local differs from the external address send the packet to out2in.
func (n *natState) classify(c *pktCtx) {
	p := c.pkt
	toOut2In := func(why string) {
		c.step("%s: out2in (%s)", nodeClassify, why)
		n.out2in(c)
	}
	toIn2Out := func(why string) {
		c.step("%s: in2out (%s)", nodeClassify, why)
		n.in2out(c, false)
	}
	if p.proto != protoICMP {
		k := flowKey{p.src, p.dst, p.proto, fibOf(c.rx)}
		if s := n.flows[k]; s != nil {
			if s.hasI2O && s.i2o.match == k {
				toIn2Out("session, inside side")
			} else {
				toOut2In("session, outside side")
			}
			return
		}
	}
	if indexAddr(n.addrs, p.dst.Addr()) >= 0 {
		toOut2In("destination is a pool address")
		return
	}
	if m := n.byExt[extKey{p.dst.Addr(), 0, 0}]; m != nil {
		if m.local != m.ext {
			toOut2In("address-only mapping")
		} else {
			toIn2Out("identity mapping")
		}
		return
	}
	if m := n.byExt[extKey{p.dst.Addr(), p.dst.Port(), p.proto}]; m != nil && m.local != m.ext {
		toOut2In(kindName(m.kind) + " mapping")
		return
	}
	toIn2Out("no session or mapping")
}

// matchExternal finds a mapping by external key, then address-only.
func (n *natState) matchExternal(addr netip.Addr, port uint16, proto uint8) *mapping {
	if m := n.byExt[extKey{addr, port, proto}]; m != nil {
		return m
	}
	return n.byExt[extKey{addr, 0, 0}]
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
		if m := n.byLocal[localKey{addr, port, proto, f}]; m != nil {
			return m
		}
		if m := n.byLocal[localKey{addr, 0, 0, f}]; m != nil {
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
		if v.lookupIn(f, dst).found() {
			return f
		}
	}
	return n.outsideVrf
}

// outsideFibs is VPP's outside_fibs: the FIBs of the outside interfaces.
func (n *natState) outsideFibs(v *VPP) []uint32 {
	var fibs []uint32
	n.ifaces.each(func(_ uint32, r *natIface) bool {
		if ifc := v.iface(r.sw); r.outside && ifc != nil && !slices.Contains(fibs, fibOf(ifc)) {
			fibs = append(fibs, fibOf(ifc))
		}
		return true
	})
	return fibs
}

func tcpInit(flags uint8) bool { return flags&tcpSYN != 0 && flags&tcpACK == 0 }

// in2out is nat44-ed-in2out (output=false, ingress on an inside interface)
// and nat44-ed-in2out-output (output=true, egress on an output-feature
// interface).
func (n *natState) in2out(c *pktCtx, output bool) {
	v := c.v
	node := nodeIn2Out
	if output {
		node = nodeOutput
	}
	if c.pkt.isErr {
		n.in2outError(c, node, output)
		return
	}
	p := c.pkt
	key := flowKey{p.src, p.dst, p.proto, fibOf(c.rx)}
	if output && n.forwarding {
		if s := n.flows[key]; s != nil && s.flags&sfBypass != 0 {
			n.touch(v, s, &c.pkt, dirI2O)
			c.step("%s: forwarding-bypass session, not translated", node)
			return
		}
	}
	if s := n.flows[key]; s != nil {
		if s.vrfExpired || n.expired(v, s) {
			c.step("%s: session %s expired, deleted", node, s.describe())
			n.deleteSession(v, s)
		} else {
			switch {
			case s.hasI2O && s.i2o.match == key:
				n.translate(c, node, s, &s.i2o, dirI2O, "session")
			case s.flags&sfHairpin != 0 && s.hasO2I && s.o2i.match == key:
				n.translate(c, node, s, &s.o2i, dirO2I, "hairpin session, reply")
			default:
				n.deleteSession(v, s)
				c.drop(node, "packet matches the outside side of a session; session deleted")
			}
			return
		}
	}
	if !hasPorts(p.proto) {
		n.in2outOtherProto(c, node)
		return
	}
	if output {
		if why := n.notTranslateOutput(c); why != "" {
			c.step("%s: not translated (%s)", node, why)
			return
		}
	} else if why := n.notTranslate(c); why != "" {
		c.step("%s: not translated (%s)", node, why)
		return
	}
	n.in2outSlow(c, node, output)
}

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

// notTranslate is nat44_ed_not_translate for the ingress in2out node. It
// returns why the packet passes untranslated, or "" to translate it.
func (n *natState) notTranslate(c *pktCtx) string {
	v, p := c.v, c.pkt
	if n.flows[flowKey{p.dst, p.src, p.proto, n.outsideVrf}] != nil {
		return ""
	}
	if m := n.matchExternal(p.dst.Addr(), p.dst.Port(), p.proto); m != nil {
		if m.kind == smLB && m.affinity > 0 {
			v.violate("LB hairpin on an inside-only interface",
				fmt.Sprintf("%s from inside-only %s to LB %s:%d with affinity: VPP dereferences a NULL client address in nat44_ed_not_translate (crash)", p, c.rx.name, m.ext, m.extPort))
		}
		return ""
	}
	if n.forwarding {
		return "forwarding enabled"
	}
	if c.rx.hasAddr(p.dst.Addr()) {
		return "destination is an address of " + c.rx.name
	}
	// is_destination_resolvable: with a NAT VRF table for the packet's
	// FIB, the destination resolves in one of its route FIBs; otherwise in
	// one of the outside FIBs through an outside interface.
	if _, found, managed := n.vrfRouteFib(v, fibOf(c.rx), p.dst.Addr()); managed {
		if found {
			return ""
		}
		return "destination not resolvable in the NAT VRF table's routes"
	}
	for _, f := range n.outsideFibs(v) {
		res := v.lookupIn(f, p.dst.Addr())
		out := res.egress
		if out == nil {
			out = res.local
		}
		if out != nil {
			if r := n.role(out.index); r != nil && r.outside {
				return ""
			}
		}
	}
	return "destination not reachable through an outside interface"
}

// notTranslateOutput is nat44_ed_not_translate_output_feature.
func (n *natState) notTranslateOutput(c *pktCtx) string {
	p := c.pkt
	if n.flows[flowKey{p.src, p.dst, p.proto, fibOf(c.tx)}] != nil {
		return "a session exists in the egress FIB"
	}
	if s := n.flows[flowKey{p.dst, p.src, p.proto, fibOf(c.rx)}]; s != nil {
		if s.flags&sfBypass != 0 || n.output(c.rx.index) != nil {
			return ""
		}
		return "reply of a session created on the way in"
	}
	if p.proto == protoUDP && p.dst.Port() == 67 && p.dst.Addr() == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
		return "DHCP broadcast"
	}
	return ""
}

// in2outSlow is slow_path_ed: match by local (static source or dynamic
// SNAT), hairpinning to a mapping's local, and session creation.
func (n *natState) in2outSlow(c *pktCtx, node string, output bool) {
	v := c.v
	p := c.pkt
	rxFib := fibOf(c.rx)
	if uint32(n.sessions.len()) >= n.limitFor(rxFib) && !n.reclaimExpired(v) {
		c.drop(node, "maximum sessions exceeded")
		return
	}
	m := n.matchLocal(p.src.Addr(), p.src.Port(), p.proto, rxFib)
	if m != nil && m.kind == smIdentity {
		c.step("%s: identity mapping %s, not translated", node, m.ext)
		return
	}
	if p.proto == protoTCP && !tcpInit(p.tcpFlags) {
		c.drop(node, "non-SYN TCP packet without session")
		return
	}
	txFib := n.txFib(v, p.dst.Addr())
	dst := p.dst
	s := &session{proto: p.proto, in: p.src, inFib: rxFib, outFib: txFib, ext: p.dst}
	if hm := n.matchExternal(p.dst.Addr(), p.dst.Port(), p.proto); hm != nil {
		if hm.kind == smLB {
			v.violate("LB hairpin on an inside-only interface",
				fmt.Sprintf("%s from %s to LB %s:%d: VPP rewrites the destination to the LB's local 0.0.0.0; only inside+outside interfaces hairpin to LB mappings", p, c.rx.name, hm.ext, hm.extPort))
			c.drop(node, "hairpinning to a load-balanced mapping is unsupported on this path")
			return
		}
		port := hm.localPort
		if hm.addrOnly() {
			port = p.dst.Port()
		}
		dst = netip.AddrPortFrom(hm.local, port)
		s.flags |= sfHairpin
		if p.proto != protoICMP && dst.Port() != p.dst.Port() {
			v.violate("hairpin reply keeps the local port",
				fmt.Sprintf("%s from inside-only %s to %s:%d: the reply will come from %s:%d, not %s (VPP in2out.c rewrites only the o2i source address)", p, c.rx.name, hm.ext, p.dst.Port(), p.dst.Addr(), dst.Port(), p.dst))
		}
	}
	var outside netip.AddrPort
	what := "dynamic SNAT"
	if m == nil {
		var tx *iface
		if output {
			tx = c.tx
		}
		var ok bool
		outside, ok = n.allocDynamic(v, p, dst, rxFib, txFib, tx)
		if !ok {
			c.drop(node, "out of ports: no usable pool address or port")
			return
		}
	} else {
		s.flags |= sfStatic
		if m.kind == smLB {
			s.flags |= sfLB
		}
		port := m.extPort
		if m.addrOnly() {
			port = p.src.Port()
		}
		outside = netip.AddrPortFrom(m.ext, port)
		if n.flows[o2iKey(p.proto, dst, outside, txFib)] != nil {
			c.drop(node, "out2in key already in use")
			return
		}
		what = kindName(m.kind) + " mapping source"
	}
	s.out = outside
	s.o2i = flow{match: o2iKey(p.proto, dst, outside, txFib), ops: rwSAddr | rwDAddr, saddr: p.dst.Addr(), daddr: p.src.Addr()}
	s.i2o = flow{match: flowKey{p.src, p.dst, p.proto, rxFib}, ops: rwSAddr | rwDAddr, saddr: outside.Addr(), daddr: dst.Addr()}
	if p.proto == protoICMP {
		s.o2i.ops, s.o2i.icmpID = s.o2i.ops|rwICMPID, p.src.Port()
		s.i2o.ops, s.i2o.icmpID = s.i2o.ops|rwICMPID, outside.Port()
	} else {
		// The o2i source port is left alone: a hairpinned reply keeps the
		// local port instead of the external one (VPP 25.10 in2out.c).
		s.o2i.ops, s.o2i.dport = s.o2i.ops|rwDPort, p.src.Port()
		s.i2o.ops, s.i2o.sport, s.i2o.dport = s.i2o.ops|rwSPort|rwDPort, outside.Port(), dst.Port()
	}
	s.hasI2O, s.hasO2I = true, true
	n.addSession(v, s)
	before := c.pkt
	s.i2o.apply(&c.pkt)
	n.forwardFib(c, s, dirI2O)
	n.touch(v, s, &c.pkt, dirI2O)
	desc := fmt.Sprintf("%s %s → %s", what, before.src, c.pkt.src)
	if s.flags&sfHairpin != 0 {
		desc += fmt.Sprintf(", dst %s → %s (hairpin)", before.dst, c.pkt.dst)
	}
	c.step("%s: %s (session created)", node, desc)
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

// addrBinding returns the NAT outside (or output-feature) interface whose
// connected subnet holds a pool address, and that subnet (VPP's
// nat44_ed_bind_if_addr_to_nat_addr).
func (n *natState) addrBinding(v *VPP, a netip.Addr) (*iface, netip.Prefix) {
	var ifc *iface
	var net netip.Prefix
	check := func(r *natIface) bool {
		if !r.outside {
			return true
		}
		if x := v.iface(r.sw); x != nil {
			for _, p := range x.addrs {
				if p.Masked().Contains(a) {
					ifc, net = x, p.Masked()
					return false
				}
			}
		}
		return true
	}
	n.ifaces.each(func(_ uint32, r *natIface) bool { return check(r) })
	if ifc == nil {
		n.outputs.each(func(_ uint32, r *natIface) bool { return check(r) })
	}
	return ifc, net
}

// pickAddr is the address choice of nat_ed_alloc_addr_and_port: walk the
// pool cyclically from a hash of the source; an address of the packet's VRF
// bound to an interface whose subnet holds the destination wins at once;
// otherwise the last address of that VRF seen, otherwise the last
// VRF-independent one.
func (n *natState) pickAddr(v *VPP, src, dst netip.Addr, rxFib uint32, tx *iface) (natAddr, bool) {
	num := len(n.addrs)
	if num == 0 {
		return natAddr{}, false
	}
	s := le32(src)
	off := int((s + s>>8 + s>>16 + s>>24) % uint32(num))
	var ja, ba, ra *natAddr
	for j := 0; j < num; j++ {
		a := &n.addrs[(off+j)%num]
		switch {
		case a.vrf == rxFib:
			bound, net := n.addrBinding(v, a.addr)
			if tx != nil {
				if bound == tx {
					if net.Contains(dst) {
						return *a, true
					}
					ra = a
				}
			} else if bound != nil && net.Contains(dst) {
				return *a, true
			}
			ja = a
		case a.vrf == anyVRF:
			ba = a
		}
	}
	for _, a := range []*natAddr{ra, ja, ba} {
		if a != nil {
			return *a, true
		}
	}
	return natAddr{}, false
}

// allocDynamic picks the outside address and port of a dynamic session. The
// source port is tried first when it is in 1024–65535 (port preservation),
// then random ports, 10 attempts in all. A port is free when the o2i key is
// unused and (address, port, proto) is not a mapping's external key.
func (n *natState) allocDynamic(v *VPP, p pkt, dst netip.AddrPort, rxFib, txFib uint32, tx *iface) (netip.AddrPort, bool) {
	a, ok := n.pickAddr(v, p.src.Addr(), p.dst.Addr(), rxFib, tx)
	if !ok {
		return netip.AddrPort{}, false
	}
	port := p.src.Port()
	if port < 1024 {
		port = v.randomPort()
	}
	for i := 0; i < portAttempts; i++ {
		out := netip.AddrPortFrom(a.addr, port)
		if n.flows[o2iKey(p.proto, dst, out, txFib)] == nil && n.byExt[extKey{a.addr, port, p.proto}] == nil {
			return out, true
		}
		port = v.randomPort()
	}
	return netip.AddrPort{}, false
}

// out2in is nat44-ed-out2in: sessions first, then mappings by external key,
// forwarding bypass, and drops.
func (n *natState) out2in(c *pktCtx) {
	if c.pkt.isErr {
		n.out2inError(c)
		return
	}
	v, p := c.v, c.pkt
	key := flowKey{p.src, p.dst, p.proto, fibOf(c.rx)}
	if s := n.flows[key]; s != nil {
		if s.vrfExpired || n.expired(v, s) {
			c.step("%s: session %s expired, deleted", nodeOut2In, s.describe())
			n.deleteSession(v, s)
		} else {
			switch {
			case s.hasO2I && s.o2i.match == key:
				n.translate(c, nodeOut2In, s, &s.o2i, dirO2I, "session")
			case s.flags&sfTwice != 0 && s.hasI2O && s.i2o.match == key:
				n.translate(c, nodeOut2In, s, &s.i2o, dirI2O, "twice-NAT session, reply")
			case p.proto == protoUDP && p.dst.Port() == 68:
				c.step("%s: DHCP to client, not translated", nodeOut2In)
			case !n.forwarding:
				c.drop(nodeOut2In, "no translation: packet matches the inside side of a session")
			case s.hasI2O && s.i2o.match == key:
				n.translate(c, nodeOut2In, s, &s.i2o, dirI2O, "session (forwarding)")
			default:
				n.deleteSession(v, s)
				c.drop(nodeOut2In, "flow mismatch, session deleted")
			}
			return
		}
	}
	n.out2inSlow(c)
}

// out2inSlow is the out2in slow path.
func (n *natState) out2inSlow(c *pktCtx) {
	if !hasPorts(c.pkt.proto) {
		n.out2inOtherProto(c)
		return
	}
	v, p := c.v, c.pkt
	rxFib := fibOf(c.rx)
	m := n.matchExternal(p.dst.Addr(), p.dst.Port(), p.proto)
	if m == nil {
		switch {
		case p.proto == protoUDP && p.dst.Port() == 68:
			c.step("%s: DHCP to client, not translated", nodeOut2In)
		case n.forwarding:
			n.bypass(c, rxFib)
		case p.proto == protoICMP && c.rx.hasAddr(p.dst.Addr()):
			c.step("%s: ICMP to %s's own address, not translated", nodeOut2In, c.rx.name)
		default:
			c.drop(nodeOut2In, "no translation")
		}
		return
	}
	// The LB draw and the affinity lock happen while matching, before the
	// checks below, as in snat_static_mapping_match.
	var local netip.AddrPort
	var localFib uint32
	var locked bool
	switch m.kind {
	case smLB:
		l, lk, ok := n.chooseBackend(c, m, p.src.Addr())
		if !ok {
			c.drop(nodeOut2In, fmt.Sprintf("LB %s:%d drew no backend: VPP's 8-bit cumulative probabilities are all 0 or wrapped (a sum past 255)", m.ext, m.extPort))
			return
		}
		local, localFib, locked = l.ep(), l.vrf, lk
	default:
		port := m.localPort
		if m.addrOnly() {
			port = p.dst.Port()
		}
		local, localFib = netip.AddrPortFrom(m.local, port), m.vrf
	}
	leak := func(why string) {
		if locked {
			v.violate("affinity record locked by a dropped packet",
				fmt.Sprintf("%s to LB %s:%d was dropped (%s) after VPP locked the client's affinity record; the record never expires", p, m.ext, m.extPort, why))
		}
	}
	if p.proto == protoICMP && !p.echoReply && !m.addrOnly() {
		leak("ICMP echo request to a port mapping")
		c.drop(nodeOut2In, "ICMP echo request to a port mapping")
		return
	}
	if m.kind == smIdentity {
		c.step("%s: identity mapping %s, not translated", nodeOut2In, m.ext)
		return
	}
	if p.proto == protoTCP && !tcpInit(p.tcpFlags) {
		leak("non-SYN")
		c.drop(nodeOut2In, "non-SYN TCP packet without session")
		return
	}
	if uint32(n.sessions.len()) >= n.limitFor(rxFib) {
		leak("maximum sessions exceeded")
		c.drop(nodeOut2In, "maximum sessions exceeded")
		return
	}
	n.createStaticSession(c, m, local, localFib, leak)
}

// chooseBackend picks an LB local: a live affinity record first, otherwise a
// draw r = 1 + random32 mod the last local's 8-bit cumulative weight,
// binary-searched over the cumulative weights in pool order.
// It reports whether an affinity record was locked.
func (n *natState) chooseBackend(c *pktCtx, m *mapping, client netip.Addr) (*lbLocal, bool, bool) {
	v := c.v
	k := affKey{client: client, ext: m.ext, port: m.extPort, proto: m.proto}
	if m.affinity > 0 {
		if l, ok := n.findAffinity(v, k, m); ok {
			c.step("%s: affinity %s → %s", nodeOut2In, client, l.ep())
			return l, true, true
		}
	}
	// VPP draws 1 + random % (the last local's prefix) and binary-searches
	// the prefixes in pool order (snat_static_mapping_match). Prefixes are
	// 8-bit: a sum of probabilities past 255 wraps, so the draw covers the
	// wrong range, and a sum that wraps to 0 divides by zero.
	var order []uint32
	m.locals.each(func(i uint32, _ *lbLocal) bool {
		order = append(order, i)
		return true
	})
	if len(order) == 0 {
		return nil, false, false
	}
	total := uint32(m.locals.get(order[len(order)-1]).cum)
	if total == 0 {
		v.violate("LB prefix 0", fmt.Sprintf("%s:%d: the last local's cumulative probability is 0 (all 0, or a sum that wraps 8 bits to 0): VPP divides by zero on the first packet (SIGFPE); the fake drops it", m.ext, m.extPort))
		return nil, false, false
	}
	if m.totalWeight() > 255 {
		v.violate("LB probabilities over 255", fmt.Sprintf("%s:%d: the probabilities sum to %d; VPP keeps the running sum in 8 bits, so backends are drawn from a wrapped range", m.ext, m.extPort, m.totalWeight()))
	}
	var eligible []netip.AddrPort
	m.locals.each(func(_ uint32, l *lbLocal) bool {
		if l.prob > 0 {
			eligible = append(eligible, l.ep())
		}
		return true
	})
	c.endpoints = eligible
	r := 1 + v.random32()%total
	lo, hi := 0, len(order)-1
	for lo < hi {
		mid := (hi-lo)/2 + lo
		if r > uint32(m.locals.get(order[mid]).cum) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	idx, pick := order[lo], m.locals.get(order[lo])
	if uint32(pick.cum) < r {
		return nil, false, false // VPP: no match, as if there were no mapping
	}
	if m.affinity > 0 {
		n.createAffinity(k, m, idx, pick)
		return pick, true, true
	}
	return pick, false, true
}

// createStaticSession is create_session_for_static_mapping_ed.
func (n *natState) createStaticSession(c *pktCtx, m *mapping, local netip.AddrPort, localFib uint32, leak func(string)) {
	v, p := c.v, c.pkt
	rxFib := fibOf(c.rx)
	s := &session{proto: p.proto, in: local, inFib: localFib, out: p.dst, outFib: rxFib, ext: p.src, flags: sfStatic}
	if p.proto == protoICMP {
		s.ext = netip.AddrPortFrom(p.src.Addr(), 0)
	}
	if m.kind == smLB {
		s.flags |= sfLB
		if m.affinity > 0 {
			s.flags |= sfAffinity
		}
	}
	s.o2i = flow{match: flowKey{p.src, p.dst, p.proto, rxFib}, ops: rwDAddr, daddr: local.Addr()}
	if p.proto == protoICMP {
		s.o2i.ops, s.o2i.icmpID = s.o2i.ops|rwICMPID, local.Port()
	} else {
		s.o2i.ops, s.o2i.dport = s.o2i.ops|rwDPort, local.Port()
	}
	twice := m.twice() || (m.selfTwice() && p.src.Addr() == local.Addr())
	what := kindName(m.kind)
	if m.kind == smLB {
		what = "lb"
	}
	if twice {
		tn, exact, ok := n.allocTwice(v, m, local, localFib, p.proto)
		if !ok {
			leak("twice-NAT out of ports")
			c.drop(nodeOut2In, "out of ports: twice-NAT pool empty")
			return
		}
		s.flags |= sfTwice
		if exact {
			s.flags |= sfExact
		}
		s.extNat = tn
		s.o2i.ops |= rwSAddr
		s.o2i.saddr = tn.Addr()
		if p.proto == protoICMP {
			s.o2i.icmpID = tn.Port()
		} else {
			s.o2i.ops, s.o2i.sport = s.o2i.ops|rwSPort, tn.Port()
		}
		s.i2o = flow{match: flowKey{local, tn, p.proto, localFib}}
		s.i2o.setDst(s.ext)
		s.i2o.setSrc(p.dst)
		if p.proto == protoICMP {
			s.i2o.ops, s.i2o.icmpID = rwSAddr|rwDAddr|rwICMPID, p.dst.Port()
		}
	} else {
		remote := p.src
		if p.proto == protoICMP {
			remote = netip.AddrPortFrom(p.src.Addr(), local.Port())
		}
		s.i2o = flow{match: flowKey{local, remote, p.proto, localFib}}
		s.i2o.setSrc(p.dst)
		if p.proto == protoICMP {
			s.i2o.ops, s.i2o.icmpID = rwSAddr|rwICMPID, p.dst.Port()
		}
	}
	if old := n.flows[s.i2o.match]; old != nil {
		v.violate("session key overwritten",
			fmt.Sprintf("new session %s takes over the inside key %s of session %s (VPP's bihash add overwrites)", s.describe(), s.i2o.match, old.describe()))
	}
	s.hasI2O, s.hasO2I = true, true
	n.addSession(v, s)
	before := c.pkt
	s.o2i.apply(&c.pkt)
	n.forwardFib(c, s, dirO2I)
	n.touch(v, s, &c.pkt, dirO2I)
	desc := fmt.Sprintf("%s %s → %s", what, before.dst, c.pkt.dst)
	if twice {
		desc += fmt.Sprintf(", src %s → %s (twice-nat)", before.src, c.pkt.src)
	}
	c.step("%s: %s (session created)", nodeOut2In, desc)
}

// allocTwice picks the twice-NAT source: the mapping's PoolIPAddress if it is
// in the twice-NAT pool, otherwise a walk from (local address mod N) for an
// entry of the local's VRF, falling back to pool[(offset-1) mod N] when a
// VRF-independent entry exists (VPP uses the loop variable, not the entry it
// found). The port is random and tried once: VPP's i2o add overwrites, so
// its ten attempts never retry.
func (n *natState) allocTwice(v *VPP, m *mapping, local netip.AddrPort, localFib uint32, proto uint8) (netip.AddrPort, bool, bool) {
	var a *natAddr
	exact := false
	if m.poolAddr.IsValid() {
		if i := indexAddr(n.twiceAddrs, m.poolAddr); i >= 0 {
			a, exact = &n.twiceAddrs[i], true
		}
	}
	if a == nil {
		num := len(n.twiceAddrs)
		if num == 0 {
			return netip.AddrPort{}, false, false
		}
		off := int(le32(local.Addr()) % uint32(num))
		anyFound := false
		var last *natAddr
		for j := 0; j < num && a == nil; j++ {
			x := &n.twiceAddrs[(off+j)%num]
			last = x
			switch x.vrf {
			case localFib:
				a = x
			case anyVRF:
				anyFound = true
			}
		}
		if a == nil {
			if !anyFound {
				return netip.AddrPort{}, false, false
			}
			a = last
			if a.vrf != anyVRF {
				v.violate("twice-NAT address fallback slip",
					fmt.Sprintf("for local %s VPP uses twice-NAT address %s (VRF %d), the entry before the offset, not a VRF-independent one", local, a.addr, a.vrf))
			}
		}
	}
	tn := netip.AddrPortFrom(a.addr, v.randomPort())
	return tn, exact, true
}

// bypass is create_bypass_for_fwd: with forwarding on, an out2in packet
// without mapping passes untranslated and a session keyed on its reply
// direction lets the reply pass too.
func (n *natState) bypass(c *pktCtx, rxFib uint32) {
	v, p := c.v, c.pkt
	k := flowKey{p.dst, p.src, p.proto, rxFib}
	if s := n.flows[k]; s != nil {
		n.touch(v, s, &c.pkt, dirO2I)
		c.step("%s: forwarding-bypass session, not translated", nodeOut2In)
		return
	}
	if uint32(n.sessions.len()) >= n.limitFor(rxFib) {
		c.step("%s: forwarding, not translated (session table full, no bypass session)", nodeOut2In)
		return
	}
	s := &session{proto: p.proto, in: p.dst, out: p.dst, inFib: rxFib, outFib: rxFib, ext: p.src, flags: sfBypass,
		i2o: flow{match: k}, hasI2O: true}
	n.addSession(v, s)
	n.touch(v, s, &c.pkt, dirO2I)
	c.step("%s: forwarding, not translated (bypass session created)", nodeOut2In)
}
