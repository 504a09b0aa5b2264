package fakevpp

import (
	"fmt"
	"net/netip"
)

// Protocols without ports (GRE, ESP …) through NAT44-ED: address-only
// translation (nat44_ed_in2out_slowpath_unknown_proto and
// nat44_ed_out2in_slowpath_unknown_proto of VPP 25.10). Their sessions are
// keyed with ports 0, so later packets take the ordinary session path; only
// session creation differs:
//
//   - a static mapping is looked up with port 0 and the packet's own
//     protocol, which an address-only mapping (stored with protocol 0)
//     never matches: a pod behind one is source-NATed to a pool address,
//     and from outside its external address is not reachable by GRE;
//   - in2out takes the outside address of the first session (any protocol)
//     towards the same remote host, otherwise the last pool address. VPP
//     checks each candidate for a free key, but looks for (address →
//     remote), the reverse of the outside key (remote → address), so the
//     check never fails; a second inside host talking GRE to the same
//     remote gets the same address and takes the outside key over (the
//     bihash add overwrites): the remote's GRE then reaches the second
//     host only. Seen on a real VPP 25.10;
//   - out2in builds the session's inside key from a flow it has not
//     initialised (nat44_ed_out2in_slowpath_unknown_proto initialises the
//     o2i flow twice and never the i2o one): the inside host's reply
//     matches no session and makes a second, in2out session through the
//     mapping, which takes the outside key over;
//   - the session's proto is never set: the dump shows protocol 0 and the
//     IP protocol, in host byte order, as both ports;
//   - nat44_ed_not_translate is not consulted, so a packet to a host that
//     is not behind an outside interface is translated too.

// in2outOtherProto creates the session of a first packet without ports.
func (n *natState) in2outOtherProto(c *pktCtx, node string) {
	v, p := c.v, c.pkt
	rxFib := fibOf(c.rx)
	if uint32(n.sessions.len()) >= n.sessionLimit {
		c.drop(node, "maximum sessions exceeded")
		return
	}
	txFib := n.txFib(v, p.dst.Addr())
	// VPP's "is this address free" lookup, with the key reversed.
	free := func(a netip.Addr) bool {
		return n.flows[flowKey{netip.AddrPortFrom(a, 0), netip.AddrPortFrom(p.dst.Addr(), 0), p.proto, txFib}] == nil
	}
	var out netip.Addr
	m := n.byLocal[localKey{addr: p.src.Addr(), port: 0, proto: p.proto, fib: rxFib}]
	what := "static mapping source"
	if m != nil {
		out = m.ext
	} else {
		what = "dynamic SNAT"
		n.sessions.each(func(_ uint32, s *session) bool {
			if s.ext.Addr() != p.dst.Addr() {
				return true
			}
			if free(s.out.Addr()) {
				out = s.out.Addr()
			}
			return false
		})
		if !out.IsValid() {
			for _, a := range n.addrs {
				if free(a.addr) {
					out = a.addr
				}
			}
		}
	}
	if !out.IsValid() {
		c.drop(node, fmt.Sprintf("%s: no outside address for %s", protoName(p.proto), p.dst.Addr()))
		return
	}
	dst := p.dst.Addr()
	n.lruFreeOne(v) // nat_ed_session_alloc reclaims first (nat44_lru.go)
	s := &session{proto: p.proto, in: p.src, inFib: rxFib, outFib: txFib, ext: p.dst, out: netip.AddrPortFrom(out, 0)}
	if hm := n.matchExternal(dst, 0, p.proto); hm != nil && hm.kind != smLB {
		dst = hm.local
		s.flags |= sfHairpin
	}
	if m != nil {
		s.flags |= sfStatic
	}
	s.i2o = flow{match: flowKey{p.src, p.dst, p.proto, rxFib}, ops: rwSAddr | rwDAddr, saddr: out, daddr: dst}
	s.o2i = flow{match: flowKey{netip.AddrPortFrom(dst, 0), netip.AddrPortFrom(out, 0), p.proto, txFib}, ops: rwSAddr | rwDAddr, saddr: p.dst.Addr(), daddr: p.src.Addr()}
	s.hasI2O, s.hasO2I = true, true
	n.overwriteWarning(v, s, s.o2i.match)
	n.addSession(v, s)
	before := c.pkt
	s.i2o.apply(&c.pkt)
	n.touch(v, s, &c.pkt, dirI2O)
	c.step("%s: %s, address only: %s (session created)", node, what, rewriteDesc(before, c.pkt))
}

// out2inOtherProto creates the session of a first packet without ports
// from outside: only a mapping stored with port 0 and this protocol
// matches.
func (n *natState) out2inOtherProto(c *pktCtx) {
	v, p := c.v, c.pkt
	rxFib := fibOf(c.rx)
	if uint32(n.sessions.len()) >= n.sessionLimit {
		c.drop(nodeOut2In, "maximum sessions exceeded")
		return
	}
	m := n.byExt[extKey{addr: p.dst.Addr(), port: 0, proto: p.proto}]
	if m == nil || m.kind == smLB {
		if n.forwarding {
			c.step("%s: %s without mapping, forwarding, not translated", nodeOut2In, protoName(p.proto))
			return
		}
		c.drop(nodeOut2In, fmt.Sprintf("no translation (%s: address-only mappings do not match protocols without ports)", protoName(p.proto)))
		return
	}
	n.lruFreeOne(v) // nat_ed_session_alloc reclaims first (nat44_lru.go)
	s := &session{proto: p.proto, in: netip.AddrPortFrom(m.local, 0), inFib: m.vrf, out: p.dst, outFib: rxFib, ext: p.src, flags: sfStatic}
	// The inside key is the zero key of an uninitialised flow, shared by
	// every such session and matched by no packet.
	s.i2o = flow{ops: rwSAddr, saddr: p.dst.Addr()}
	s.o2i = flow{match: flowKey{p.src, p.dst, p.proto, rxFib}, ops: rwDAddr, daddr: m.local}
	s.hasI2O, s.hasO2I = true, true
	n.overwriteWarning(v, s, s.o2i.match)
	n.addSession(v, s)
	before := c.pkt
	s.o2i.apply(&c.pkt)
	n.touch(v, s, &c.pkt, dirO2I)
	c.step("%s: %s mapping, address only: %s (session created)", nodeOut2In, protoName(p.proto), rewriteDesc(before, c.pkt))
}

// overwriteWarning records that a new session's key replaces another
// session's (VPP's bihash add overwrites).
func (n *natState) overwriteWarning(v *VPP, s *session, k flowKey) {
	if old := n.flows[k]; old != nil {
		v.violate("session key overwritten",
			fmt.Sprintf("new session %s takes over the outside key %s of session %s (VPP's bihash add overwrites)", s.describe(), k, old.describe()))
	}
}
