package fakevpp

import (
	"fmt"
	"net/netip"
	"time"

	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/ip_types"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/binapi/nat_types"
)

// flowKey is VPP's 6-tuple flow-hash key. For ICMP echo both ports hold the
// identifier; for protocols other than TCP, UDP and ICMP they are 0.
type flowKey struct {
	src, dst netip.AddrPort
	proto    uint8
	fib      uint32
}

func (k flowKey) String() string {
	return fmt.Sprintf("%s %s → %s fib %d", protoName(k.proto), k.src, k.dst, k.fib)
}

// rewrite operations of a flow (VPP's nat_6t_flow ops).
type rewriteOps uint8

const (
	rwSAddr rewriteOps = 1 << iota
	rwSPort
	rwDAddr
	rwDPort
	rwICMPID
)

// flow is one direction of a session: the key it matches and the rewrite.
// (VPP's flow also names the FIB to forward in; the fake has one table.)
type flow struct {
	match        flowKey
	ops          rewriteOps
	saddr, daddr netip.Addr
	sport, dport uint16
	icmpID       uint16
}

func (f *flow) setSrc(a netip.AddrPort) {
	f.ops |= rwSAddr | rwSPort
	f.saddr, f.sport = a.Addr(), a.Port()
}

func (f *flow) setDst(a netip.AddrPort) {
	f.ops |= rwDAddr | rwDPort
	f.daddr, f.dport = a.Addr(), a.Port()
}

// apply rewrites p. An ICMP identifier rewrite sets both ports, which hold
// the identifier in the fake's packets.
func (f *flow) apply(p *pkt) {
	sa, sp, da, dp := p.src.Addr(), p.src.Port(), p.dst.Addr(), p.dst.Port()
	if f.ops&rwSAddr != 0 {
		sa = f.saddr
	}
	if f.ops&rwDAddr != 0 {
		da = f.daddr
	}
	if p.proto == protoICMP {
		if f.ops&rwICMPID != 0 {
			sp, dp = f.icmpID, f.icmpID
		}
	} else {
		if f.ops&rwSPort != 0 {
			sp = f.sport
		}
		if f.ops&rwDPort != 0 {
			dp = f.dport
		}
	}
	p.src, p.dst = netip.AddrPortFrom(sa, sp), netip.AddrPortFrom(da, dp)
}

// session flags.
type sessFlags uint16

const (
	sfStatic sessFlags = 1 << iota
	sfLB
	sfAffinity
	sfTwice
	sfBypass
	sfHairpin
	sfExact
)

// TCP states (nat44_ed_tcp_state_e).
const (
	tcpClosed uint8 = iota
	tcpEstablished
	tcpClosing
)

// TCP flags as in the header.
const (
	tcpFIN uint8 = 0x01
	tcpSYN uint8 = 0x02
	tcpRST uint8 = 0x04
	tcpPSH uint8 = 0x08
	tcpACK uint8 = 0x10
)

const (
	dirI2O = 0
	dirO2I = 1
)

// session is a NAT44-ED session. Each puts its i2o and o2i match keys into
// the flow table (a forwarding-bypass session only its i2o key).
type session struct {
	index          uint32
	proto          uint8
	in, out        netip.AddrPort // inside (local) and outside endpoint
	inFib, outFib  uint32
	ext, extNat    netip.AddrPort // remote as seen before / after twice-NAT
	flags          sessFlags
	i2o, o2i       flow
	hasI2O, hasO2I bool
	lastHeard      time.Duration
	tcpState       uint8
	tcpFlags       [2]uint8
	pkts           uint32
	bytes          uint64
	vrfExpired     bool
	lru            lruPlace
}

// packetBytes is the size accounted per traced packet (the fake has no
// payloads).
const packetBytes = 64

// addSession stores s and its keys. noOverwriteO2I reproduces VPP's is_add=2
// for the o2i key of in2out sessions: it fails instead of replacing.
func (n *natState) addSession(v *VPP, s *session) {
	s.lastHeard = v.now()
	s.index = n.sessions.add(s)
	n.lru.insert(s, v.now())
	if s.hasI2O {
		n.flows[s.i2o.match] = s
	}
	if s.hasO2I {
		n.flows[s.o2i.match] = s
	}
}

// deleteSession frees a session: its affinity reference, its keys (deleted
// whichever session they point to now, as a bihash delete does) and its slot.
func (n *natState) deleteSession(v *VPP, s *session) {
	if s.flags&sfAffinity != 0 {
		n.unlockAffinity(v, affKey{client: s.ext.Addr(), ext: s.out.Addr(), port: s.out.Port(), proto: s.proto})
	}
	if s.hasI2O {
		delete(n.flows, s.i2o.match)
	}
	if s.hasO2I {
		delete(n.flows, s.o2i.match)
	}
	n.sessions.del(s.index)
	n.lru.remove(s)
}

// timeout returns the session's idle timeout.
func (n *natState) timeout(s *session) time.Duration {
	sec := n.timeouts.udp
	switch s.proto {
	case protoICMP:
		sec = n.timeouts.icmp
	case protoTCP:
		sec = n.timeouts.tcpTransitory
		if s.tcpState == tcpEstablished {
			sec = n.timeouts.tcpEstablished
		}
	}
	return time.Duration(sec) * time.Second
}

// expired is the check of VPP's fast paths and session dumps. VPP 25.10
// adds last_heard and the timeout (f64 seconds) into a u64 there
// (nat44_ed_in2out.c and nat44_ed_out2in.c, the fast paths;
// nat44_ed_api.c, is_timed_out of the user session dumps; the CLI), so a
// session expires at the whole second at or before last_heard + timeout:
// up to a second early, by where VPP's clock stood when it was last heard.
func (n *natState) expired(v *VPP, s *session) bool {
	return v.now() >= (s.lastHeard + n.timeout(s)).Truncate(time.Second)
}

// lruExpired is nat_lru_free_one's check (nat44_ed_inlines.h), which keeps
// the sum in f64: a session is reclaimed no earlier than last_heard +
// timeout.
func (n *natState) lruExpired(v *VPP, s *session) bool {
	return v.now() >= s.lastHeard+n.timeout(s)
}

// touch accounts a translated packet.
func (n *natState) touch(v *VPP, s *session, p *pkt, dir int) {
	s.lastHeard = v.now()
	s.pkts++
	s.bytes += packetBytes
	if s.proto == protoTCP {
		n.tcpUpdate(v, s, p.tcpFlags, dir)
	}
	n.lru.refresh(s)
}

// tcpUpdate is nat44_set_tcp_session_state: ESTABLISHED once SYN and ACK were
// seen in both directions, CLOSING on FIN or RST, reopen on a new handshake.
func (n *natState) tcpUpdate(v *VPP, s *session, flags uint8, dir int) {
	old := s.tcpFlags[dir]
	s.tcpFlags[dir] |= flags & (tcpFIN | tcpSYN | tcpRST | tcpACK)
	if old == s.tcpFlags[dir] {
		return
	}
	both := s.tcpFlags[dirI2O] & s.tcpFlags[dirO2I]
	oldState := s.tcpState
	defer func() {
		if s.tcpState != oldState {
			n.lru.move(s, v.now())
		}
	}()
	switch s.tcpState {
	case tcpClosed:
		if both == tcpSYN|tcpACK {
			s.tcpState = tcpEstablished
		}
	case tcpEstablished:
		if s.tcpFlags[dir]&(tcpFIN|tcpRST) != 0 {
			s.tcpState = tcpClosing
			s.tcpFlags = [2]uint8{}
			s.lastHeard = v.now()
		}
	case tcpClosing:
		if both == tcpSYN|tcpACK {
			s.tcpState = tcpEstablished
			s.pkts, s.bytes = 0, 0
		}
	}
}

// natDelSession looks up one flow key, (Address:Port → ExtHost:Port, proto,
// FIB of VrfID), in the flow table; either key of a session matches, and
// both directions go. Flags are ignored.
func natDelSession(c *call, req *nat44_ed.Nat44DelSession) []api.Message {
	v, n := c.v, c.v.nat()
	r := &nat44_ed.Nat44DelSessionReply{}
	switch {
	case !n.enabled:
		r.Retval = int32(api.UNSUPPORTED)
	case !v.tableExists(req.VrfID):
		r.Retval = int32(api.NO_SUCH_ENTRY)
	default:
		k := flowKey{
			src:   netip.AddrPortFrom(ip4(req.Address), req.Port),
			dst:   netip.AddrPortFrom(ip4(req.ExtHostAddress), req.ExtHostPort),
			proto: req.Protocol, fib: req.VrfID,
		}
		s := n.flows[k]
		if s == nil {
			r.Retval = int32(api.NO_SUCH_ENTRY)
			break
		}
		n.deleteSession(v, s)
	}
	return c.reply(r)
}

// natUserDump groups sessions by (inside address, inside FIB) in order of
// first appearance in the session pool.
func natUserDump(c *call, _ *nat44_ed.Nat44UserDump) []api.Message {
	n := c.v.nat()
	type user struct {
		addr netip.Addr
		fib  uint32
	}
	idx := map[user]*nat44_ed.Nat44UserDetails{}
	var out []api.Message
	n.sessions.each(func(_ uint32, s *session) bool {
		u := user{s.in.Addr(), s.inFib}
		d := idx[u]
		if d == nil {
			d = &nat44_ed.Nat44UserDetails{VrfID: s.inFib, IPAddress: apiIP4(s.in.Addr())}
			idx[u] = d
			out = append(out, d)
		}
		if s.flags&sfStatic != 0 {
			d.Nstaticsessions++
		} else {
			d.Nsessions++
		}
		return true
	})
	return out
}

// The three user-session dumps list the same sessions: every session in
// the pool (expired ones included) whose inside address is the request's,
// in pool order. The VRF only picks the worker's session table, which on
// single-threaded VPP is always the one table, so it is ignored. They
// differ only in their details: v1 lacks IsTimedOut, v3 adds
// TimeSinceLastHeard.

// userSessions is the session walk the three dumps share.
func userSessions(c *call, ip ip_types.IP4Address) []*nat44_ed.Nat44UserSessionV3Details {
	v, n := c.v, c.v.nat()
	addr := ip4(ip)
	var out []*nat44_ed.Nat44UserSessionV3Details
	n.sessions.each(func(_ uint32, s *session) bool {
		if s.in.Addr() == addr {
			out = append(out, n.sessionDetails(v, s))
		}
		return true
	})
	return out
}

func natUserSessionV3Dump(c *call, req *nat44_ed.Nat44UserSessionV3Dump) []api.Message {
	var out []api.Message
	for _, d := range userSessions(c, req.IPAddress) {
		out = append(out, d)
	}
	return out
}

func natUserSessionV2Dump(c *call, req *nat44_ed.Nat44UserSessionV2Dump) []api.Message {
	var out []api.Message
	for _, d := range userSessions(c, req.IPAddress) {
		out = append(out, &nat44_ed.Nat44UserSessionV2Details{
			OutsideIPAddress: d.OutsideIPAddress, OutsidePort: d.OutsidePort,
			InsideIPAddress: d.InsideIPAddress, InsidePort: d.InsidePort,
			Protocol: d.Protocol, Flags: d.Flags, LastHeard: d.LastHeard,
			TotalBytes: d.TotalBytes, TotalPkts: d.TotalPkts,
			ExtHostAddress: d.ExtHostAddress, ExtHostPort: d.ExtHostPort,
			ExtHostNatAddress: d.ExtHostNatAddress, ExtHostNatPort: d.ExtHostNatPort,
			IsTimedOut: d.IsTimedOut,
		})
	}
	return out
}

func natUserSessionDump(c *call, req *nat44_ed.Nat44UserSessionDump) []api.Message {
	var out []api.Message
	for _, d := range userSessions(c, req.IPAddress) {
		out = append(out, &nat44_ed.Nat44UserSessionDetails{
			OutsideIPAddress: d.OutsideIPAddress, OutsidePort: d.OutsidePort,
			InsideIPAddress: d.InsideIPAddress, InsidePort: d.InsidePort,
			Protocol: d.Protocol, Flags: d.Flags, LastHeard: d.LastHeard,
			TotalBytes: d.TotalBytes, TotalPkts: d.TotalPkts,
			ExtHostAddress: d.ExtHostAddress, ExtHostPort: d.ExtHostPort,
			ExtHostNatAddress: d.ExtHostNatAddress, ExtHostNatPort: d.ExtHostNatPort,
		})
	}
	return out
}

func (n *natState) sessionDetails(v *VPP, s *session) *nat44_ed.Nat44UserSessionV3Details {
	d := &nat44_ed.Nat44UserSessionV3Details{
		OutsideIPAddress: apiIP4(s.out.Addr()), OutsidePort: s.out.Port(),
		InsideIPAddress: apiIP4(s.in.Addr()), InsidePort: s.in.Port(),
		Protocol: uint16(s.proto), Flags: nat_types.NAT_IS_EXT_HOST_VALID,
		LastHeard:          uint64(s.lastHeard / time.Second),
		TimeSinceLastHeard: uint64((v.now() - s.lastHeard) / time.Second),
		TotalBytes:         s.bytes, TotalPkts: s.pkts,
		ExtHostAddress: apiIP4(s.ext.Addr()), ExtHostPort: s.ext.Port(),
		IsTimedOut: n.expired(v, s),
	}
	if !hasPorts(s.proto) {
		// The address-only path never sets the session's proto and
		// stores the IP protocol in both ports, in host byte order.
		d.Protocol, d.InsidePort, d.OutsidePort, d.ExtHostPort = 0, uint16(s.proto)<<8, uint16(s.proto)<<8, 0
	}
	if s.flags&sfStatic != 0 {
		d.Flags |= nat_types.NAT_IS_STATIC
	}
	if s.flags&sfTwice != 0 {
		d.Flags |= nat_types.NAT_IS_TWICE_NAT
		d.ExtHostNatAddress, d.ExtHostNatPort = apiIP4(s.extNat.Addr()), s.extNat.Port()
	}
	return d
}

// affKey identifies an affinity record: the client port is not part of it.
type affKey struct {
	client, ext netip.Addr
	port        uint16
	proto       uint8
}

// affinityRec pins a client to an LB backend. Each session using it holds a
// reference; the last one to go starts a countdown of the mapping's
// Affinity seconds.
type affinityRec struct {
	m       *mapping
	backend uint32 // index in m.locals, as VPP stores it
	ep      netip.AddrPort
	vrf     uint32
	refs    int
	sticky  uint32
	expire  time.Duration
}

// findAffinity is nat_affinity_find_and_lock: a live record is locked and
// its backend returned; an expired one is deleted. A record whose backend
// was deleted (undefined in VPP) is dropped and the caller draws again.
func (n *natState) findAffinity(v *VPP, k affKey, m *mapping) (*lbLocal, bool) {
	a := n.affinity[k]
	if a == nil {
		return nil, false
	}
	if a.refs == 0 && a.expire < v.now() {
		delete(n.affinity, k)
		return nil, false
	}
	l := m.locals.get(a.backend)
	if a.m != m || l == nil || l.ep() != a.ep || l.vrf != a.vrf {
		v.violate("affinity record points to a deleted backend",
			fmt.Sprintf("client %s to %s:%d was pinned to %s, which is gone; VPP's behaviour is undefined, the fake draws again", k.client, k.ext, k.port, a.ep))
		delete(n.affinity, k)
		return nil, false
	}
	a.refs++
	return l, true
}

// createAffinity is nat_affinity_create_and_lock.
func (n *natState) createAffinity(k affKey, m *mapping, idx uint32, l *lbLocal) {
	if n.affinity[k] != nil {
		return
	}
	n.affinity[k] = &affinityRec{m: m, backend: idx, ep: l.ep(), vrf: l.vrf, refs: 1, sticky: m.affinity}
}

// unlockAffinity is nat_affinity_unlock.
func (n *natState) unlockAffinity(v *VPP, k affKey) {
	a := n.affinity[k]
	if a == nil {
		return
	}
	a.refs--
	if a.refs == 0 {
		a.expire = v.now() + time.Duration(a.sticky)*time.Second
	}
}

// flushAffinity deletes the records of an LB mapping.
func (n *natState) flushAffinity(m *mapping) {
	for k, a := range n.affinity {
		if a.m == m {
			delete(n.affinity, k)
		}
	}
}
