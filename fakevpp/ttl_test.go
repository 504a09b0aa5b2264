package fakevpp

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The time exceeded comes from the receiving interface's address that
// shares the longest prefix with the packet's source (the first on a
// tie), from the donor's addresses for an unnumbered interface, and is not
// sent from an interface without an address of the family.
func TestTimeExceededSourceAddress(t *testing.T) {
	v := New()
	v.AddInterface("up", netip.MustParsePrefix("192.168.16.1/24"), netip.MustParsePrefix("10.9.0.1/16"), netip.MustParsePrefix("fd00:16::1/64"))
	v.AddInterface("host", netip.MustParsePrefix("172.30.1.1/24"))
	v.AddInterface("tap")
	require.True(t, v.SetUnnumbered("tap", "host"))
	v.AddRoute(netip.MustParsePrefix("0.0.0.0/0"), "up")
	v.AddRoute(netip.MustParsePrefix("::/0"), "up")
	v.AddRoute(netip.MustParsePrefix("10.1.1.0/24"), "tap")
	v.AddRoute(netip.MustParsePrefix("10.9.0.0/16"), "up")
	v.AddRoute(netip.MustParsePrefix("198.51.100.0/24"), "up")
	for _, c := range []struct {
		in, src, dst string
		from, via    string // "" when no error leaves
	}{
		{"up", "10.9.5.5:1", "10.1.1.2:80", "10.9.0.1", "up"},
		{"up", "198.51.100.7:1", "10.1.1.2:80", "192.168.16.1", "up"},
		{"tap", "10.1.1.2:1", "8.8.8.8:80", "172.30.1.1", "tap"},
		{"tap", "[fd00:1:1::2]:1", "[2001:db8::8]:80", "", ""},
	} {
		tr := v.Trace(Packet{Ingress: c.in, Protocol: protoUDP, Src: netip.MustParseAddrPort(c.src), Dst: netip.MustParseAddrPort(c.dst), TTL: 1})
		assert.Equal(t, Drop, tr.Verdict, c.src)
		assert.Contains(t, tr.Reason, "-rewrite: TTL 1: time exceeded", c.src)
		require.NotNil(t, tr.ICMP, c.src)
		if c.from == "" {
			assert.NotEqual(t, Forward, tr.ICMP.Verdict, c.src)
			continue
		}
		assert.Equal(t, Forward, tr.ICMP.Verdict, c.src)
		assert.Equal(t, c.via, tr.ICMP.Egress, c.src)
		assert.Equal(t, c.from, tr.ICMP.Out.Src.Addr().String(), c.src)
		assert.Equal(t, netip.MustParseAddrPort(c.src).Addr(), tr.ICMP.Out.Dst.Addr(), c.src)
		require.NotNil(t, tr.ICMP.Out.Error, c.src)
		assert.Equal(t, netip.MustParseAddrPort(c.dst), tr.ICMP.Out.Error.Inner.Dst, "quotes the packet")
	}
	// TTL 2 leaves with 1; no TTL means 64, leaving with 63.
	for ttl, want := range map[uint8]uint8{2: 1, 0: 63} {
		tr := v.Trace(Packet{Ingress: "up", Protocol: protoUDP, Src: netip.MustParseAddrPort("198.51.100.7:1"), Dst: netip.MustParseAddrPort("10.1.1.2:80"), TTL: ttl})
		assert.Equal(t, Forward, tr.Verdict)
		assert.Equal(t, want, tr.Out.TTL)
		assert.Nil(t, tr.ICMP)
	}
}
