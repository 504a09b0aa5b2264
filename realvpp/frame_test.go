package realvpp

import (
	"net/netip"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/vppsvc/vppsvc/fakevpp"
)

func TestFrameRoundTrip(t *testing.T) {
	for _, p := range []packet{
		{proto: protoTCP, src: netip.MustParseAddrPort("10.1.1.9:40001"), dst: netip.MustParseAddrPort("10.96.0.10:80"), tcpFlags: tcpSYN},
		{proto: protoTCP, src: netip.MustParseAddrPort("10.1.1.9:40001"), dst: netip.MustParseAddrPort("10.96.0.10:80"), tcpFlags: tcpACK | tcpPSH},
		{proto: protoUDP, src: netip.MustParseAddrPort("[fd00:1:1::9]:53000"), dst: netip.MustParseAddrPort("[fd00:96::a]:53")},
		{proto: protoICMP, src: netip.MustParseAddrPort("10.1.1.9:7"), dst: netip.MustParseAddrPort("10.96.0.10:7"), icmpType: 8},
		{proto: protoICMP, src: netip.MustParseAddrPort("10.1.1.9:7"), dst: netip.MustParseAddrPort("10.96.0.10:7"), icmpType: 8, icmpCode: 3},
		{proto: protoICMP, src: netip.MustParseAddrPort("10.1.1.9:7"), dst: netip.MustParseAddrPort("10.96.0.10:7"), icmpType: 13},
		{proto: protoICMP6, src: netip.MustParseAddrPort("[fd00:1:1::9]:9"), dst: netip.MustParseAddrPort("[fd00:96::a]:9"), icmpType: 129},
		{proto: protoICMP6, src: netip.MustParseAddrPort("[fd00:1:1::9]:9"), dst: netip.MustParseAddrPort("[fd00:96::a]:9"), icmpType: 133},
	} {
		f := encodeFrame(p, mac{2, 0, 0, 0, 0, 1}, mac{2, 0, 0, 0, 0, 2})
		got, err := decodeFrame(f)
		p.ttl = ttlOf(p) // sent with 64 when it gives none (TestFrameTTL)
		if err != nil || got != p {
			t.Errorf("%+v: decoded %+v, %v", p, got, err)
		}
	}
}

// VPP's ip4-input drops packets whose header checksum is wrong, and NAT
// rewrites L4 checksums incrementally: both must verify (sum to 0xffff).
func TestFrameChecksumsVerify(t *testing.T) {
	p := packet{proto: protoTCP, src: netip.MustParseAddrPort("10.1.1.9:40001"), dst: netip.MustParseAddrPort("10.96.0.10:80"), tcpFlags: tcpSYN}
	f := encodeFrame(p, mac{}, mac{})
	ip := f[14:34]
	if checksum(ip, 0) != 0 {
		t.Errorf("IPv4 header checksum does not verify")
	}
	l4 := f[34:]
	if checksum(l4, pseudoHeader(p.src.Addr(), p.dst.Addr(), p.proto, len(l4))) != 0 {
		t.Errorf("TCP checksum does not verify")
	}
	p6 := packet{proto: protoUDP, src: netip.MustParseAddrPort("[fd00::1]:1"), dst: netip.MustParseAddrPort("[fd00::2]:2")}
	f6 := encodeFrame(p6, mac{}, mac{})
	l4 = f6[54:]
	if checksum(l4, pseudoHeader(p6.src.Addr(), p6.dst.Addr(), p6.proto, len(l4))) != 0 {
		t.Errorf("UDP/IPv6 checksum does not verify")
	}
}

func TestDecodeFrameRejectsARPAndRunts(t *testing.T) {
	arp := make([]byte, 42)
	arp[12], arp[13] = 0x08, 0x06
	for _, f := range [][]byte{nil, {1, 2, 3}, arp} {
		if _, err := decodeFrame(f); err == nil {
			t.Errorf("%x decoded", f)
		}
	}
}

func TestPcapRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.pcap")
	frames := [][]byte{{1, 2, 3, 4}, make([]byte, 60)}
	if err := writePcap(path, frames...); err != nil {
		t.Fatal(err)
	}
	got, err := readPcap(path)
	if err != nil || len(got) != 2 || len(got[0]) != 4 || len(got[1]) != 60 {
		t.Fatalf("read %d frames, %v", len(got), err)
	}
	if none, err := readPcap(filepath.Join(t.TempDir(), "missing.pcap")); none != nil || err != nil {
		t.Fatalf("missing capture: %v, %v", none, err)
	}
}

func TestDropReasonAndSteps(t *testing.T) {
	tr := `Packet 1

00:00:01:123456: pg-input
  stream vppsvc3, 54 bytes, sw_if_index 1
00:00:01:123470: ethernet-input
  IP4: 02:fe:00:00:00:01 -> 02:fe:00:00:00:02
00:00:01:123480: acl-plugin-in-ip4-fa
  acl-plugin: lc_index: 0, sw_if_index 1, next index 0, action: 0, match: acl 3 rule 0 trace_bits 00000000
00:00:01:123490: error-drop
  rx:uplink0
00:00:01:123495: drop
  acl-plugin-in-ip4-fa: ACL deny packets
`
	if got := dropReason(tr); got != "vpp acl-plugin-in-ip4-fa (acl-plugin-in-ip4-fa: ACL deny packets)" {
		t.Errorf("reason %q", got)
	}
	cnat := "00:00:01:1: ip6-lookup\n  fib 0\n00:00:01:2: ip6-cnat-tx\n  session not found\n00:00:01:3: ip6-drop\n  fib:0\n00:00:01:4: error-drop\n  rx:tap9\n00:00:01:5: drop\n  acl-plugin-in-ip6-fa: ACL permit packets\n"
	if got := dropReason(cnat); got != "vpp ip6-cnat-tx → ip6-drop (acl-plugin-in-ip6-fa: ACL permit packets)" {
		t.Errorf("cnat drop reason %q", got)
	}
	steps := summarise(tr)
	if len(steps) != 5 || steps[0] != "vpp pg-input: stream vppsvc3, 54 bytes, sw_if_index 1" {
		t.Errorf("steps %q", steps)
	}
}

func TestNextHop(t *testing.T) {
	up := []netip.Prefix{netip.MustParsePrefix("192.168.16.1/24"), netip.MustParsePrefix("fd00:16::1/64")}
	for _, c := range []struct{ dst, want string }{
		{"10.1.1.2/32", "10.1.1.2"},
		{"0.0.0.0/0", "192.168.16.254"},
		{"::/0", "fd00:16::ffff:ffff:ffff:fffe"},
	} {
		if got := nextHop(netip.MustParsePrefix(c.dst), up); got.String() != c.want {
			t.Errorf("%s: %s, want %s", c.dst, got, c.want)
		}
	}
	if got := nextHop(netip.MustParsePrefix("10.1.2.0/24"), nil); got.String() != "10.1.2.1" {
		t.Errorf("no address: %s", got)
	}
}

func TestParseExcludedPrefixes(t *testing.T) {
	out := "Source NAT\n  ip4: 192.168.16.1;0\n  ip6: fd00:16::1;0\nExcluded prefixes:\n  IPv4:\n    10.1.0.0/16\n  IPv6:\n    fd00:1::/48\n"
	got := parseExcludedPrefixes(out)
	if len(got) != 2 || got[0].String() != "10.1.0.0/16" || got[1].String() != "fd00:1::/48" {
		t.Fatalf("%v", got)
	}
}

// An ICMP error carries the quoted packet's IP header and 8 bytes of L4;
// decoding gives back its type, code and the quoted addresses and ports,
// and the outer ICMP checksum verifies (NAT44-ED drops an error whose
// checksum is wrong).
func TestFrameICMPErrorRoundTrip(t *testing.T) {
	inner := packet{proto: protoTCP, src: netip.MustParseAddrPort("192.168.16.1:40000"), dst: netip.MustParseAddrPort("8.8.8.8:443")} // the quoted 8 bytes end before the flags
	for _, p := range []packet{
		{proto: protoICMP, src: netip.MustParseAddrPort("192.168.16.254:0"), dst: netip.MustParseAddrPort("192.168.16.1:0"), isErr: true, icmpType: 11, inner: &inner},
		{proto: protoICMP, src: netip.MustParseAddrPort("192.168.16.254:0"), dst: netip.MustParseAddrPort("192.168.16.1:0"), isErr: true, icmpType: 11, errFull: true,
			inner: &packet{proto: protoTCP, src: netip.MustParseAddrPort("192.168.16.1:40000"), dst: netip.MustParseAddrPort("8.8.8.8:443"), tcpFlags: tcpSYN}},
		{proto: protoICMP6, src: netip.MustParseAddrPort("[fd00:16::fe]:0"), dst: netip.MustParseAddrPort("[fd00:16::1]:0"), isErr: true, icmpType: 1, icmpCode: 4,
			inner: &packet{proto: protoUDP, src: netip.MustParseAddrPort("[fd00:16::1]:5353"), dst: netip.MustParseAddrPort("[2001:db8::8]:53")}},
	} {
		f := encodeFrame(p, mac{}, mac{})
		got, err := decodeFrame(f)
		want := *p.inner
		want.ttl = ttlOf(want) // sent with 64 when it gives none
		if err != nil || !got.isErr || got.icmpType != p.icmpType || got.icmpCode != p.icmpCode || got.inner == nil || *got.inner != want || got.src != p.src || got.dst != p.dst {
			t.Errorf("%+v: decoded %+v (inner %+v), %v", p, got, got.inner, err)
		}
		if p.proto == protoICMP {
			if l4 := f[34:]; checksum(l4, 0) != 0 {
				t.Errorf("ICMP checksum does not verify")
			}
		}
	}
}

// The TTL (hop limit) is sent as given, 64 when the packet gives none, and
// decoded back.
func TestFrameTTL(t *testing.T) {
	for _, c := range []struct {
		src, dst  string
		ttl, want uint8
	}{
		{"10.1.1.2:40000", "8.8.8.8:443", 0, 64}, {"10.1.1.2:40000", "8.8.8.8:443", 1, 1},
		{"[fd00::2]:40000", "[2001:db8::8]:443", 0, 64}, {"[fd00::2]:40000", "[2001:db8::8]:443", 2, 2},
	} {
		p := packet{proto: protoUDP, src: netip.MustParseAddrPort(c.src), dst: netip.MustParseAddrPort(c.dst), ttl: c.ttl}
		got, err := decodeFrame(encodeFrame(p, mac{}, mac{}))
		if err != nil || got.ttl != c.want {
			t.Errorf("%s TTL %d: decoded TTL %d, %v; want %d", c.src, c.ttl, got.ttl, err, c.want)
		}
	}
}

// A fakevpp packet of any ICMP type and code goes into a frame and comes
// back in the form fakevpp reports it (an echo with code 0 by EchoReply).
func TestFrameICMPMessagesAsFakevppReportsThem(t *testing.T) {
	for _, m := range []struct{ proto, typ, code uint8 }{
		{protoICMP, 8, 0}, {protoICMP, 0, 0}, {protoICMP, 8, 3}, {protoICMP, 0, 7}, {protoICMP, 13, 0}, {protoICMP, 17, 1},
		{protoICMP6, 128, 0}, {protoICMP6, 129, 5}, {protoICMP6, 139, 0}, {protoICMP6, 133, 0},
	} {
		src, dst := "10.1.1.9:7", "10.96.0.10:7"
		if m.proto == protoICMP6 {
			src, dst = "[fd00:1:1::9]:7", "[fd00:96::a]:7"
		}
		in := fakevpp.Packet{Ingress: "pg0", Protocol: m.proto, Src: netip.MustParseAddrPort(src), Dst: netip.MustParseAddrPort(dst)}
		in.SetICMP(m.typ, m.code)
		in = in.Normalized()
		got, err := decodeFrame(encodeFrame(packetOf(in), mac{}, mac{}))
		if out := got.public("pg0"); err != nil || !reflect.DeepEqual(out, in) {
			t.Errorf("%+v: %s came back as %s (%+v), %v", m, in, out, out.ICMP, err)
		}
	}
}
