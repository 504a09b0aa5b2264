package flows

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func intp(i int) *int { return &i }

func TestParseICMPSpec(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec Spec
		// want: protocol, src, dst, type, code and the quoted header
		// ("" for an echo), when err is empty.
		proto      uint8
		src, dst   string
		typ, code  uint8
		about, err string
	}{
		{name: "echo v4", spec: Spec{Src: "10.1.1.9", Dst: "10.1.2.2", Proto: "icmp"},
			proto: ProtoICMP, src: "10.1.1.9:40000", dst: "10.1.2.2:40000", typ: 8},
		{name: "echo v6 as ICMP", spec: Spec{Src: "fd00::1", Dst: "fd00::2", Proto: "ICMP"},
			proto: ProtoICMP6, src: "[fd00::1]:40000", dst: "[fd00::2]:40000", typ: 128},
		{name: "echo reply v6 as ICMPv6", spec: Spec{Src: "fd00::1", Dst: "fd00::2", Proto: "ICMPv6", ICMPType: intp(129)},
			proto: ProtoICMP6, src: "[fd00::1]:40000", dst: "[fd00::2]:40000", typ: 129},
		{name: "frag needed, dst defaults to the quoted source", spec: Spec{Src: "10.1.2.2", Proto: "ICMP", ICMPType: intp(3), ICMPCode: intp(4), About: "TCP 10.1.1.9:41000 -> 10.1.2.2:8080"},
			proto: ProtoICMP, src: "10.1.2.2:0", dst: "10.1.1.9:0", typ: 3, code: 4, about: "TCP 10.1.1.9:41000 -> 10.1.2.2:8080"},
		{name: "packet too big, send-about, nothing else", spec: Spec{Proto: "ICMP", ICMPType: intp(2), About: "UDP fd00::9 -> [fd00:96::1]:53", SendAbout: true},
			proto: ProtoICMP6, typ: 2, about: "UDP [fd00::9]:40000 -> [fd00:96::1]:53"},
		{name: "quoted echo", spec: Spec{Src: "192.168.16.254", Proto: "ICMP", ICMPType: intp(11), About: "ICMP 10.1.1.9 -> 8.8.8.8"},
			proto: ProtoICMP, src: "192.168.16.254:0", dst: "10.1.1.9:0", typ: 11, about: "ICMP 10.1.1.9 -> 8.8.8.8"},
		{name: "port on an ICMP address", spec: Spec{Src: "10.1.1.9", Dst: "10.1.2.2:80", Proto: "ICMP"}, err: `dst: "10.1.2.2:80": ICMP has no ports (want an address)`},
		{name: "error type without about", spec: Spec{Src: "10.1.1.9", Dst: "10.1.2.2", Proto: "ICMP", ICMPType: intp(3)}, err: "about: an ICMP error quotes the packet it is about"},
		{name: "echo with about", spec: Spec{Src: "10.1.1.9", Dst: "10.1.2.2", Proto: "ICMP", About: "UDP 10.1.1.9 -> 10.1.2.2:53"}, err: "echo-request quotes no packet"},
		{name: "echo request with a code", spec: Spec{Src: "10.1.1.9", Dst: "10.1.2.2", Proto: "ICMP", ICMPType: intp(8), ICMPCode: intp(3)},
			proto: ProtoICMP, src: "10.1.1.9:40000", dst: "10.1.2.2:40000", typ: 8, code: 3},
		{name: "timestamp request", spec: Spec{Src: "10.1.1.9", Dst: "10.1.2.2", Proto: "ICMP", ICMPType: intp(13)},
			proto: ProtoICMP, src: "10.1.1.9:40000", dst: "10.1.2.2:40000", typ: 13},
		{name: "router solicitation", spec: Spec{Src: "fd00::1", Dst: "fd00::2", Proto: "ICMPv6", ICMPType: intp(133)},
			proto: ProtoICMP6, src: "[fd00::1]:40000", dst: "[fd00::2]:40000", typ: 133},
		{name: "an unassigned IPv4 type", spec: Spec{Src: "10.1.1.9", Dst: "10.1.2.2", Proto: "ICMP", ICMPType: intp(128), ICMPCode: intp(1)},
			proto: ProtoICMP, src: "10.1.1.9:40000", dst: "10.1.2.2:40000", typ: 128, code: 1},
		{name: "timestamp with about", spec: Spec{Src: "10.1.1.9", Dst: "10.1.2.2", Proto: "ICMP", ICMPType: intp(13), About: "UDP 10.1.1.9 -> 10.1.2.2:53"}, err: "timestamp-request quotes no packet"},
		{name: "ICMPv6 error type without about", spec: Spec{Src: "fd00::1", Dst: "fd00::2", Proto: "ICMPv6", ICMPType: intp(100)}, err: "about: an ICMP error quotes the packet"},
		{name: "type out of range", spec: Spec{Src: "10.1.1.9", Dst: "10.1.2.2", Proto: "ICMP", ICMPType: intp(256)}, err: "icmp-type: 256 is not 0-255"},
		{name: "code out of range", spec: Spec{Src: "10.1.1.9", Dst: "10.1.2.2", Proto: "ICMP", ICMPCode: intp(256)}, err: "icmp-code: 256 is not 0-255"},
		{name: "ICMPv6 on IPv4", spec: Spec{Src: "10.1.1.9", Dst: "10.1.2.2", Proto: "ICMPv6"}, err: "proto: ICMPv6 is for IPv6 addresses"},
		{name: "mixed families", spec: Spec{Src: "fd00::1", Proto: "ICMP", ICMPType: intp(2), About: "TCP 10.1.1.9 -> 10.1.2.2:80"}, err: "mix address families"},
		{name: "about without arrow", spec: Spec{Src: "10.1.2.2", Proto: "ICMP", ICMPType: intp(3), About: "TCP 10.1.1.9 10.1.2.2:80"}, err: "want 'PROTO SRC -> DST'"},
		{name: "about without a destination port", spec: Spec{Src: "10.1.2.2", Proto: "ICMP", ICMPType: intp(3), About: "TCP 10.1.1.9 -> 10.1.2.2"}, err: "about: destination: \"10.1.2.2\" has no port"},
		{name: "icmp fields on TCP", spec: Spec{Src: "10.1.1.9", Dst: "10.1.2.2:80", ICMPType: intp(3)}, err: "need proto ICMP"},
		{name: "send-about without about", spec: Spec{Src: "10.1.1.9", Dst: "10.1.2.2", Proto: "ICMP", SendAbout: true}, err: "echo-request quotes no packet"},
	} {
		f, err := tc.spec.Parse()
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, tc.name)
			continue
		}
		require.NoError(t, err, tc.name)
		require.NotNil(t, f.ICMP, tc.name)
		assert.Equal(t, tc.proto, f.Protocol, tc.name)
		for _, ep := range []struct {
			got  netip.AddrPort
			want string
		}{{f.Src, tc.src}, {f.Dst, tc.dst}} {
			if ep.want == "" {
				assert.False(t, ep.got.Addr().IsValid(), "%s: not given, filled in by the trace", tc.name)
			} else {
				assert.Equal(t, ep.want, ep.got.String(), tc.name)
			}
		}
		assert.Equal(t, tc.typ, f.ICMP.Type, tc.name)
		assert.Equal(t, tc.code, f.ICMP.Code, tc.name)
		assert.Equal(t, tc.about != "", f.ICMP.IsError(), tc.name)
		if tc.about != "" {
			assert.Equal(t, tc.about, f.ICMP.About.String(), tc.name)
		}
	}
}

// The ICMP fields of a flows file, and their type errors.
func TestParseFileICMPFields(t *testing.T) {
	got, err := ParseFile([]byte(`
- {name: pmtu, proto: ICMP, icmp-type: 3, icmp-code: 4, about: "TCP 10.1.1.9:41000 -> 10.96.0.10:80", send-about: true}
- {name: bad-type, proto: ICMP, src: 10.1.1.9, dst: 10.1.2.2, icmp-type: "3"}
- {name: bad-send, proto: ICMP, icmp-type: 3, about: "TCP 10.1.1.9 -> 10.96.0.10:80", send-about: "yes"}
`))
	require.NoError(t, err)
	require.Len(t, got, 3)
	require.NoError(t, got[0].Err)
	assert.True(t, got[0].Flow.ICMP.SendAbout)
	assert.Equal(t, "TCP 10.1.1.9:41000 -> 10.96.0.10:80", got[0].Flow.ICMP.About.String())
	assert.EqualError(t, got[1].Err, "icmp-type: want a number, got a string")
	assert.EqualError(t, got[2].Err, "send-about: want true or false, got a string")
}

func TestICMPTypeName(t *testing.T) {
	for _, tc := range []struct {
		ip6       bool
		typ, code uint8
		want      string
	}{
		{false, 8, 0, "echo-request"}, {false, 3, 4, "fragmentation-needed"}, {false, 3, 3, "port-unreachable"},
		{false, 3, 1, "destination-unreachable/1"}, {false, 11, 0, "time-exceeded/0"},
		{true, 2, 0, "packet-too-big"}, {true, 1, 4, "port-unreachable"}, {true, 129, 0, "echo-reply"}, {true, 200, 1, "type-200/1"},
	} {
		assert.Equal(t, tc.want, ICMPTypeName(tc.ip6, tc.typ, tc.code), "%+v", tc)
	}
}

func TestParseTTL(t *testing.T) {
	for _, tc := range []struct {
		ttl  *int
		want uint8
		err  string
	}{
		{nil, 0, ""}, {intp(1), 1, ""}, {intp(255), 255, ""},
		{intp(0), 0, "ttl: 0 is not 1-255"}, {intp(256), 0, "ttl: 256 is not 1-255"},
	} {
		f, err := Spec{Src: "10.1.1.9", Dst: "10.96.0.10:80", TTL: tc.ttl}.Parse()
		if tc.err != "" {
			assert.EqualError(t, err, tc.err)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, tc.want, f.TTL)
	}
	got, err := ParseFile([]byte("- {src: 10.1.1.9, dst: \"10.96.0.10:80\", ttl: 1}\n- {src: 10.1.1.9, dst: \"10.96.0.10:80\", ttl: one}\n"))
	require.NoError(t, err)
	assert.Equal(t, uint8(1), got[0].Flow.TTL)
	assert.EqualError(t, got[1].Err, "ttl: want a number, got a string")
}
