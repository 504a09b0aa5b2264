package flows

import (
	"fmt"
	"net/netip"
	"strings"
)

// IP protocol numbers of ICMP. ParseProtocol returns ProtoICMP for both
// families; a parsed Flow has ProtoICMP6 for IPv6.
const (
	ProtoICMP  uint8 = 1
	ProtoICMP6 uint8 = 58
)

// EchoID is the identifier of the echo requests and replies trace sends
// (and of a quoted echo): DefaultSourcePort, as if it were a port.
const EchoID = DefaultSourcePort

// ICMP is what an ICMP or ICMPv6 flow sends: a message of any type and
// code (an echo request by default), or an error message about the packet
// About.
type ICMP struct {
	Type, Code uint8
	// About is the packet an error quotes, as the error's sender saw it
	// (nil for any other message).
	About *Header
	// SendAbout makes the trace send About first, from its source, and
	// build the error from what became of it: sent by the endpoint About
	// reached (unless Src is given) back to About's source as the endpoint
	// saw it, quoting About as it arrived there.
	SendAbout bool
}

// IsError tells whether the flow is an ICMP error message.
func (i *ICMP) IsError() bool { return i != nil && i.About != nil }

// Header is the packet an ICMP error quotes: its protocol, addresses and
// ports (the echo identifier in both ports for a quoted echo request).
type Header struct {
	Protocol uint8
	Src, Dst netip.AddrPort
}

func (h Header) String() string {
	if h.Protocol == ProtoICMP || h.Protocol == ProtoICMP6 {
		return fmt.Sprintf("%s %s -> %s", ProtoName(h.Protocol), h.Src.Addr(), h.Dst.Addr())
	}
	return fmt.Sprintf("%s %s -> %s", ProtoName(h.Protocol), h.Src, h.Dst)
}

// ProtoName is the name trace writes for an IP protocol number.
func ProtoName(p uint8) string {
	switch p {
	case 17:
		return "UDP"
	case 132:
		return "SCTP"
	case ProtoICMP:
		return "ICMP"
	case ProtoICMP6:
		return "ICMPv6"
	}
	return "TCP"
}

// ICMP types trace names (RFC 792, RFC 4443, RFC 4620): the messages that
// are not errors, and the error messages, which quote a packet (isError).
// Any other type is sent too, named by number.
var (
	icmp4Messages = map[uint8]string{8: "echo-request", 0: "echo-reply", 9: "router-advertisement", 10: "router-solicitation",
		13: "timestamp-request", 14: "timestamp-reply", 15: "information-request", 16: "information-reply", 17: "address-mask-request", 18: "address-mask-reply"}
	icmp6Messages = map[uint8]string{128: "echo-request", 129: "echo-reply", 133: "router-solicitation", 134: "router-advertisement",
		135: "neighbor-solicitation", 136: "neighbor-advertisement", 137: "redirect", 139: "node-information-query", 140: "node-information-response"}
	icmp4Errors = map[uint8]string{3: "destination-unreachable", 4: "source-quench", 5: "redirect", 6: "alternate-host-address", 11: "time-exceeded", 12: "parameter-problem"}
	icmp6Errors = map[uint8]string{1: "destination-unreachable", 2: "packet-too-big", 3: "time-exceeded", 4: "parameter-problem"}
)

// isError tells whether an ICMP (ICMPv6 with ip6) type is an error
// message, which quotes the packet it is about: the IPv4 types VPP's
// NAT44-ED and cnat read as errors, every ICMPv6 type below 128 (as
// fakevpp.ICMPErrorType).
func isError(ip6 bool, typ uint8) bool {
	if ip6 {
		return typ < 128
	}
	_, ok := icmp4Errors[typ]
	return ok
}

// ICMPTypeName names an ICMP (ICMPv6 with ip6) type and code for people:
// "echo-request", "echo-request/3", "fragmentation-needed",
// "destination-unreachable/1", "type-42/0".
func ICMPTypeName(ip6 bool, typ, code uint8) string {
	msgs, errs := icmp4Messages, icmp4Errors
	if ip6 {
		msgs, errs = icmp6Messages, icmp6Errors
	}
	if n, ok := msgs[typ]; ok {
		if code != 0 {
			n += fmt.Sprintf("/%d", code)
		}
		return n
	}
	n, ok := errs[typ]
	switch {
	case !ok:
		return fmt.Sprintf("type-%d/%d", typ, code)
	case !ip6 && typ == 3 && code == 4:
		return "fragmentation-needed"
	case !ip6 && typ == 3 && code == 3, ip6 && typ == 1 && code == 4:
		return "port-unreachable"
	case ip6 && typ == 2:
		return n
	}
	return fmt.Sprintf("%s/%d", n, code)
}

// parseICMP validates the ICMP part of a spec (proto ICMP): the type and
// code, the quoted packet of an error, and the addresses without ports.
func (s Spec) parseICMP(f Flow) (Flow, error) {
	ic := &ICMP{SendAbout: s.SendAbout}
	f.ICMP = ic
	var about Header
	if strings.TrimSpace(s.About) != "" {
		var err error
		if about, err = ParseHeader(s.About); err != nil {
			return f, fmt.Errorf("about: %w", err)
		}
		ic.About = &about
	}
	var src, dst netip.Addr
	var err error
	if s.Src != "" || !ic.SendAbout {
		if src, err = parseICMPAddr(s.Src); err != nil {
			return f, fmt.Errorf("src: %w", err)
		}
	}
	if s.Dst != "" || ic.About == nil {
		if dst, err = parseICMPAddr(s.Dst); err != nil {
			return f, fmt.Errorf("dst: %w", err)
		}
	}
	// The family: of the addresses given, which must agree.
	var family []netip.Addr
	for _, a := range []netip.Addr{src, dst, about.Src.Addr()} {
		if a.IsValid() {
			family = append(family, a)
		}
	}
	for _, a := range family[1:] {
		if a.Is4() != family[0].Is4() {
			return f, fmt.Errorf("src, dst and about mix address families (%s, %s)", family[0], a)
		}
	}
	ip6 := family[0].Is6()
	if ip6 {
		f.Protocol = ProtoICMP6
	} else if p := strings.ToUpper(strings.TrimSpace(s.Proto)); p != "ICMP" {
		return f, fmt.Errorf("proto: %s is for IPv6 addresses; ICMP to %s is proto ICMP", s.Proto, family[0])
	}
	if err := ic.parseTypeCode(s.ICMPType, s.ICMPCode, ip6); err != nil {
		return f, err
	}
	if !isError(ip6, ic.Type) {
		if ic.About != nil || ic.SendAbout {
			return f, fmt.Errorf("about, send-about: %s quotes no packet (about is for error types)", ICMPTypeName(ip6, ic.Type, ic.Code))
		}
		f.Src, f.Dst = netip.AddrPortFrom(src, EchoID), netip.AddrPortFrom(dst, EchoID)
		return f, nil
	}
	if ic.About == nil {
		return f, fmt.Errorf("about: an ICMP error quotes the packet it is about: give it as 'PROTO SRC:PORT -> DST:PORT'")
	}
	if !dst.IsValid() && !ic.SendAbout {
		dst = about.Src.Addr() // the error goes back to the packet's source
	}
	f.Src, f.Dst = netip.AddrPortFrom(src, 0), netip.AddrPortFrom(dst, 0)
	return f, nil
}

// parseTypeCode checks the type and code: 0-255 each, the echo request
// of the family by default, code 0 by default.
func (ic *ICMP) parseTypeCode(typ, code *int, ip6 bool) error {
	ic.Type = 8
	if ip6 {
		ic.Type = 128
	}
	if typ != nil {
		if *typ < 0 || *typ > 255 {
			return fmt.Errorf("icmp-type: %d is not 0-255", *typ)
		}
		ic.Type = uint8(*typ)
	}
	if code != nil {
		if *code < 0 || *code > 255 {
			return fmt.Errorf("icmp-code: %d is not 0-255", *code)
		}
		ic.Code = uint8(*code)
	}
	return nil
}

// parseICMPAddr parses the address of an ICMP packet: ICMP has no ports.
func parseICMPAddr(s string) (netip.Addr, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return netip.Addr{}, fmt.Errorf("missing address")
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		if _, perr := ParseEndpoint(s, true); perr == nil {
			return netip.Addr{}, fmt.Errorf("%q: ICMP has no ports (want an address)", s)
		}
		return netip.Addr{}, fmt.Errorf("%q is not an IP address", s)
	}
	if a.Zone() != "" {
		return netip.Addr{}, fmt.Errorf("%q: zones are not supported", s)
	}
	return a.Unmap(), nil
}

// ParseHeader parses the packet an ICMP error quotes, written as trace
// writes packets: "PROTO SRC -> DST" with PROTO TCP, UDP, SCTP or ICMP,
// SRC and DST as in a flow (the source port defaults to 40000; an ICMP
// packet, an echo request, has no ports).
func ParseHeader(s string) (Header, error) {
	const want = "want 'PROTO SRC -> DST', e.g. 'TCP 10.1.1.9:40000 -> 10.1.1.2:8080'"
	proto, rest, ok := strings.Cut(strings.TrimSpace(s), " ")
	srcS, dstS, ok2 := strings.Cut(rest, "->")
	if !ok || !ok2 {
		return Header{}, fmt.Errorf("%q: %s", s, want)
	}
	var h Header
	var err error
	if h.Protocol, err = ParseProtocol(proto); err != nil {
		return Header{}, fmt.Errorf("%q: %w", s, err)
	}
	if h.Protocol == ProtoICMP {
		src, err := parseICMPAddr(srcS)
		if err != nil {
			return Header{}, fmt.Errorf("source: %w", err)
		}
		dst, err := parseICMPAddr(dstS)
		if err != nil {
			return Header{}, fmt.Errorf("destination: %w", err)
		}
		if src.Is6() {
			h.Protocol = ProtoICMP6
		}
		h.Src, h.Dst = netip.AddrPortFrom(src, EchoID), netip.AddrPortFrom(dst, EchoID)
	} else {
		if h.Src, err = ParseEndpoint(srcS, false); err != nil {
			return Header{}, fmt.Errorf("source: %w", err)
		}
		if h.Dst, err = ParseEndpoint(dstS, true); err != nil {
			return Header{}, fmt.Errorf("destination: %w", err)
		}
	}
	if h.Src.Addr().Is4() != h.Dst.Addr().Is4() {
		return Header{}, fmt.Errorf("%q: source and destination are of different address families", s)
	}
	return h, nil
}
