package cnat

import (
	"fmt"
	"net/netip"
	"sort"
	"time"

	"go.fd.io/govpp/binapi/cnat"
)

// Session lifetimes (cnat_types.h, README.md#session-lifetimes).
const (
	sessionMaxAge = 30 * time.Second   // CNAT_DEFAULT_SESSION_MAX_AGE
	tcpMaxAge     = 3600 * time.Second // CNAT_DEFAULT_TCP_MAX_AGE, after SYN+ACK
	tcpRstTimeout = 5 * time.Second    // CNAT_DEFAULT_TCP_RST_TIMEOUT, after FIN or RST
)

// Session locations (cnat_session_location_t). The VIP path and cnat-snat
// both use the FIB location; input/output belong to the feature-arc variants.
const locFIB = 0xff

// Session flags (cnat_session_flag_t).
const (
	sessHasSNAT   = 1 << 0
	sessAllocPort = 1 << 1
	sessNoClient  = 1 << 2
	sessIsReturn  = 1 << 4
)

// sessionKey is the cnat_session_t key: the packet's 5-tuple as cnat reads it
// (see sessionKeyOf) plus the location. src is VPP's RX side, dst its TX side.
type sessionKey struct {
	src, dst netip.AddrPort
	proto    uint8
	loc      uint8
}

// timestamp is shared by a forward entry and its return entry, so traffic in
// either direction keeps both alive and both expire together (README.md#session-lifetimes).
type timestamp struct {
	lastSeen time.Time
	lifetime time.Duration
}

func (ts *timestamp) expired(now time.Time) bool {
	return now.After(ts.lastSeen.Add(ts.lifetime))
}

// session is one entry of cnat's session table: a forward or a return entry.
type session struct {
	key            sessionKey
	newSrc, newDst netip.AddrPort // the value: what the packet is rewritten to
	flags          uint8
	// viaLB: the entry was made by the VIP path for a new flow and forwards
	// to the chosen backend's route (cs_lbi); return entries have none.
	// tr is the translation it came from, route the backend entry whose
	// load balance it stored (Plugin.released).
	viaLB bool
	tr    *translation
	route *backendRoute
	ts    *timestamp
	seq   uint64
}

func (s *session) isReturn() bool { return s.flags&sessIsReturn != 0 }

// sessionKeyOf is cnat_session_make_key. It returns false when cnat does not
// handle the packet ("wrong session key"): protocols other than TCP, UDP,
// SCTP (IPv4 only) and ICMP echo/error, and ICMP errors whose embedded packet
// is an ICMP message other than echo. For an ICMP error the key is the
// embedded packet reversed, so it matches the session of the flow the error
// is about.
func sessionKeyOf(f Flow) (sessionKey, bool) {
	k := sessionKey{proto: f.Proto, loc: locFIB}
	switch {
	case f.isError():
		in := f.Inner
		if in == nil {
			return k, false
		}
		k.proto = in.Proto
		if (in.Proto == protoICMP && !in.is6()) || (in.Proto == protoICMP6 && in.is6()) {
			if !in.isEcho() {
				return k, false
			}
			id := in.Src.Port()
			k.src = netip.AddrPortFrom(in.Dst.Addr(), id)
			k.dst = netip.AddrPortFrom(in.Src.Addr(), id)
			return k, true
		}
		k.src, k.dst = in.Dst, in.Src
		return k, true
	case f.isEcho():
		id := f.Src.Port()
		k.src = netip.AddrPortFrom(f.Src.Addr(), id)
		k.dst = netip.AddrPortFrom(f.Dst.Addr(), id)
		return k, true
	case f.hasPorts():
		k.src, k.dst = f.Src, f.Dst
		return k, true
	}
	return k, false
}

// rewrite applies the entry to a packet (cnat_translation_ip4/ip6).
//
//   - TCP, UDP, SCTP: source and destination address and port become the
//     entry's value; a destination port of 0 is written as 0 (README.md#the-vip-path).
//   - ICMP echo: both addresses, and the identifier becomes the new source
//     "port".
//   - ICMP error: the outer destination is rewritten, the outer source only
//     when it is the embedded packet's destination (the error comes from the
//     far end itself), and the embedded packet is rewritten the other way
//     round. Embedded protocols other than TCP, UDP and ICMP echo are left
//     as they are.
func (s *session) rewrite(f Flow) Flow {
	out := f.clone()
	ip6 := f.is6()
	ns := as46(s.newSrc.Addr(), ip6)
	nd := as46(s.newDst.Addr(), ip6)
	switch {
	case f.isError():
		if f.Src.Addr() == s.key.src.Addr() {
			out.Src = netip.AddrPortFrom(ns, f.Src.Port())
		}
		out.Dst = netip.AddrPortFrom(nd, f.Dst.Port())
		in := out.Inner
		switch {
		case in.Proto == protoTCP || in.Proto == protoUDP:
			in.Src = netip.AddrPortFrom(nd, s.newDst.Port())
			in.Dst = netip.AddrPortFrom(ns, s.newSrc.Port())
		case in.isEcho():
			id := s.newDst.Port()
			in.Src = netip.AddrPortFrom(nd, id)
			in.Dst = netip.AddrPortFrom(ns, id)
		}
	case f.isEcho():
		id := s.newSrc.Port()
		out.Src = netip.AddrPortFrom(ns, id)
		out.Dst = netip.AddrPortFrom(nd, id)
	default:
		out.Src = netip.AddrPortFrom(ns, s.newSrc.Port())
		out.Dst = netip.AddrPortFrom(nd, s.newDst.Port())
	}
	return out
}

// updateLifetime is cnat_tcp_update_session_lifetime, run on every translated
// TCP packet in either direction: FIN or RST → 5 s, SYN+ACK → 3600 s (checked
// last, so it wins on a packet that has both).
func (s *session) updateLifetime(f Flow) {
	if f.Proto != protoTCP {
		return
	}
	if f.TCPFlags&(TCPFin|TCPRst) != 0 {
		s.ts.lifetime = tcpRstTimeout
	}
	if f.TCPFlags&TCPSyn != 0 && f.TCPFlags&TCPAck != 0 {
		s.ts.lifetime = tcpMaxAge
	}
}

// hit handles a packet that matched entry s: refresh, rewrite, lifetime.
// Expiry is not checked here: only the scanner (Expire) deletes sessions.
func (s *session) hit(f Flow, now time.Time) Flow {
	s.ts.lastSeen = now
	out := s.rewrite(f)
	s.updateLifetime(f)
	return out
}

// insertSession stores an entry, replacing any entry with the same key.
func (p *Plugin) insertSession(s *session) {
	p.seq++
	s.seq = p.seq
	p.sessions[s.key] = s
}

// createSessions is cnat_session_create followed, unless withReturn is false
// (NO_RETURN_SESSION), by cnat_rsession_create. The forward entry gets a new
// timestamp (30 s). The return entry maps (newDst → newSrc) back to
// (original dst → original src), shares the timestamp and sits at the
// location where the replies meet cnat (returnLocation). When its key is
// already taken, VPP keeps the existing entry and learns no client; the
// forward entry stays. Otherwise, unless rflags has sessNoClient, the new
// source address is learned as a client so that replies to it reach cnat.
// It reports whether a return entry was created.
func (p *Plugin) createSessions(fwd *session, now time.Time, withReturn bool, rflags uint8) bool {
	fwd.ts = &timestamp{lastSeen: now, lifetime: sessionMaxAge}
	p.insertSession(fwd)
	if !withReturn {
		return false
	}
	r := &session{
		key:    sessionKey{src: fwd.newDst, dst: fwd.newSrc, proto: fwd.key.proto, loc: returnLocation(fwd.key.loc)},
		newSrc: fwd.key.dst,
		newDst: fwd.key.src,
		flags:  rflags | sessIsReturn,
		ts:     fwd.ts,
	}
	if p.sessions[r.key] != nil {
		return false
	}
	p.insertSession(r)
	if rflags&sessNoClient == 0 {
		p.clientLearn(fwd.newSrc.Addr())
	}
	return true
}

// returnLocation is where the replies of a flow keyed at loc are looked up:
// the FIB location's replies come back through the FIB, a feature node's
// through the other feature node (cnat-input's at OUTPUT, cnat-output's at
// INPUT), as the nodes pass them to cnat_rsession_create.
func returnLocation(loc uint8) uint8 {
	switch loc {
	case locInput:
		return locOutput
	case locOutput:
		return locInput
	}
	return loc
}

// freeSession is cnat_session_free: release the allocated port (as VPP
// does, see freeAsVPP) and the client reference, then drop the entry.
func (p *Plugin) freeSession(s *session) {
	delete(p.sessions, s.key)
	if s.flags&sessAllocPort != 0 {
		port := s.newSrc.Port()
		if cleared, taken := p.ports.freeAsVPP(s.key.proto, port); taken && cleared != port {
			if holder := p.allocPortHolder(s.key.proto, cleared); holder != nil {
				p.violate("cnat frees another flow's source port",
					fmt.Sprintf("the session %s → %s expired and freed port %d (its own %d byte-swapped), still used by %s → %s: the next flow may get it too",
						s.key.src, s.key.dst, cleared, port, holder.key.src, holder.key.dst))
			}
		}
	}
	if s.flags&sessNoClient == 0 {
		p.clientSessionFreed(s.key.dst.Addr())
	}
}

// allocPortHolder is the live session that holds allocated port port of
// proto, or nil.
func (p *Plugin) allocPortHolder(proto uint8, port uint16) *session {
	for _, s := range p.sessions {
		if s.flags&sessAllocPort != 0 && s.key.proto == proto && s.newSrc.Port() == port {
			return s
		}
	}
	return nil
}

// sortedSessions returns the entries in creation order.
func (p *Plugin) sortedSessions() []*session {
	out := make([]*session, 0, len(p.sessions))
	for _, s := range p.sessions {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].seq < out[j].seq })
	return out
}

// Expire is one pass of the cnat scanner (cnat_session_scan, about every
// second in VPP): every entry whose last_seen + lifetime is before now is
// deleted. Forward and return entries share their timestamp, so they go
// together. A VIP whose translations were deleted loses its FIB entry when
// its last session goes.
func (p *Plugin) Expire(now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.sortedSessions() {
		if s.ts.expired(now) {
			p.freeSession(s)
		}
	}
}

// SessionPurge handles CnatSessionPurge: every session, then every
// translation (in ID order, so the next IDs come out highest first), is
// deleted. Always 0.
func (p *Plugin) SessionPurge(*cnat.CnatSessionPurge) *cnat.CnatSessionPurgeReply {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.sortedSessions() {
		p.freeSession(s)
	}
	for id, t := range p.translations {
		if t != nil {
			p.deleteTranslation(uint32(id))
		}
	}
	return &cnat.CnatSessionPurgeReply{Retval: rvOK}
}
