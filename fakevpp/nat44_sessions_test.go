package fakevpp

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/binapi/nat_types"
)

// TCP sessions use the transitory timeout until SYN and ACK were seen in both
// directions, the established one after, and the transitory one again once
// closing.
func TestTCPSessionStates(t *testing.T) {
	e := newEnv(t)
	e.standardNAT()
	out := func(flags uint8) Packet {
		p := tcpSyn("tap0", "10.1.1.2:40000", "8.8.8.8:80")
		p.TCPFlags = flags
		return p
	}
	in := func(flags uint8) Packet {
		p := tcpSyn("eth0", "8.8.8.8:80", "1.1.1.1:40000")
		p.TCPFlags = flags
		return p
	}
	require.True(t, e.v.Trace(out(tcpSYN)).ReplyOK)
	e.v.Advance(239 * time.Second)
	require.Equal(t, Forward, e.v.Trace(out(tcpACK)).Verdict, "ACK completes the handshake")
	e.v.Advance(1000 * time.Second)
	require.Equal(t, Forward, e.v.Trace(in(tcpACK)).Verdict, "established: 7440 s")
	require.Equal(t, Forward, e.v.Trace(out(tcpFIN|tcpACK)).Verdict)
	e.v.Advance(241 * time.Second)
	requireDrop(t, e.v.Trace(in(tcpACK)), "no translation")
}

func TestSessionLimitAndReclaim(t *testing.T) {
	e := newEnv(t)
	_, err := e.nat.Nat44EdPluginEnableDisable(e.ctx, &nat44_ed.Nat44EdPluginEnableDisable{Enable: true, Sessions: 2})
	e.ok(err)
	e.ok(e.natRole("tap0", true, nat_types.NAT_IS_INSIDE))
	e.ok(e.natRole("eth0", true, nat_types.NAT_IS_OUTSIDE))
	e.pool("1.1.1.1", 0)
	require.Equal(t, Forward, e.v.Trace(udpPkt("tap0", "10.1.1.2:1001", "8.8.8.8:53")).Verdict)
	require.Equal(t, Forward, e.v.Trace(udpPkt("tap0", "10.1.1.2:1002", "8.8.8.8:53")).Verdict)
	requireDrop(t, e.v.Trace(udpPkt("tap0", "10.1.1.2:1003", "8.8.8.8:53")), "maximum sessions exceeded")
	e.v.Advance(301 * time.Second)
	require.Equal(t, Forward, e.v.Trace(udpPkt("tap0", "10.1.1.2:1003", "8.8.8.8:53")).Verdict, "an expired session is reclaimed")
	// The limit check and the allocation each reclaim one expired session
	// (nat_lru_free_one in slow_path_ed and in nat_ed_session_alloc).
	assert.Len(t, e.sessions("10.1.1.2"), 1)
}

// Deleting the last NAT interface invalidates the sessions of its VRF.
func TestLastNATInterfaceExpiresSessions(t *testing.T) {
	e := newEnv(t)
	e.standardNAT()
	require.True(t, e.v.Trace(udpPkt("tap0", "10.1.1.2:1001", "8.8.8.8:53")).ReplyOK)
	e.ok(e.natRole("tap0", false, nat_types.NAT_IS_INSIDE))
	e.ok(e.natRole("tap0", false, nat_types.NAT_IS_OUTSIDE))
	e.ok(e.natRole("eth0", false, nat_types.NAT_IS_OUTSIDE))
	e.ok(e.natRole("tap0", true, nat_types.NAT_IS_INSIDE))
	e.ok(e.natRole("eth0", true, nat_types.NAT_IS_OUTSIDE))
	requireDrop(t, e.v.Trace(udpPkt("eth0", "8.8.8.8:53", "1.1.1.1:1001")), "no translation")
}

// A pool address in the subnet of an outside interface is preferred for
// destinations in that subnet.
func TestPoolAddressBoundToInterface(t *testing.T) {
	e := newEnv(t)
	e.standardNAT()
	for _, a := range []string{"192.168.0.100", "1.1.1.2"} {
		_, err := e.nat.Nat44AddDelAddressRange(e.ctx, &nat44_ed.Nat44AddDelAddressRange{
			FirstIPAddress: a4(a), LastIPAddress: a4(a), VrfID: 0, IsAdd: true})
		e.ok(err)
	}
	tr := e.v.Trace(udpPkt("tap0", "10.1.1.2:40000", "192.168.0.50:53"))
	assert.Equal(t, addr("192.168.0.100"), tr.Out.Src.Addr(), steps(tr))
	assert.True(t, tr.ReplyOK)
}

func TestLegacyStaticMapping(t *testing.T) {
	e := newEnv(t)
	e.standardNAT()
	_, err := e.nat.Nat44AddDelStaticMapping(e.ctx, &nat44_ed.Nat44AddDelStaticMapping{IsAdd: true,
		LocalIPAddress: a4("10.1.1.5"), ExternalIPAddress: a4("1.1.1.5"), Flags: nat_types.NAT_IS_ADDR_ONLY,
		ExternalSwIfIndex: ^interface_types.InterfaceIndex(0), VrfID: ^uint32(0)})
	e.ok(err)
	requireForward(t, e.v.Trace(tcpSyn("eth0", "8.8.8.8:1", "1.1.1.5:443")), "tap0", "8.8.8.8:1", "10.1.1.5:443")
	requireForward(t, e.v.Trace(udpPkt("tap0", "10.1.1.5:5353", "8.8.8.8:53")), "eth0", "1.1.1.5:5353", "8.8.8.8:53")
	assert.Len(t, e.staticDump(), 1)
	// Deleting an address-only mapping deletes all its sessions.
	_, err = e.nat.Nat44AddDelStaticMapping(e.ctx, &nat44_ed.Nat44AddDelStaticMapping{
		LocalIPAddress: a4("10.1.1.5"), ExternalIPAddress: a4("1.1.1.5"), Flags: nat_types.NAT_IS_ADDR_ONLY,
		ExternalSwIfIndex: ^interface_types.InterfaceIndex(0), VrfID: ^uint32(0)})
	e.ok(err)
	assert.Empty(t, e.sessions("10.1.1.5"))
	assert.Empty(t, e.v.Violations())
}
