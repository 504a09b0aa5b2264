package fakevpp

import "fmt"

// ICMP message types by family, and what VPP 25.10's plugins make of them
// (docs/fakevpp.md#icmp-messages). ICMP (protocol 1) numbers its types
// after RFC 792, ICMPv6 (58) after RFC 4443; the protocol, not the address
// family, decides which numbering a packet's type follows.

// Echo types.
const (
	icmp4EchoReply   uint8 = 0
	icmp4EchoRequest uint8 = 8
	icmp6EchoRequest uint8 = 128
	icmp6EchoReply   uint8 = 129
)

// echoType is the echo request (reply with reply) type of an ICMP protocol.
func echoType(proto uint8, reply bool) uint8 {
	switch {
	case proto == protoICMP6 && reply:
		return icmp6EchoReply
	case proto == protoICMP6:
		return icmp6EchoRequest
	case reply:
		return icmp4EchoReply
	}
	return icmp4EchoRequest
}

// isEchoType tells whether typ is an echo request or reply of proto.
func isEchoType(proto, typ uint8) bool {
	return typ == echoType(proto, false) || typ == echoType(proto, true)
}

// ICMPErrorType tells whether typ is an error message of the ICMP protocol
// proto (1 or 58), one that quotes the packet it is about and so needs
// Packet.Error: for ICMP the types VPP's NAT44-ED and cnat read as errors
// (icmp_type_is_error_message: destination unreachable, source quench,
// redirect, alternate host address, time exceeded, parameter problem), for
// ICMPv6 every type below 128 (RFC 4443 2.1).
func ICMPErrorType(proto, typ uint8) bool {
	if proto == protoICMP6 {
		return typ < 128
	}
	switch typ {
	case 3, 4, 5, 6, 11, 12:
		return true
	}
	return false
}

// icmpQueries pairs the ICMP request types that have a reply with it (RFC
// 792 echo, timestamp, information, address mask; RFC 4620 node
// information): the host a request reaches answers with the reply type and
// the request's code (Linux copies the code of an echo), and the ACL
// plugin's reflect sessions let exactly these replies back.
var icmpQueries = map[uint8]map[uint8]uint8{
	protoICMP:  {icmp4EchoRequest: icmp4EchoReply, 13: 14, 15: 16, 17: 18},
	protoICMP6: {icmp6EchoRequest: icmp6EchoReply, 139: 140},
}

// icmpAnswer is the type the host that received a message of typ answers
// with: the reply of a request, the request of a reply (how Trace judges a
// reply's own way back), false for any other type.
func icmpAnswer(proto, typ uint8) (uint8, bool) {
	for req, rep := range icmpQueries[proto] {
		switch typ {
		case req:
			return rep, true
		case rep:
			return req, true
		}
	}
	return 0, false
}

// icmpMessageName names a message that is not an error for steps and
// packet strings: "echo-request", "echo-reply/7", "icmp 13/0".
func icmpMessageName(proto, typ, code uint8) string {
	name := fmt.Sprintf("icmp %d/%d", typ, code)
	if isEchoType(proto, typ) {
		name = "echo-request"
		if typ == echoType(proto, true) {
			name = "echo-reply"
		}
		if code != 0 {
			name += fmt.Sprintf("/%d", code)
		}
	}
	return name
}

// normaliseICMP gives an ICMP message that is not an error its canonical
// form: an echo with code 0 by EchoReply alone, anything else by a copy of
// ICMP, with EchoReply telling an echo reply.
func (p *Packet) normaliseICMP() {
	if p.ICMP == nil {
		return
	}
	m := *p.ICMP
	p.EchoReply = m.Type == echoType(p.Protocol, true)
	if isEchoType(p.Protocol, m.Type) && m.Code == 0 {
		p.ICMP = nil
		return
	}
	p.ICMP = &m
}

// echoReply tells whether p is an echo reply.
func (p pkt) echoReply() bool {
	return p.isICMP() && !p.isErr && p.icmpType == echoType(p.proto, true)
}

// isEcho tells whether p is an echo request or reply, of any code.
func (p pkt) isEcho() bool { return p.isICMP() && !p.isErr && isEchoType(p.proto, p.icmpType) }

// SetICMP makes p, an ICMP or ICMPv6 packet that is not an error, a
// message of typ and code, in the form Trace reports it (EchoReply alone for
// an echo with code 0).
func (p *Packet) SetICMP(typ, code uint8) {
	p.ICMP = &ICMPMessage{Type: typ, Code: code}
	p.normaliseICMP()
}

// Message is the type and code of p, an ICMP or ICMPv6 packet that is not
// an error: Packet.ICMP, or the echo EchoReply tells with code 0.
func (p Packet) Message() ICMPMessage {
	if p.ICMP != nil {
		return *p.ICMP
	}
	return ICMPMessage{Type: echoType(p.Protocol, p.EchoReply)}
}
