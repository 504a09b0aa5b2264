package fakevpp

import (
	"fmt"
	"net/netip"
)

// nat44-ed-in2out and nat44-ed-in2out-output (docs/fakevpp.md#in2out,
// #dynamic-snat), read against nat44_ed_in2out.c of VPP 25.10.

// in2out is nat44-ed-in2out (output=false, ingress on an inside interface)
// and nat44-ed-in2out-output (output=true, egress on an output-feature
// interface).
func (n *natState) in2out(c *pktCtx, output bool) {
	v := c.v
	node := nodeIn2Out
	if output {
		node = nodeOutput
	}
	if !output && natTTL(c, node) || natBadICMPType(c, node) {
		return
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
		if out := v.resolvingInterface(f, p.dst.Addr()); out != nil {
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
	if uint32(n.sessions.len()) >= n.limitFor(rxFib) && !n.lruFreeOne(v) {
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
	n.lruFreeOne(v) // nat_ed_session_alloc reclaims first (nat44_lru.go)
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
		if n.flows[o2iKey(p.proto, dst, out, txFib)] == nil && n.byExt[extKey{addr: a.addr, port: port, proto: p.proto}] == nil {
			return out, true
		}
		port = v.randomPort()
	}
	return netip.AddrPort{}, false
}
