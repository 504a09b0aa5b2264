package fakevpp

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.fd.io/govpp/binapi/nat_types"
)

// A second inside host talking GRE to the same remote shares the pool
// address and takes the outside key over (VPP's free-address check looks
// for the reversed key): the remote's GRE then reaches the second host.
func TestGRESecondHostTakesTheOutsideKeyOver(t *testing.T) {
	e := newEnv(t)
	e.standardNAT()
	gre := func(in, src, dst string) Packet {
		return Packet{Ingress: in, Protocol: 47, Src: ap(src + ":0"), Dst: ap(dst + ":0")}
	}
	requireForward(t, e.v.Trace(gre("tap0", "10.1.1.5", "8.8.8.8")), "eth0", "1.1.1.1:0", "8.8.8.8:0")
	requireForward(t, e.v.Trace(gre("tap0", "10.1.1.6", "8.8.8.8")), "eth0", "1.1.1.1:0", "8.8.8.8:0")
	assert.True(t, hasViolation(e.v, "session key overwritten"))
	requireForward(t, e.v.Trace(gre("eth0", "8.8.8.8", "1.1.1.1")), "tap0", "8.8.8.8:0", "10.1.1.6:0")
	s := e.sessions("10.1.1.5")
	require.Len(t, s, 1)
	assert.Equal(t, uint16(0), s[0].Protocol, "the portless path never sets the session's proto")
	assert.Equal(t, uint16(47<<8), s[0].InsidePort, "the IP protocol, host byte order, read as a port")
}

// GRE through a mapping of protocol 47 from outside: the session's inside
// key is never initialised, so the host's reply makes a second session.
func TestGREFromOutsideMakesTwoSessions(t *testing.T) {
	e := newEnv(t)
	e.standardNAT()
	e.ok(e.static(true, "10.1.1.7:0", "1.1.1.7:0", 47, 0))
	in := e.v.Trace(Packet{Ingress: "eth0", Protocol: 47, Src: ap("8.8.8.8:0"), Dst: ap("1.1.1.7:0")})
	requireForward(t, in, "tap0", "8.8.8.8:0", "10.1.1.7:0")
	assert.True(t, in.ReplyOK, steps(in))
	assert.Len(t, e.sessions("10.1.1.7"), 2)
	// An address-only mapping is not found by portless protocols.
	e.ok(e.static(true, "10.1.1.8:0", "1.1.1.8:0", 0, nat_types.NAT_IS_ADDR_ONLY))
	requireDrop(t, e.v.Trace(Packet{Ingress: "eth0", Protocol: 50, Src: ap("8.8.8.8:0"), Dst: ap("1.1.1.8:0")}), "no translation")
}
