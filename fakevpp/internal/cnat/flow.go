package cnat

import (
	"fmt"
	"net/netip"
)

// TCP flag bits of Flow.TCPFlags (the TCP header's flags byte).
const (
	TCPFin = 0x01
	TCPSyn = 0x02
	TCPRst = 0x04
	TCPAck = 0x10
)

// ICMP types cnat distinguishes (cnat_node.h): echo, and the error messages
// whose embedded packet is used to find the session. ICMPv6 Packet Too Big
// (2) is not one of cnat's error types.
const (
	ICMP4EchoReply      = 0
	ICMP4DestUnreach    = 3
	ICMP4SourceQuench   = 4
	ICMP4Redirect       = 5
	ICMP4AltHostAddress = 6
	ICMP4EchoRequest    = 8
	ICMP4TimeExceeded   = 11
	ICMP4ParamProblem   = 12
	ICMP6DestUnreach    = 1
	ICMP6TimeExceeded   = 3
	ICMP6ParamProblem   = 4
	ICMP6EchoRequest    = 128
	ICMP6EchoReply      = 129
)

// Flow is the part of a packet cnat looks at.
//
// For TCP, UDP and SCTP, Src and Dst carry the ports. For an ICMP or ICMPv6
// echo both ports carry the echo identifier (cnat keys and rewrites echo
// flows on it as if it were both ports). For an ICMP error, Inner is the
// embedded packet as its sender sent it and the outer ports are ignored.
type Flow struct {
	Proto    uint8 // IP protocol number: 6 TCP, 17 UDP, 132 SCTP, 1 ICMP, 58 ICMPv6
	Src, Dst netip.AddrPort
	TCPFlags uint8 // TCP only
	ICMPType uint8 // ICMP and ICMPv6 only
	Inner    *Flow // ICMP errors only
}

func (f Flow) is6() bool { return f.Dst.Addr().Is6() }

// String renders "TCP 10.1.1.2:40000 → 10.96.0.20:80".
func (f Flow) String() string {
	return fmt.Sprintf("%s %s → %s", protoName(f.Proto), f.Src, f.Dst)
}

func (f Flow) normalized() Flow {
	f.Src = netip.AddrPortFrom(f.Src.Addr().Unmap(), f.Src.Port())
	f.Dst = netip.AddrPortFrom(f.Dst.Addr().Unmap(), f.Dst.Port())
	if f.Inner != nil {
		in := f.Inner.normalized()
		f.Inner = &in
	}
	return f
}

func (f Flow) clone() Flow {
	if f.Inner != nil {
		in := *f.Inner
		f.Inner = &in
	}
	return f
}

func (f Flow) isICMP() bool {
	return (f.Proto == protoICMP && !f.is6()) || (f.Proto == protoICMP6 && f.is6())
}

func (f Flow) isEcho() bool {
	if !f.isICMP() {
		return false
	}
	if f.is6() {
		return f.ICMPType == ICMP6EchoRequest || f.ICMPType == ICMP6EchoReply
	}
	return f.ICMPType == ICMP4EchoRequest || f.ICMPType == ICMP4EchoReply
}

func (f Flow) isError() bool {
	if !f.isICMP() {
		return false
	}
	if f.is6() {
		switch f.ICMPType {
		case ICMP6DestUnreach, ICMP6TimeExceeded, ICMP6ParamProblem:
			return true
		}
		return false
	}
	switch f.ICMPType {
	case ICMP4DestUnreach, ICMP4TimeExceeded, ICMP4ParamProblem, ICMP4SourceQuench,
		ICMP4Redirect, ICMP4AltHostAddress:
		return true
	}
	return false
}

// hasPorts tells whether cnat reads and rewrites ports in this (outer)
// protocol. SCTP only counts on IPv4: ip6 sessions are not keyed on it.
func (f Flow) hasPorts() bool {
	switch f.Proto {
	case protoTCP, protoUDP:
		return true
	case protoSCTP:
		return !f.is6()
	}
	return false
}

// Verdict is what the caller does with the packet after cnat.
type Verdict int

const (
	// Pass: cnat did not translate. The packet continues as if cnat were not
	// there: for VIP, with the FIB entry cnat is interposed on (normal
	// routing of the destination); for Snat, with the next feature.
	Pass Verdict = iota
	// Forward: cnat rewrote the packet (Result.Flow); route the new
	// destination.
	Forward
	// Drop: the packet is dropped (Result.DropReason).
	Drop
)

func (v Verdict) String() string {
	switch v {
	case Pass:
		return "pass"
	case Forward:
		return "forward"
	case Drop:
		return "drop"
	}
	return fmt.Sprintf("verdict(%d)", int(v))
}

// Result is the outcome of VIP or Snat for one packet.
type Result struct {
	// Matched: a session (forward or return entry) or a translation was hit.
	Matched bool
	Verdict Verdict
	// DropReason is set for Drop, e.g. "cnat: exclusive VIP 10.96.0.20, no
	// translation for port 443/TCP" or "cnat: no more free ports".
	DropReason string
	// Flow is the packet after cnat (the input when not translated).
	Flow Flow
	// Candidates lists the destination of every active path of the
	// translation that chose the backend of a new flow, in path order.
	Candidates []netip.AddrPort
	// SNAT: the source address was rewritten.
	SNAT bool
	// NewSession: this packet created the session.
	NewSession bool
	// Relookup: VPP sends the rewritten packet to ip4/ip6-lookup again
	// (return traffic of a source-NATed flow) instead of straight to the
	// stored route; a new FIB lookup may enter cnat again.
	Relookup bool
	// TranslationID is the translation that created the session, ~0 if none.
	TranslationID uint32
	// Steps are human-readable trace lines.
	Steps []string
}

func (r *Result) step(format string, args ...any) {
	r.Steps = append(r.Steps, fmt.Sprintf(format, args...))
}

func protoName(p uint8) string {
	switch p {
	case protoTCP:
		return "TCP"
	case protoUDP:
		return "UDP"
	case protoSCTP:
		return "SCTP"
	case protoICMP:
		return "ICMP"
	case protoICMP6:
		return "ICMP6"
	}
	return fmt.Sprintf("proto-%d", p)
}
