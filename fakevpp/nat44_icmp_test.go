package fakevpp

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.fd.io/govpp/binapi/nat_types"
)

// A router on the way sends "TTL exceeded" about a source-NATed packet to
// the pool address: NAT44-ED finds the session through the quoted header
// and delivers the error to the pod with the quoted header as the pod sent
// it; the router's own address stays the outer source.
func TestICMPErrorFollowsDynamicSession(t *testing.T) {
	e := newEnv(t)
	e.standardNAT()
	tr := e.v.Trace(udpPkt("tap0", "10.1.1.5:40000", "8.8.8.8:53"))
	require.Equal(t, Forward, tr.Verdict, steps(tr))
	errPkt := ICMPErrorAbout("eth0", addr("192.168.0.254"), ICMP4TimeExceeded, ICMPTTLExceededTransit, tr.Out)
	got := e.v.Trace(errPkt)
	require.Equal(t, Forward, got.Verdict, steps(got))
	assert.Equal(t, "tap0", got.Egress)
	assert.Equal(t, "192.168.0.254:0", got.Out.Src.String())
	assert.Equal(t, "10.1.1.5:0", got.Out.Dst.String())
	require.NotNil(t, got.Out.Error)
	assert.Equal(t, "10.1.1.5:40000", got.Out.Error.Inner.Src.String())
	assert.Equal(t, "8.8.8.8:53", got.Out.Error.Inner.Dst.String())
	assert.False(t, got.ReplyOK, "nobody answers an error")

	// The pod answers an inbound flow with "port unreachable": the outer
	// source becomes the mapping's external address, the quoted header
	// the packet as the client sent it.
	e.ok(e.static(true, "10.1.1.6:8080", "1.1.1.1:80", udp, nat_types.NAT_IS_OUT2IN_ONLY))
	in := e.v.Trace(udpPkt("eth0", "8.8.4.4:5353", "1.1.1.1:80"))
	require.Equal(t, Forward, in.Verdict, steps(in))
	unreach := ICMPErrorAbout(in.Egress, addr("10.1.1.6"), ICMP4DestUnreach, ICMP4PortUnreachable, in.Out)
	back := e.v.Trace(unreach)
	require.Equal(t, Forward, back.Verdict, steps(back))
	assert.Equal(t, "1.1.1.1", back.Out.Src.Addr().String())
	assert.Equal(t, "8.8.4.4", back.Out.Dst.Addr().String())
	assert.Equal(t, "8.8.4.4:5353", back.Out.Error.Inner.Src.String())
	assert.Equal(t, "1.1.1.1:80", back.Out.Error.Inner.Dst.String())
}

// An error that belongs to no session is not translated: from outside it
// is dropped ("no translation").
func TestICMPErrorWithoutSessionDropped(t *testing.T) {
	e := newEnv(t)
	e.standardNAT()
	about := tcpSyn("tap0", "1.1.1.1:40000", "8.8.8.8:443")
	got := e.v.Trace(ICMPErrorAbout("eth0", addr("192.168.0.254"), ICMP4TimeExceeded, 0, about))
	requireDrop(t, got, "no translation")
}

// GRE from a pod is source-NATed address only to a pool address; the
// reply finds the session by addresses alone.
func TestGREDynamicAddressOnly(t *testing.T) {
	e := newEnv(t)
	e.standardNAT()
	tr := e.v.Trace(Packet{Ingress: "tap0", Protocol: 47, Src: ap("10.1.1.5:0"), Dst: ap("8.8.8.8:0")})
	requireForward(t, tr, "eth0", "1.1.1.1:0", "8.8.8.8:0")
	assert.True(t, tr.ReplyOK, steps(tr))
	// From outside, GRE to an address-only mapping's external address finds
	// no mapping: address-only mappings are stored with protocol 0.
	e.ok(e.static(true, "10.1.1.7:0", "1.1.1.7:0", 0, nat_types.NAT_IS_ADDR_ONLY))
	got := e.v.Trace(Packet{Ingress: "eth0", Protocol: 47, Src: ap("8.8.8.8:0"), Dst: ap("1.1.1.7:0")})
	requireDrop(t, got, "no translation")
}

// An error quoting 8 bytes of TCP fails NAT44-ED's translation (it wants
// the whole TCP header): dropped from outside with the session kept,
// dropped from inside with the session deleted (as a real VPP 25.10 did).
func TestICMPErrorQuotingTCPFails(t *testing.T) {
	e := newEnv(t)
	e.standardNAT()
	tr := e.v.Trace(tcpSyn("tap0", "10.1.1.5:40000", "8.8.8.8:443"))
	require.Equal(t, Forward, tr.Verdict, steps(tr))
	requireDrop(t, e.v.Trace(ICMPErrorAbout("eth0", addr("192.168.0.254"), ICMP4TimeExceeded, 0, tr.Out)), "translation failed")
	require.Len(t, e.sessions("10.1.1.5"), 1)
	reply := Packet{Ingress: "eth0", Protocol: tcp, Src: ap("8.8.8.8:443"), Dst: ap("10.1.1.5:40000"), TCPFlags: tcpSYN | tcpACK}
	full := ICMPErrorAbout("tap0", addr("10.1.1.5"), ICMP4DestUnreach, ICMP4PortUnreachable, reply)
	full.Error.Full = true
	got := e.v.Trace(full)
	require.Equal(t, Forward, got.Verdict, "quoting the whole packet: translated\n%s", steps(got))
	assert.Equal(t, "1.1.1.1:40000", got.Out.Error.Inner.Dst.String())
	assert.Equal(t, uint8(tcpSYN|tcpACK), got.Out.Error.Inner.TCPFlags)
	requireDrop(t, e.v.Trace(ICMPErrorAbout("tap0", addr("10.1.1.5"), ICMP4DestUnreach, ICMP4PortUnreachable, reply)), "translation failed")
	assert.Empty(t, e.sessions("10.1.1.5"))
}
