package fakevpp

import (
	"fmt"
	"net/netip"
	"time"

	"go.fd.io/govpp/binapi/acl_types"
)

// ACL reflect-session timeouts (acl plugin defaults; SetACLSessionTimeout
// changes them).
const (
	aclTCPEstablished = 24 * time.Hour
	aclTCPTransient   = 120 * time.Second
	aclUDPOther       = 600 * time.Second
	aclMaxSessions    = 500000
)

// aclSessKey is the 5-tuple plus interface and direction.
type aclSessKey struct {
	sw       uint32
	input    bool
	src, dst netip.AddrPort
	proto    uint8
}

// aclSession is a reflect session: created by a permit+reflect match, it lets
// the same flow in the same direction and its reply in the opposite
// direction on the same interface pass.
type aclSession struct {
	fwd, rev aclSessKey
	tcp      [2]uint8 // TCP flags seen forward / reverse
	lastSeen time.Duration
}

// timeout is fa_session_get_timeout_type: a TCP session is established
// only while both directions have shown exactly SYN and ACK among SYN, ACK,
// FIN and RST; a FIN or RST seen either way makes it transient again.
func (s *aclSession) timeout(st *aclState) time.Duration {
	switch s.fwd.proto {
	case protoTCP:
		const mask = tcpSYN | tcpACK | tcpFIN | tcpRST
		if s.tcp[0]&mask == tcpSYN|tcpACK && s.tcp[1]&mask == tcpSYN|tcpACK {
			return st.timeouts[ACLTCPIdle]
		}
		return st.timeouts[ACLTCPTransient]
	default:
		return st.timeouts[ACLUDPIdle]
	}
}

func aclInputNode(c *pktCtx)  { c.v.acl().check(c, c.rx, true) }
func aclOutputNode(c *pktCtx) { c.v.acl().check(c, c.tx, false) }

// check is acl-plugin-{in,out}-ip{4,6}-fa: reflect sessions first, then the
// first matching rule across the interface's list; no match denies. An
// applied ACL filters IPv4 and IPv6 alike.
func (s *aclState) check(c *pktCtx, ifc *iface, input bool) {
	b := s.bindings[ifc.index]
	if b == nil {
		return
	}
	list, node := b.out, "acl-out "+ifc.name
	if input {
		list, node = b.in, "acl-in "+ifc.name
	}
	if len(list) == 0 {
		return
	}
	p := c.pkt
	now := c.v.now()
	k := aclKey(ifc.index, input, p)
	if sess := s.sessions[k]; sess != nil {
		if now-sess.lastSeen >= sess.timeout(s) {
			delete(s.sessions, sess.fwd)
			delete(s.sessions, sess.rev)
		} else {
			dir := 0
			if k == sess.rev {
				dir = 1
			}
			sess.tcp[dir] |= p.tcpFlags
			sess.lastSeen = now
			c.step("%s: permit (reflect session)", node)
			return
		}
	}
	for _, idx := range list {
		a := s.acls.get(idx)
		for ri := range a.rules {
			r := &a.rules[ri]
			if !r.matches(p) {
				continue
			}
			where := fmt.Sprintf("acl %s rule %d", a.name(), ri)
			switch r.action {
			case acl_types.ACL_ACTION_API_PERMIT:
				c.step("%s: permit (%s)", node, where)
			case acl_types.ACL_ACTION_API_PERMIT_REFLECT:
				if len(s.sessions)/2 >= aclMaxSessions {
					c.dropLine(fmt.Sprintf("%s: deny (%s: reflect session table full)", node, where))
					return
				}
				rev, ok := aclReverseKey(k)
				sess := &aclSession{fwd: k, rev: rev, lastSeen: now}
				sess.tcp[0] = p.tcpFlags
				s.sessions[sess.fwd] = sess
				if ok {
					s.sessions[sess.rev] = sess
				}
				c.step("%s: permit+reflect (%s, session created)", node, where)
			default:
				c.dropLine(fmt.Sprintf("%s: deny (%s)", node, where))
			}
			return
		}
	}
	c.dropLine(fmt.Sprintf("%s: deny (no rule matched)", node))
}

// matches tells whether p matches the rule. For ICMP the source range is the
// type and the destination range the code.
func (r *aclRule) matches(p pkt) bool {
	if r.is6 == p.is4() {
		return false
	}
	if !r.src.Contains(p.src.Addr()) || !r.dst.Contains(p.dst.Addr()) {
		return false
	}
	if r.proto == 0 {
		return true
	}
	if p.proto != r.proto {
		return false
	}
	sport, dport := aclPorts(p)
	if sport < r.sportLo || sport > r.sportHi || dport < r.dportLo || dport > r.dportHi {
		return false
	}
	return p.proto != protoTCP || p.tcpFlags&r.tcpMask == r.tcpValue
}

// flush deletes the reflect sessions of an interface.
func (s *aclState) flush(sw uint32) {
	for k, sess := range s.sessions {
		if sess.fwd.sw == sw {
			delete(s.sessions, k)
		}
	}
}

// aclPorts are the two 16-bit values the ACL plugin matches and keys
// sessions on (acl_fill_5tuple_l4_and_pkt_data): the ports for TCP and
// UDP, the type and code for ICMP and ICMPv6 (never the echo identifier),
// 0 for other protocols.
func aclPorts(p pkt) (uint16, uint16) {
	switch {
	case p.isICMP():
		return uint16(p.icmpType), uint16(p.icmpCode)
	case p.proto == protoTCP, p.proto == protoUDP:
		return p.src.Port(), p.dst.Port()
	}
	return 0, 0
}

// aclKey is a packet's session key on an interface and direction.
func aclKey(sw uint32, input bool, p pkt) aclSessKey {
	sp, dp := aclPorts(p)
	return aclSessKey{sw: sw, input: input, proto: p.proto,
		src: netip.AddrPortFrom(p.src.Addr(), sp), dst: netip.AddrPortFrom(p.dst.Addr(), dp)}
}

// aclReverseKey is the key of a session's return traffic
// (reverse_l4_u64_slowpath_valid): addresses and ports swapped, the other
// direction; for ICMP the type becomes its reply (icmp4_invmap,
// icmp6_invmap: echo, timestamp, information and address mask requests;
// ICMPv6 echo and node information requests) and the code stays, so only
// a reply of the request's code comes back. Only those request types
// (icmp4_valid_new, icmp6_valid_new) get a reverse key: any other ICMP
// message (a reply, an error, a router solicitation) makes a one-way
// session.
func aclReverseKey(k aclSessKey) (aclSessKey, bool) {
	r := aclSessKey{sw: k.sw, input: !k.input, proto: k.proto, src: k.dst, dst: k.src}
	if k.proto != protoICMP && k.proto != protoICMP6 {
		return r, true
	}
	if k.src.Port() > 0xff {
		return aclSessKey{}, false
	}
	reply, ok := icmpQueries[k.proto][uint8(k.src.Port())]
	if !ok {
		return aclSessKey{}, false
	}
	r.src = netip.AddrPortFrom(k.dst.Addr(), uint16(reply))
	r.dst = netip.AddrPortFrom(k.src.Addr(), k.dst.Port())
	return r, true
}
