package cnat

import (
	"fmt"
	"net/netip"
	"time"
)

// VIP is ip4-cnat-tx / ip6-cnat-tx (cnat_vip_node_fn, README.md#the-vip-path): what happens to
// a packet whose FIB lookup hit a cnat entry, i.e. Routes(f.Dst.Addr()) is
// true. The core calls it at FIB-lookup time, after every ingress feature
// (input ACL, NAT44-ED, cnat-snat) and before every egress feature
// (README.md#where-cnat-acts), with the packet as it is at that point.
//
//  1. A packet cnat does not key (see sessionKeyOf) is not translated.
//  2. A session entry (forward or return) for its 5-tuple rewrites it and
//     refreshes the shared timestamp.
//  3. Otherwise the translation for (dst, dport, proto) picks an active path
//     (lb.go), source-NATs when the path's SrcEp address is not zero
//     (allocating a port with ALLOC_PORT and no fixed SrcEp port), creates
//     the forward entry and, unless NO_RETURN_SESSION, the return entry, and
//     learns the new source as a client.
//  4. Without a translation or without an active path the packet is not
//     translated.
//
// "Not translated" is Pass on an interposed (real IP or learned) address and
// Drop on an exclusive VIP, whose FIB entry is a drop underneath.
func (p *Plugin) VIP(f Flow, now time.Time) Result {
	p.mu.Lock()
	defer p.mu.Unlock()
	f = f.normalized()
	r := Result{Verdict: Pass, Flow: f, TranslationID: invalidIndex}
	c := p.clients[f.Dst.Addr()]
	if c == nil {
		r.step("cnat-vip: %s is not a cnat address, not translated", f.Dst.Addr())
		return r
	}
	key, ok := sessionKeyOf(f)
	if !ok {
		return followFIB(c, r, fmt.Sprintf("%s is not handled by cnat", describeProto(f)))
	}
	if s := p.sessions[key]; s != nil {
		if p.released(s) {
			r.Matched = true
			r.Verdict = Drop
			r.DropReason = "null-node: blackholed packets (the session's route to its backend was released by a translation update)"
			r.step("cnat-vip: found session, but the route to %s it stored (cs_lbi) is gone: its last tracker was released by a translation update or delete and no route holds it: blackholed", s.newDst.Addr())
			return r
		}
		return hitResult(s, f, now, r, "cnat-vip")
	}
	if !f.hasPorts() {
		// VPP reads the destination port at the ICMP checksum's offset, so
		// ICMP never matches a translation in practice (README.md#snat-policies).
		return followFIB(c, r, fmt.Sprintf("%s does not match translations", describeProto(f)))
	}
	id, ok := p.byKey[trKey{addr: c.addr, port: f.Dst.Port(), proto: f.Proto}]
	if !ok {
		return followFIB(c, r, fmt.Sprintf("no translation for port %d/%s", f.Dst.Port(), protoName(f.Proto)))
	}
	t := p.translations[id]
	r.Matched = true
	r.TranslationID = t.id
	pi, ok := t.choose(f)
	if !ok {
		return followFIB(c, r, fmt.Sprintf("translation %d has no active path", t.id))
	}
	for _, ai := range t.active {
		r.Candidates = append(r.Candidates, netip.AddrPortFrom(t.paths[ai].dst.addr, t.paths[ai].dst.port))
	}
	pa := t.paths[pi]
	newDst := netip.AddrPortFrom(pa.dst.addr, pa.dst.port)
	newSrcAddr, snat := f.Src.Addr(), false
	if !pa.src.addr.IsUnspecified() {
		newSrcAddr, snat = pa.src.addr, true
	}
	var flags uint8
	sport := pa.src.port
	if sport == 0 {
		sport = f.Src.Port()
		if t.flags&flagAllocPort != 0 && snat {
			port, ok := p.ports.alloc(f.Proto)
			if !ok {
				r.Verdict = Drop
				r.DropReason = "cnat: no more free ports"
				r.step("cnat-vip: %s → %s: no more free %s source ports, drop", f.Dst, newDst, protoName(f.Proto))
				return r
			}
			sport, flags = port, sessAllocPort
		}
	}
	fwd := &session{
		key:    key,
		newSrc: netip.AddrPortFrom(newSrcAddr, sport),
		newDst: newDst,
		flags:  flags,
		viaLB:  true,
		tr:     t,
		route:  pa.route,
	}
	c.sessRef++ // the forward entry holds the VIP's FIB entry
	var rflags uint8
	if snat {
		rflags = sessHasSNAT
	}
	withReturn := t.flags&flagNoReturnSession == 0
	created := p.createSessions(fwd, now, withReturn, rflags)

	r.Verdict = Forward
	r.NewSession = true
	r.SNAT = snat
	r.Flow = fwd.rewrite(f)
	fwd.updateLifetime(f)
	r.step("cnat-vip: %s → %s (new session)", f.Dst, newDst)
	if snat {
		r.step("cnat-vip: source %s → %s (snat)", f.Src, fwd.newSrc)
	}
	switch {
	case !withReturn:
		r.step("cnat-vip: no return session (NO_RETURN_SESSION): replies are not translated")
	case !created:
		r.step("cnat-vip: return entry %s → %s already exists and is kept", fwd.newDst, fwd.newSrc)
	}
	return r
}

// hitResult translates a packet that matched entry s. A forward entry made by
// the VIP path goes to its backend's route; a return entry of a source-NATed
// flow needs a new FIB lookup (its destination changed); any other entry
// follows the route of the (unchanged) destination.
func hitResult(s *session, f Flow, now time.Time, r Result, node string) Result {
	out := s.hit(f, now)
	r.Matched = true
	r.Verdict = Forward
	r.Flow = out
	r.SNAT = out.Src.Addr() != f.Src.Addr()
	r.Relookup = !s.viaLB && s.flags&sessHasSNAT != 0
	kind := "forward"
	if s.isReturn() {
		kind = "return"
	}
	r.step("%s: %s session: %s ⇒ %s → %s", node, kind, f, out.Src, out.Dst)
	return r
}

// followFIB is "don't translate and follow the FIB programming" (cc_parent):
// drop on an exclusive VIP, pass on an interposed address.
func followFIB(c *client, r Result, why string) Result {
	if c.exclusive {
		r.Verdict = Drop
		r.DropReason = fmt.Sprintf("cnat: exclusive VIP %s, %s", c.addr, why)
		r.step("cnat-vip: %s; exclusive VIP %s: drop", why, c.addr)
		return r
	}
	r.Verdict = Pass
	r.step("cnat-vip: %s; %s is not exclusive: not translated, follow the FIB", why, c.addr)
	return r
}

func describeProto(f Flow) string {
	if f.isICMP() {
		return fmt.Sprintf("%s type %d", protoName(f.Proto), f.ICMPType)
	}
	if f.Proto == protoSCTP && f.is6() {
		return "SCTP over IPv6"
	}
	return protoName(f.Proto)
}
