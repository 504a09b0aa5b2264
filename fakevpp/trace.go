package fakevpp

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// IP protocol numbers used by the fake.
const (
	protoICMP  uint8 = 1
	protoTCP   uint8 = 6
	protoUDP   uint8 = 17
	protoICMP6 uint8 = 58
	protoSCTP  uint8 = 132
)

// Packet is what Trace injects: an IPv4 or IPv6 packet arriving on an
// interface. For ICMP and ICMPv6 it is an echo request (or reply with
// EchoReply) with code 0, or the message of ICMP, and the ports carry its
// identifier (Src.Port, or Dst.Port if Src.Port is 0, is copied to both),
// unless Error makes it an error message. Protocols other than TCP, UDP,
// SCTP, ICMP and ICMPv6 have no ports (SCTP's are read by cnat over IPv4,
// not by NAT44-ED or the ACL plugin).
type Packet struct {
	Ingress   string
	Protocol  uint8
	Src, Dst  netip.AddrPort
	TCPFlags  uint8 // 0 means SYN for TCP
	EchoReply bool  // ICMP/ICMPv6 only: an echo reply instead of a request
	// ICMP gives an ICMP/ICMPv6 packet that is not an error another type
	// or code than an echo with code 0: an echo with a code, a timestamp
	// or node information query, a router solicitation, any number. Its
	// bytes 4-5 carry the identifier (the ports), as an echo's do. nil is
	// the echo request (reply with EchoReply) with code 0; normalised,
	// such a packet has ICMP nil, and EchoReply tells an echo reply of
	// any code. An error type (ICMPErrorType) needs Error: Trace drops it
	// here as malformed.
	ICMP *ICMPMessage
	// TTL is the IPv4 TTL or IPv6 hop limit; 0 means DefaultTTL. A packet
	// VPP forwards with TTL 1 is answered with a time exceeded (ttl.go).
	TTL uint8
	// Error makes an ICMP/ICMPv6 packet an error message (destination
	// unreachable, time exceeded …) about the packet in Error.Inner; its
	// own ports are then 0.
	Error *ICMPError
}

// ICMPMessage is the type and code of an ICMP or ICMPv6 message.
type ICMPMessage struct{ Type, Code uint8 }

// ICMPError is the body of an ICMP or ICMPv6 error message: its type and
// code, and the IP header plus first 8 bytes (ports, or the echo
// identifier) of the offending packet, as it was when the sender saw it.
// With Full the error quotes the whole offending packet (as Linux does,
// up to 576 bytes), so a quoted TCP header is complete.
type ICMPError struct {
	Type, Code uint8
	Inner      Header
	Full       bool
}

// Header is the offending packet an ICMP error quotes: the fields of a
// Packet that its IP header and first 8 bytes carry (TCP flags are not
// among them: Trace clears them unless the error is Full).
type Header struct {
	Protocol  uint8
	Src, Dst  netip.AddrPort
	TCPFlags  uint8
	EchoReply bool
	ICMP      *ICMPMessage // as Packet.ICMP
}

// packet is the quoted header as a packet of its own.
func (h Header) packet() Packet {
	return Packet{Protocol: h.Protocol, Src: h.Src, Dst: h.Dst, TCPFlags: h.TCPFlags, EchoReply: h.EchoReply, ICMP: h.ICMP}
}

// headerOf is what an error quotes of p.
func headerOf(p Packet) Header {
	return Header{Protocol: p.Protocol, Src: p.Src, Dst: p.Dst, TCPFlags: p.TCPFlags, EchoReply: p.EchoReply, ICMP: p.ICMP}
}

// ICMP error types and codes the tests use (RFC 792, RFC 4443).
const (
	ICMP4DestUnreach       uint8 = 3
	ICMP4TimeExceeded      uint8 = 11
	ICMP4PortUnreachable   uint8 = 3 // code of ICMP4DestUnreach
	ICMP4HostUnreachable   uint8 = 1 // code of ICMP4DestUnreach
	ICMP6DestUnreach       uint8 = 1
	ICMP6TimeExceeded      uint8 = 3
	ICMP6PortUnreachable   uint8 = 4 // code of ICMP6DestUnreach
	ICMP4FragNeeded        uint8 = 4 // code of ICMP4DestUnreach
	ICMP6PacketTooBig      uint8 = 2
	ICMPTTLExceededTransit uint8 = 0 // code of ICMP4/6TimeExceeded
)

// Parameter problem types, named in steps.
const (
	icmp4ParamProblem uint8 = 12
	icmp6ParamProblem uint8 = 4
)

// ICMPErrorAbout is the ICMP (ICMPv6 for IPv6) error that from sends about
// the packet about, arriving on ingress: addressed to about's source, quoting
// about's header (after the Packet conventions).
func ICMPErrorAbout(ingress string, from netip.Addr, typ, code uint8, about Packet) Packet {
	a := normalise(about)
	proto := protoICMP
	if from.Is6() {
		proto = protoICMP6
	}
	return Packet{Ingress: ingress, Protocol: proto,
		Src: netip.AddrPortFrom(from, 0), Dst: netip.AddrPortFrom(a.Src.Addr(), 0),
		Error: &ICMPError{Type: typ, Code: code, Inner: headerOf(a)}}
}

func (p Packet) String() string { return p.internal().String() }

// internal is the (normalised) packet as the graph carries it.
func (p Packet) internal() pkt {
	q := pkt{proto: p.Protocol, src: p.Src, dst: p.Dst, tcpFlags: p.TCPFlags, ttl: p.TTL}
	if q.ttl == 0 {
		q.ttl = DefaultTTL
	}
	if !q.isICMP() {
		return q
	}
	switch {
	case p.Error != nil:
		q.isErr, q.icmpType, q.icmpCode, q.errFull = true, p.Error.Type, p.Error.Code, p.Error.Full
		i := p.Error.Inner
		q.inner = innerOf(i.packet().internal())
	case p.ICMP != nil:
		q.icmpType, q.icmpCode = p.ICMP.Type, p.ICMP.Code
	default:
		q.icmpType = echoType(q.proto, p.EchoReply)
	}
	return q
}

// public is the packet as a Trace reports it, entering on ingress: an echo
// with code 0 by EchoReply, another message by ICMP (see Packet.ICMP).
func (p pkt) public(ingress string) Packet {
	q := Packet{Ingress: ingress, Protocol: p.proto, Src: p.src, Dst: p.dst, TCPFlags: p.tcpFlags, TTL: p.ttl}
	switch {
	case !p.isICMP():
	case p.isErr:
		q.Error = &ICMPError{Type: p.icmpType, Code: p.icmpCode, Full: p.errFull,
			Inner: headerOf(p.inner.pkt().public(""))}
	default:
		q.EchoReply = p.echoReply()
		if !p.isEcho() || p.icmpCode != 0 {
			q.ICMP = &ICMPMessage{Type: p.icmpType, Code: p.icmpCode}
		}
	}
	return q
}

// Verdict is what happened to a traced packet.
type Verdict string

// Verdicts.
const (
	Forward Verdict = "forward" // left through Trace.Egress
	Drop    Verdict = "drop"    // dropped; Trace.Reason says where and why
	Local   Verdict = "local"   // addressed to one of VPP's own addresses
)

// Trace is the result of tracing a packet.
type Trace struct {
	In      Packet  // the packet as injected (normalised: TCP flags, ICMP identifier)
	Verdict Verdict //
	Out     Packet  // the packet as it leaves (or as it was when dropped)
	Egress  string  // the interface it leaves by (Verdict forward)
	// Endpoints are the destinations the packet may leave with: every LB
	// local with a non-zero probability when the packet created an LB session
	// by a random draw, otherwise the single translated destination.
	Endpoints []netip.AddrPort
	SNAT      bool   // the source was rewritten
	ReplyOK   bool   // the reply of Out, entering on Egress, comes back as In.Dst → In.Src
	Reason    string // why it was dropped
	Steps     []string
	// ICMP is the ICMP error VPP itself sent about the packet (a time
	// exceeded for a TTL that ran out, ttl.go), with what became of it;
	// nil when VPP sent none.
	ICMP *SentICMP
}

// SentICMP is an ICMP error VPP generated about a traced packet: its
// verdict, the error as it left (or as it was when dropped) and by which
// interface.
type SentICMP struct {
	Verdict Verdict
	Out     Packet
	Egress  string
	Reason  string
}

// pkt is the packet while it walks the graph. Every ICMP packet has its
// type and code; an ICMP error (isErr) has no ports of its own and carries
// the header it quotes in inner, any other ICMP message its identifier in
// both ports.
type pkt struct {
	proto    uint8
	src, dst netip.AddrPort
	tcpFlags uint8
	icmpType uint8
	icmpCode uint8
	isErr    bool
	errFull  bool // the error quotes the whole packet, not 8 bytes
	inner    innerHdr
	ttl      uint8
	// local marks a packet VPP generated (VNET_BUFFER_F_LOCALLY_ORIGINATED):
	// ip4-rewrite does not check or decrement its TTL.
	local bool
}

// innerHdr is the quoted header of an ICMP error; a quoted ICMP message
// has its type and code, and its identifier in the ports.
type innerHdr struct {
	proto              uint8
	src, dst           netip.AddrPort
	tcpFlags           uint8
	icmpType, icmpCode uint8
}

// innerOf is what an error quotes of p.
func innerOf(p pkt) innerHdr {
	return innerHdr{proto: p.proto, src: p.src, dst: p.dst, tcpFlags: p.tcpFlags, icmpType: p.icmpType, icmpCode: p.icmpCode}
}

// pkt is the quoted header as a packet.
func (h innerHdr) pkt() pkt {
	return pkt{proto: h.proto, src: h.src, dst: h.dst, tcpFlags: h.tcpFlags, icmpType: h.icmpType, icmpCode: h.icmpCode}
}

func (h innerHdr) String() string { return h.pkt().String() }

func (p pkt) is4() bool { return p.dst.Addr().Is4() }

func (p pkt) isICMP() bool { return p.proto == protoICMP || p.proto == protoICMP6 }

// hasPorts tells whether the protocol has L4 ports (or an echo identifier).
func hasPorts(proto uint8) bool {
	switch proto {
	case protoTCP, protoUDP, protoICMP, protoICMP6:
		return true
	}
	return false
}

func protoName(p uint8) string {
	switch p {
	case protoTCP:
		return "tcp"
	case protoUDP:
		return "udp"
	case protoICMP:
		return "icmp"
	case protoICMP6:
		return "icmp6"
	}
	return fmt.Sprintf("proto-%d", p)
}

func (p pkt) String() string {
	s := fmt.Sprintf("%s %s → %s", protoName(p.proto), p.src, p.dst)
	switch {
	case p.proto == protoTCP:
		s += " [" + tcpFlagString(p.tcpFlags) + "]"
	case p.isErr:
		s += fmt.Sprintf(" [%s: %s]", icmpErrName(p.proto, p.icmpType, p.icmpCode), p.inner)
	case p.isICMP():
		s += " [" + icmpMessageName(p.proto, p.icmpType, p.icmpCode) + "]"
	}
	return s
}

// icmpErrName names an ICMP error type and code for steps.
func icmpErrName(proto, typ, code uint8) string {
	switch {
	case proto == protoICMP && typ == ICMP4DestUnreach:
		return fmt.Sprintf("dest-unreachable/%d", code)
	case proto == protoICMP && typ == ICMP4TimeExceeded:
		return fmt.Sprintf("time-exceeded/%d", code)
	case proto == protoICMP6 && typ == ICMP6DestUnreach:
		return fmt.Sprintf("dest-unreachable/%d", code)
	case proto == protoICMP6 && typ == ICMP6TimeExceeded:
		return fmt.Sprintf("time-exceeded/%d", code)
	case proto == protoICMP6 && typ == ICMP6PacketTooBig:
		return "packet-too-big"
	case proto == protoICMP && typ == icmp4ParamProblem, proto == protoICMP6 && typ == icmp6ParamProblem:
		return fmt.Sprintf("parameter-problem/%d", code)
	}
	return fmt.Sprintf("icmp-error %d/%d", typ, code)
}

func tcpFlagString(f uint8) string {
	var parts []string
	for _, x := range []struct {
		f uint8
		s string
	}{{tcpSYN, "SYN"}, {tcpACK, "ACK"}, {tcpFIN, "FIN"}, {tcpRST, "RST"}, {tcpPSH, "PSH"}} {
		if f&x.f != 0 {
			parts = append(parts, x.s)
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "|")
}

// pktCtx is the state of one packet in the graph, handed to every node.
type pktCtx struct {
	v         *VPP
	pkt       pkt
	rx, tx    *iface
	steps     []string
	verdict   Verdict
	reason    string
	done      bool
	endpoints []netip.AddrPort
	sent      *SentICMP // an ICMP error VPP generated about the packet
}

func (c *pktCtx) step(format string, args ...any) {
	c.steps = append(c.steps, fmt.Sprintf(format, args...))
}

// drop ends the packet in node with a reason.
func (c *pktCtx) drop(node, reason string) {
	c.step("%s: drop (%s)", node, reason)
	c.dropAfterSteps(node, reason)
}

// dropAfterSteps ends the packet in node with a reason, adding no step: for
// nodes whose own steps already say what happened (cnat's engine).
func (c *pktCtx) dropAfterSteps(node, reason string) {
	c.verdict, c.reason, c.done = Drop, node+": "+reason, true
}

// dropLine ends the packet; line is both the last step and the reason.
func (c *pktCtx) dropLine(line string) {
	c.step("%s", line)
	c.verdict, c.reason, c.done = Drop, line, true
}

// family returns "ip4" or "ip6", the prefix of VPP's node names.
func (c *pktCtx) family() string {
	if c.pkt.is4() {
		return "ip4"
	}
	return "ip6"
}

// Malformed is why Trace refuses the (normalised) packet, "" when it does
// not: addresses of two families, an ICMP error type without the packet it
// quotes.
func (p Packet) Malformed() string {
	switch {
	case !p.Src.Addr().IsValid() || !p.Dst.Addr().IsValid() || p.Src.Addr().Is4() != p.Dst.Addr().Is4():
		return "source and destination must be addresses of one family"
	case p.ICMP != nil && ICMPErrorType(p.Protocol, p.ICMP.Type):
		return fmt.Sprintf("ICMP type %d is an error, which quotes a packet: give it as Packet.Error", p.ICMP.Type)
	}
	return ""
}

// Normalized is the packet as Trace injects it, after the Packet
// conventions: TCP flags 0 mean SYN, one ICMP identifier in both ports, no
// ports for protocols other than TCP, UDP and SCTP. Another data plane that traces in this shape
// (package realvpp) applies the same.
func (p Packet) Normalized() Packet { return normalise(p) }

// Reply is the answer of the host that received t.Out, as Trace sends it
// back to compute ReplyOK.
func (t Trace) Reply() Packet { return replyPacket(t) }

// WithReply is t judged by r, the trace of its Reply: ReplyOK when the
// reply leaves towards the client as from the address it called, and a
// step saying what became of the reply.
func (t Trace) WithReply(r Trace) Trace {
	t.ReplyOK = r.Verdict == Forward && r.Out.Src == t.In.Dst && r.Out.Dst == t.In.Src
	step := fmt.Sprintf("reply %s: leaves as %s via %s, not %s → %s", r.In, r.Out, r.Egress, t.In.Dst, t.In.Src)
	switch {
	case r.Verdict != Forward:
		step = fmt.Sprintf("reply %s: %s (%s)", r.In, r.Verdict, r.Reason)
	case t.ReplyOK:
		step = fmt.Sprintf("reply %s: back to the client as %s via %s", r.In, r.Out, r.Egress)
	}
	t.Steps = append(t.Steps, step)
	return t
}

// normalise applies the Packet conventions: TCP flags 0 = SYN, one ICMP
// identifier in both ports, no ports for protocols other than TCP, UDP and
// SCTP.
func normalise(p Packet) Packet {
	isICMP := p.Protocol == protoICMP || p.Protocol == protoICMP6
	if p.Error != nil && !isICMP {
		p.Error = nil
	}
	if p.Error != nil || !isICMP {
		p.ICMP = nil
	}
	switch {
	case p.Error != nil:
		e := *p.Error
		e.Inner = headerOf(normalise(e.Inner.packet()))
		if !e.Full {
			e.Inner.TCPFlags = 0 // the quoted 8 bytes of TCP end before its flags
		}
		p.Error = &e
		p.Src = netip.AddrPortFrom(p.Src.Addr(), 0)
		p.Dst = netip.AddrPortFrom(p.Dst.Addr(), 0)
		p.EchoReply = false
	case p.Protocol == protoTCP && p.TCPFlags == 0:
		p.TCPFlags = tcpSYN
	case isICMP:
		p.normaliseICMP()
		id := p.Src.Port()
		if id == 0 {
			id = p.Dst.Port()
		}
		p.Src = netip.AddrPortFrom(p.Src.Addr(), id)
		p.Dst = netip.AddrPortFrom(p.Dst.Addr(), id)
	case !hasPorts(p.Protocol) && p.Protocol != protoSCTP:
		p.Src = netip.AddrPortFrom(p.Src.Addr(), 0)
		p.Dst = netip.AddrPortFrom(p.Dst.Addr(), 0)
	}
	if p.Protocol != protoTCP {
		p.TCPFlags = 0
	}
	if !isICMP {
		p.EchoReply = false
	}
	if p.TTL == 0 {
		p.TTL = DefaultTTL
	}
	return p
}

// Trace injects p on its ingress interface and walks it through the graph,
// statefully as VPP would (sessions, affinity records, port allocations are
// created). For a forwarded packet it then sends the reply of Out back from
// the egress interface, also statefully, to compute ReplyOK.
func (v *VPP) Trace(p Packet) Trace {
	v.mu.Lock()
	defer v.mu.Unlock()
	t := v.trace(p)
	if !t.HasReply() {
		return t
	}
	r := v.trace(replyPacket(t))
	return t.WithReply(r)
}

// HasReply tells whether Trace sends a reply for t: a forwarded packet
// that is not an ICMP error (nobody answers an error) nor an ICMP message
// without a reply type (icmpAnswer).
func (t Trace) HasReply() bool {
	if t.Verdict != Forward || t.In.Error != nil {
		return false
	}
	if m := t.Out.ICMP; m != nil {
		_, ok := icmpAnswer(t.Out.Protocol, m.Type)
		return ok
	}
	return true
}

// TraceReply sends the reply of t.Out back from t.Egress: source and
// destination swapped, SYN|ACK for a SYN (ACK otherwise), echo reply for an
// echo request (of its code; icmpAnswer for other ICMP queries). It does not
// compute ReplyOK.
func (v *VPP) TraceReply(t Trace) Trace {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !t.HasReply() {
		return Trace{In: replyPacket(t), Verdict: Drop, Reason: "trace: the original packet was not forwarded, or is an ICMP error or a message without reply"}
	}
	return v.trace(replyPacket(t))
}

// replyPacket is the answer of the host that received t.Out.
func replyPacket(t Trace) Packet {
	r := Packet{Ingress: t.Egress, Protocol: t.Out.Protocol, Src: t.Out.Dst, Dst: t.Out.Src}
	switch {
	case r.Protocol == protoTCP && t.Out.TCPFlags&tcpSYN != 0 && t.Out.TCPFlags&tcpACK == 0:
		r.TCPFlags = tcpSYN | tcpACK
	case r.Protocol == protoTCP:
		r.TCPFlags = tcpACK
	case t.Out.ICMP != nil:
		typ, _ := icmpAnswer(r.Protocol, t.Out.ICMP.Type)
		r.ICMP = &ICMPMessage{Type: typ, Code: t.Out.ICMP.Code}
	case r.Protocol == protoICMP || r.Protocol == protoICMP6:
		r.EchoReply = !t.Out.EchoReply
	}
	return r
}

// trace runs the graph: input features of the ingress interface (ACL, NAT44
// …), lookup nodes (cnat's VIP path), the FIB lookup, then the output
// features of the egress interface (NAT44 output, ACL …).
func (v *VPP) trace(p Packet) (t Trace) {
	in := normalise(p)
	t.In = in
	c := &pktCtx{v: v, pkt: in.internal()}
	defer func() {
		t.Verdict, t.Reason, t.Steps, t.ICMP = c.verdict, c.reason, c.steps, c.sent
		t.Out = c.pkt.public(in.Ingress)
		t.SNAT = t.Out.Src != in.Src
		if c.verdict == Forward {
			t.Egress = c.tx.name
		}
		if c.verdict != Drop {
			t.Endpoints = c.endpoints
			// Candidates drawn by one node and rewritten again by a later
			// one (cnat-input to a ClusterIP, then NAT44-ED) are stale.
			if !slices.Contains(t.Endpoints, t.Out.Dst) {
				t.Endpoints = nil
			}
			if t.Endpoints == nil {
				t.Endpoints = []netip.AddrPort{t.Out.Dst}
			}
		}
	}()
	if why := in.Malformed(); why != "" {
		c.drop("trace", "malformed packet: "+why)
		return t
	}
	c.rx = v.ifaceNamed(in.Ingress)
	if c.rx == nil {
		c.drop("trace", fmt.Sprintf("unknown ingress interface %q", in.Ingress))
		return t
	}
	v.learnNeighbour(c.rx, in.Src.Addr())
	c.step("%s-input %s: %s", c.family(), c.rx.name, c.pkt)
	for _, n := range pipeline().input {
		if n.run(c); c.done {
			return t
		}
	}
	v.route(c)
	return t
}

// route takes a packet from the FIB lookup on: the lookup nodes (cnat's
// VIP path), the FIB lookup, ip4-rewrite/ip6-rewrite (the TTL check), the
// output features of the egress interface; the packet is forwarded unless
// one of them ended it.
func (v *VPP) route(c *pktCtx) {
	g := pipeline()
	for _, n := range g.lookup {
		if n.run(c); c.done {
			return
		}
	}
	v.fibNode(c)
	if c.done {
		return
	}
	if rewriteTTL(c); c.done {
		return
	}
	for _, n := range g.output {
		if n.run(c); c.done {
			return
		}
	}
	// interface-output drops what is sent out of an admin-down interface.
	// Nothing in the graph checks the ingress interface's state: a device
	// set down stops receiving, the packet generator does not.
	if c.tx.adminDown {
		c.drop("interface-output", c.tx.name+" is admin down")
		return
	}
	c.verdict = Forward
	c.step("%s-output %s: %s", c.family(), c.tx.name, c.pkt)
}

// fibNode is ip4-lookup/ip6-lookup: local delivery, an egress interface, or
// a drop for lack of a route.
func (v *VPP) fibNode(c *pktCtx) {
	node := c.family() + "-lookup"
	res := v.lookup(c.pkt.dst.Addr())
	switch {
	case res.local != nil:
		c.step("%s: %s is local (%s)", node, c.pkt.dst.Addr(), res.local.name)
		c.verdict, c.done = Local, true
	case res.egress != nil:
		c.tx = res.egress
		c.step("%s: %s via %s (%s)", node, c.pkt.dst.Addr(), res.egress.name, res.prefix)
	case res.drop:
		c.drop(node, fmt.Sprintf("%s matches drop route %s", c.pkt.dst.Addr(), res.prefix))
	default:
		c.drop(node, fmt.Sprintf("no route to %s", c.pkt.dst.Addr()))
	}
}
