package fakevpp

import (
	"fmt"
	"net/netip"
	"time"

	"go.fd.io/govpp/binapi/acl_types"
)

// ACL reflect-session timeouts (acl plugin defaults).
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

func (s *aclSession) timeout() time.Duration {
	switch s.fwd.proto {
	case protoTCP:
		if s.tcp[0]&s.tcp[1]&(tcpSYN|tcpACK) == tcpSYN|tcpACK {
			return aclTCPEstablished
		}
		return aclTCPTransient
	default:
		return aclUDPOther
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
	k := aclSessKey{sw: ifc.index, input: input, src: p.src, dst: p.dst, proto: p.proto}
	if sess := s.sessions[k]; sess != nil {
		if now-sess.lastSeen >= sess.timeout() {
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
				sess := &aclSession{fwd: k, rev: aclSessKey{sw: ifc.index, input: !input, src: p.dst, dst: p.src, proto: p.proto}, lastSeen: now}
				sess.tcp[0] = p.tcpFlags
				s.sessions[sess.fwd], s.sessions[sess.rev] = sess, sess
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
	sport, dport := p.src.Port(), p.dst.Port()
	switch p.proto {
	case protoICMP:
		sport, dport = 8, 0
		if p.echoReply {
			sport = 0
		}
	case protoICMP6:
		sport, dport = 128, 0
		if p.echoReply {
			sport = 129
		}
	}
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
