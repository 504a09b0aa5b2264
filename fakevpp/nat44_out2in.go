package fakevpp

import (
	"fmt"
	"net/netip"
)

// nat44-ed-out2in (docs/fakevpp.md#out2in-and-mapping-lookup,
// #lb-backend-choice, #twice-nat, #forwarding), read against
// nat44_ed_out2in.c of VPP 25.10.

// out2in is nat44-ed-out2in: sessions first, then mappings by external key,
// forwarding bypass, and drops.
func (n *natState) out2in(c *pktCtx) {
	if natTTL(c, nodeOut2In) || natBadICMPType(c, nodeOut2In) {
		return
	}
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
	if p.proto == protoICMP && !p.echoReply() && !m.addrOnly() {
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
	n.lruFreeOne(v) // nat_ed_session_alloc reclaims first (nat44_lru.go)
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
	n.lruFreeOne(v) // nat_ed_session_alloc reclaims first (nat44_lru.go)
	s := &session{proto: p.proto, in: p.dst, out: p.dst, inFib: rxFib, outFib: rxFib, ext: p.src, flags: sfBypass,
		i2o: flow{match: k}, hasI2O: true}
	n.addSession(v, s)
	n.touch(v, s, &c.pkt, dirO2I)
	c.step("%s: forwarding, not translated (bypass session created)", nodeOut2In)
}
