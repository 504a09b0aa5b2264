package realvpp

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"net/netip"

	"github.com/vppsvc/vppsvc/fakevpp"
)

// IP protocol numbers the node builds and parses packets for.
const (
	protoICMP  uint8 = 1
	protoTCP   uint8 = 6
	protoUDP   uint8 = 17
	protoICMP6 uint8 = 58
	protoSCTP  uint8 = 132
)

// TCP flags.
const (
	tcpFIN uint8 = 0x01
	tcpSYN uint8 = 0x02
	tcpRST uint8 = 0x04
	tcpPSH uint8 = 0x08
	tcpACK uint8 = 0x10
)

// ethertypes.
const (
	etherIPv4 = 0x0800
	etherIPv6 = 0x86dd
)

type mac [6]byte

// packet is an IP packet as it enters or leaves a pg interface: the fields
// vppsvc's traces talk about. Ports carry the identifier of an ICMP
// message that is not an error.
type packet struct {
	proto              uint8
	src, dst           netip.AddrPort
	tcpFlags           uint8
	icmpType, icmpCode uint8 // ICMP and ICMPv6
	// An ICMP error (isErrorType): the packet it quotes (the quoted IP
	// header and first 8 bytes of L4).
	isErr   bool
	errFull bool // the whole offending packet is quoted
	inner   *packet
	ttl     uint8 // TTL or hop limit; 0 is written as 64
}

func (p packet) isICMP() bool { return p.proto == protoICMP || p.proto == protoICMP6 }

// packetOf is the frame model of a (normalized) fakevpp packet.
func packetOf(in fakevpp.Packet) packet {
	p := packet{proto: in.Protocol, src: in.Src, dst: in.Dst, tcpFlags: in.TCPFlags, ttl: in.TTL}
	if !p.isICMP() {
		return p
	}
	if e := in.Error; e != nil {
		p.isErr, p.icmpType, p.icmpCode, p.errFull = true, e.Type, e.Code, e.Full
		i := e.Inner
		inner := packetOf(fakevpp.Packet{Protocol: i.Protocol, Src: i.Src, Dst: i.Dst, TCPFlags: i.TCPFlags, EchoReply: i.EchoReply, ICMP: i.ICMP})
		p.inner = &inner
		return p
	}
	m := in.Message()
	p.icmpType, p.icmpCode = m.Type, m.Code
	return p
}

// public is p as a fakevpp packet entering on ingress.
func (p packet) public(ingress string) fakevpp.Packet {
	q := fakevpp.Packet{Ingress: ingress, Protocol: p.proto, Src: p.src, Dst: p.dst, TCPFlags: p.tcpFlags, TTL: p.ttl}
	switch {
	case !p.isICMP():
	case p.isErr && p.inner != nil:
		i := p.inner.public("")
		q.Error = &fakevpp.ICMPError{Type: p.icmpType, Code: p.icmpCode, Full: p.errFull,
			Inner: fakevpp.Header{Protocol: i.Protocol, Src: i.Src, Dst: i.Dst, TCPFlags: i.TCPFlags, EchoReply: i.EchoReply, ICMP: i.ICMP}}
	case !p.isErr:
		q.SetICMP(p.icmpType, p.icmpCode)
	}
	return q
}

// encodeFrame builds the Ethernet frame of p from srcMAC to dstMAC, with
// valid IPv4 header and L4 checksums: VPP's ip4-input drops a packet whose
// header checksum is wrong, and NAT rewrites checksums incrementally.
func encodeFrame(p packet, dstMAC, srcMAC mac) []byte {
	var frame []byte
	frame = append(frame, dstMAC[:]...)
	frame = append(frame, srcMAC[:]...)
	et := uint16(etherIPv6)
	if p.src.Addr().Is4() {
		et = etherIPv4
	}
	frame = binary.BigEndian.AppendUint16(frame, et)
	return append(frame, encodeIP(p)...)
}

// encodeIP builds p's IP packet with valid header and L4 checksums.
func encodeIP(p packet) []byte {
	l4 := encodeL4(p)
	src, dst := p.src.Addr(), p.dst.Addr()
	if src.Is4() {
		h := make([]byte, 20)
		h[0] = 0x45
		binary.BigEndian.PutUint16(h[2:], uint16(20+len(l4)))
		binary.BigEndian.PutUint16(h[4:], 1) // identification
		h[8] = ttlOf(p)
		h[9] = p.proto
		s4, d4 := src.As4(), dst.As4()
		copy(h[12:], s4[:])
		copy(h[16:], d4[:])
		binary.BigEndian.PutUint16(h[10:], checksum(h, 0))
		fillL4Checksum(p.proto, l4, pseudoHeader(src, dst, p.proto, len(l4)))
		return append(h, l4...)
	}
	h := make([]byte, 40)
	h[0] = 0x60
	binary.BigEndian.PutUint16(h[4:], uint16(len(l4)))
	h[6] = p.proto
	h[7] = ttlOf(p)
	s16, d16 := src.As16(), dst.As16()
	copy(h[8:], s16[:])
	copy(h[24:], d16[:])
	fillL4Checksum(p.proto, l4, pseudoHeader(src, dst, p.proto, len(l4)))
	return append(h, l4...)
}

// ttlOf is the TTL (hop limit) p is sent with: 64 unless it says.
func ttlOf(p packet) byte {
	if p.ttl == 0 {
		return fakevpp.DefaultTTL
	}
	return p.ttl
}

// quoted is what an ICMP error carries of the packet it is about: the IP
// header (its length and checksums as the original had them) and the first
// 8 bytes after it, or with full the whole packet.
func quoted(inner packet, full bool) []byte {
	b := encodeIP(inner)
	if full {
		return b
	}
	hl := 40
	if inner.src.Addr().Is4() {
		hl = 20
	}
	return b[:min(len(b), hl+8)]
}

// encodeL4 builds the L4 header (checksum left zero) with a few bytes of
// payload, so that a packet is never shorter than Ethernet's minimum.
func encodeL4(p packet) []byte {
	payload := []byte("vppsvc-trace")
	switch p.proto {
	case protoTCP:
		h := make([]byte, 20)
		binary.BigEndian.PutUint16(h[0:], p.src.Port())
		binary.BigEndian.PutUint16(h[2:], p.dst.Port())
		binary.BigEndian.PutUint32(h[4:], 1000) // sequence
		if p.tcpFlags&tcpACK != 0 {
			binary.BigEndian.PutUint32(h[8:], 2000)
		}
		h[12] = 5 << 4
		h[13] = p.tcpFlags
		binary.BigEndian.PutUint16(h[14:], 65535)
		if p.tcpFlags&tcpSYN != 0 {
			return h // a SYN carries no data
		}
		return append(h, payload...)
	case protoUDP:
		h := make([]byte, 8)
		binary.BigEndian.PutUint16(h[0:], p.src.Port())
		binary.BigEndian.PutUint16(h[2:], p.dst.Port())
		binary.BigEndian.PutUint16(h[4:], uint16(8+len(payload)))
		return append(h, payload...)
	case protoSCTP:
		// Common header and an INIT chunk (RFC 9260); the CRC32c goes in
		// once the packet is complete.
		h := make([]byte, 12, 32)
		binary.BigEndian.PutUint16(h[0:], p.src.Port())
		binary.BigEndian.PutUint16(h[2:], p.dst.Port())
		chunk := make([]byte, 20)
		chunk[0] = 1                                      // INIT
		binary.BigEndian.PutUint16(chunk[2:], 20)         // length
		binary.BigEndian.PutUint32(chunk[4:], 0x76707376) // initiate tag
		binary.BigEndian.PutUint32(chunk[8:], 65535)      // a_rwnd
		binary.BigEndian.PutUint16(chunk[12:], 1)         // outbound streams
		binary.BigEndian.PutUint16(chunk[14:], 1)         // inbound streams
		binary.BigEndian.PutUint32(chunk[16:], 1)         // initial TSN
		return append(h, chunk...)
	case protoICMP, protoICMP6:
		h := make([]byte, 8)
		h[0], h[1] = p.icmpType, p.icmpCode
		if p.isErr && p.inner != nil {
			return append(h, quoted(*p.inner, p.errFull)...)
		}
		binary.BigEndian.PutUint16(h[4:], p.src.Port()) // identifier
		binary.BigEndian.PutUint16(h[6:], 1)            // sequence
		return append(h, payload...)
	}
	return payload
}

// pseudoHeader is the checksum seed of TCP, UDP and ICMPv6 (ICMPv4 has none).
func pseudoHeader(src, dst netip.Addr, proto uint8, l4len int) uint32 {
	if proto == protoICMP {
		return 0
	}
	var b []byte
	b = append(b, src.AsSlice()...)
	b = append(b, dst.AsSlice()...)
	if src.Is4() {
		b = append(b, 0, proto)
		b = binary.BigEndian.AppendUint16(b, uint16(l4len))
	} else {
		b = binary.BigEndian.AppendUint32(b, uint32(l4len))
		b = append(b, 0, 0, 0, proto)
	}
	return sum16(b, 0)
}

func fillL4Checksum(proto uint8, l4 []byte, seed uint32) {
	if proto == protoSCTP {
		// SCTP's CRC32c covers the SCTP packet alone (no pseudo header),
		// with the checksum field zero; it is sent little-endian, as
		// Linux and VPP (vnet/sctp) write it.
		binary.LittleEndian.PutUint32(l4[8:], crc32.Checksum(l4, crc32.MakeTable(crc32.Castagnoli)))
		return
	}
	var off int
	switch proto {
	case protoTCP:
		off = 16
	case protoUDP:
		off = 6
	case protoICMP, protoICMP6:
		off = 2
	default:
		return
	}
	c := checksum(l4, seed)
	if proto == protoUDP && c == 0 {
		c = 0xffff
	}
	binary.BigEndian.PutUint16(l4[off:], c)
}

func sum16(b []byte, s uint32) uint32 {
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		s += uint32(b[len(b)-1]) << 8
	}
	return s
}

func checksum(b []byte, seed uint32) uint16 {
	s := sum16(b, seed)
	for s>>16 != 0 {
		s = s&0xffff + s>>16
	}
	return ^uint16(s)
}

var errNotIP = errors.New("not an IP packet")

// decodeFrame parses an Ethernet frame back into a packet. Frames that are
// not IPv4 or IPv6 (ARP) and truncated frames return errNotIP.
func decodeFrame(frame []byte) (packet, error) {
	if len(frame) < 14 {
		return packet{}, errNotIP
	}
	et := binary.BigEndian.Uint16(frame[12:])
	b := frame[14:]
	var p packet
	var l4 []byte
	switch et {
	case etherIPv4:
		if len(b) < 20 || b[0]>>4 != 4 {
			return packet{}, errNotIP
		}
		ihl := int(b[0]&0x0f) * 4
		if len(b) < ihl {
			return packet{}, errNotIP
		}
		p.proto, p.ttl = b[9], b[8]
		s, _ := netip.AddrFromSlice(b[12:16])
		d, _ := netip.AddrFromSlice(b[16:20])
		p.src, p.dst = netip.AddrPortFrom(s, 0), netip.AddrPortFrom(d, 0)
		l4 = b[ihl:]
	case etherIPv6:
		if len(b) < 40 || b[0]>>4 != 6 {
			return packet{}, errNotIP
		}
		p.proto, p.ttl = b[6], b[7]
		s, _ := netip.AddrFromSlice(b[8:24])
		d, _ := netip.AddrFromSlice(b[24:40])
		p.src, p.dst = netip.AddrPortFrom(s, 0), netip.AddrPortFrom(d, 0)
		l4 = b[40:]
	default:
		return packet{}, errNotIP
	}
	switch p.proto {
	case protoTCP, protoUDP, protoSCTP:
		if len(l4) < 4 {
			return p, nil
		}
		p.src = netip.AddrPortFrom(p.src.Addr(), binary.BigEndian.Uint16(l4[0:]))
		p.dst = netip.AddrPortFrom(p.dst.Addr(), binary.BigEndian.Uint16(l4[2:]))
		if p.proto == protoTCP && len(l4) >= 14 {
			p.tcpFlags = l4[13]
		}
	case protoICMP, protoICMP6:
		if len(l4) < 8 {
			return p, nil
		}
		p.icmpType, p.icmpCode = l4[0], l4[1]
		if fakevpp.ICMPErrorType(p.proto, p.icmpType) {
			p.isErr = true
			if in, ok := decodeQuoted(p.proto, l4[8:]); ok {
				p.inner = &in
				hl := 40
				if p.proto == protoICMP {
					hl = 20
				}
				p.errFull = len(l4[8:]) > hl+8
				if !p.errFull {
					in.tcpFlags = 0
				}
			}
			return p, nil
		}
		id := binary.BigEndian.Uint16(l4[4:])
		p.src = netip.AddrPortFrom(p.src.Addr(), id)
		p.dst = netip.AddrPortFrom(p.dst.Addr(), id)
	}
	return p, nil
}

// decodeQuoted parses the packet an ICMP error quotes: its IP header and
// the ports (or echo identifier and type) in the 8 bytes after it.
func decodeQuoted(proto uint8, b []byte) (packet, bool) {
	et := uint16(etherIPv6)
	if proto == protoICMP {
		et = etherIPv4
	}
	frame := binary.BigEndian.AppendUint16(make([]byte, 12), et)
	p, err := decodeFrame(append(frame, b...))
	return p, err == nil
}
