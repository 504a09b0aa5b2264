package fakevpp

import (
	"fmt"
	"net/netip"
)

// ICMP error messages through NAT44-ED (nat44_ed_in2out.c,
// nat44_ed_out2in.c, nat44_ed.c of VPP 25.10). An error belongs to the
// session of the packet it quotes: nat_get_icmp_session_lookup_values keys
// the lookup on the quoted header reversed (its destination as source), and
// nat_6t_flow_buf_translate rewrites the outer header and the quoted one
// with the session's flow. An error without a session is never translated
// and, unless nat44_ed_not_translate lets it pass, is dropped.

// errLookupKey is the flow key of the session an ICMP error belongs to: the
// quoted header reversed, the echo identifier in both ports for a quoted
// echo. False when the quoted protocol is not TCP, UDP or ICMP (VPP:
// "unsupported protocol").
func errLookupKey(p pkt, fib uint32) (flowKey, bool) {
	in := p.inner
	switch in.proto {
	case protoTCP, protoUDP, protoICMP:
		return flowKey{src: in.dst, dst: in.src, proto: in.proto, fib: fib}, true
	}
	return flowKey{}, false
}

// rewriteOf is a flow's rewrite with VPP's defaults: an address or port the
// flow does not rewrite keeps its match value (nat_6t_l3_l4_csum_calc).
func (f *flow) rewriteOf() (saddr, daddr netip.Addr, sport, dport uint16) {
	saddr, daddr = f.match.src.Addr(), f.match.dst.Addr()
	sport, dport = f.match.src.Port(), f.match.dst.Port()
	if f.ops&rwSAddr != 0 {
		saddr = f.saddr
	}
	if f.ops&rwDAddr != 0 {
		daddr = f.daddr
	}
	if f.ops&rwSPort != 0 {
		sport = f.sport
	}
	if f.ops&rwDPort != 0 {
		dport = f.dport
	}
	return
}

// translateError is nat_6t_flow_buf_translate for an ICMP error: the outer
// destination becomes the flow's destination, the outer source the flow's
// source (kept on the out2in path when the error comes from a router, not
// from the session's remote end); the quoted header is rewritten with the
// flow reversed (its source gets the flow's destination and port).
func (n *natState) translateError(c *pktCtx, node string, s *session, f *flow, i2o bool) {
	if c.pkt.inner.proto == protoTCP && !c.pkt.errFull {
		// nat_6t_flow_icmp_translate wants the whole quoted TCP header
		// (it_fits with sizeof (tcp_header_t), 20 bytes), more than the
		// 8 bytes of the RFC 792 minimum. The in2out fast path deletes
		// the session on a failed translation; out2in only drops.
		if i2o {
			c.step("%s: session %s deleted", node, s.describe())
			n.deleteSession(c.v, s)
		}
		c.drop(node, "translation failed: the ICMP error quotes less than a TCP header")
		return
	}
	before := c.pkt
	saddr, daddr, sport, dport := f.rewriteOf()
	p := &c.pkt
	if i2o || p.src.Addr() == saddr {
		p.src = netip.AddrPortFrom(saddr, 0)
	}
	p.dst = netip.AddrPortFrom(daddr, 0)
	in := &p.inner
	switch in.proto {
	case protoTCP, protoUDP:
		in.src, in.dst = netip.AddrPortFrom(daddr, dport), netip.AddrPortFrom(saddr, sport)
	case protoICMP:
		id := in.src.Port()
		if f.ops&rwICMPID != 0 {
			id = f.icmpID
		}
		in.src, in.dst = netip.AddrPortFrom(daddr, id), netip.AddrPortFrom(saddr, id)
	}
	dir := dirO2I
	if i2o {
		dir = dirI2O
	}
	n.touch(c.v, s, p, dir)
	c.step("%s: ICMP error of session %s: outer %s → %s, quoted %s → %s", node, s.describe(),
		before.src.Addr(), p.src.Addr(), before.inner, p.inner)
}

// sessionOfError finds the live session of an ICMP error; an expired one is
// deleted on the way, as the fast paths do.
func (n *natState) sessionOfError(c *pktCtx, node string, key flowKey) *session {
	s := n.flows[key]
	if s != nil && (s.vrfExpired || n.expired(c.v, s)) {
		c.step("%s: session %s expired, deleted", node, s.describe())
		n.deleteSession(c.v, s)
		return nil
	}
	return s
}

// in2outError is an ICMP error on nat44-ed-in2out (or -output).
func (n *natState) in2outError(c *pktCtx, node string, output bool) {
	key, ok := errLookupKey(c.pkt, fibOf(c.rx))
	if !ok {
		c.drop(node, fmt.Sprintf("ICMP error quoting %s: unsupported protocol", protoName(c.pkt.inner.proto)))
		return
	}
	if s := n.sessionOfError(c, node, key); s != nil {
		switch {
		case s.hasI2O && s.i2o.match == key:
			n.translateError(c, node, s, &s.i2o, true)
		case s.flags&sfHairpin != 0 && s.hasO2I && s.o2i.match == key:
			n.translateError(c, node, s, &s.o2i, true)
		default:
			c.drop(node, "ICMP error matches the outside side of a session")
		}
		return
	}
	why := ""
	if output {
		why = n.notTranslateOutput(c)
	} else {
		why = n.notTranslate(c)
	}
	if why != "" {
		c.step("%s: ICMP error without session, not translated (%s)", node, why)
		return
	}
	c.drop(node, "ICMP error without session (bad ICMP type)")
}

// out2inError is an ICMP error on nat44-ed-out2in.
func (n *natState) out2inError(c *pktCtx) {
	key, ok := errLookupKey(c.pkt, fibOf(c.rx))
	if !ok {
		c.drop(nodeOut2In, fmt.Sprintf("ICMP error quoting %s: unsupported protocol", protoName(c.pkt.inner.proto)))
		return
	}
	if s := n.sessionOfError(c, nodeOut2In, key); s != nil {
		switch {
		case s.hasO2I && s.o2i.match == key:
			n.translateError(c, nodeOut2In, s, &s.o2i, false)
		case s.flags&sfTwice != 0 && s.hasI2O && s.i2o.match == key:
			n.translateError(c, nodeOut2In, s, &s.i2o, false)
		case !n.forwarding:
			c.drop(nodeOut2In, "no translation: ICMP error matches the inside side of a session")
		case s.hasI2O && s.i2o.match == key:
			// With forwarding the fast path translates what matches the
			// inside flow with it, as for other packets: an error from a
			// backend behind an outside interface about a packet of a
			// session made on an outside interface. The quoted header is
			// rewritten; the outer source is kept, not being the flow's
			// rewritten source.
			n.translateError(c, nodeOut2In, s, &s.i2o, false)
		default:
			n.deleteSession(c.v, s)
			c.drop(nodeOut2In, "ICMP error matches no flow of its session: session deleted (translation failed)")
		}
		return
	}
	p := c.pkt
	if m := n.matchExternal(p.dst.Addr(), key.src.Port(), protoICMP); m != nil {
		c.drop(nodeOut2In, "ICMP error without session to a static mapping (bad ICMP type)")
		return
	}
	if !n.forwarding && c.rx.hasAddr(p.dst.Addr()) {
		c.step("%s: ICMP error to %s's own address, not translated", nodeOut2In, c.rx.name)
		return
	}
	if n.forwarding {
		c.step("%s: ICMP error without session, forwarding, not translated", nodeOut2In)
		return
	}
	c.drop(nodeOut2In, "no translation")
}

// natBadICMPType is the check nat44-ed-in2out (and -in2out-output) and
// nat44-ed-out2in make of an ICMP packet before any session lookup (the
// fast paths of nat44_ed_in2out.c and nat44_ed_out2in.c): an echo request
// or reply, of any code, or an error type of icmp_type_is_error_message
// goes on; any other type is dropped (BAD_ICMP_TYPE), whatever sessions
// or mappings there are. It reports whether it dropped the packet.
func natBadICMPType(c *pktCtx, node string) bool {
	p := c.pkt
	if p.proto != protoICMP || isEchoType(p.proto, p.icmpType) || ICMPErrorType(p.proto, p.icmpType) {
		return false
	}
	c.drop(node, fmt.Sprintf("bad ICMP type %d", p.icmpType))
	return true
}
