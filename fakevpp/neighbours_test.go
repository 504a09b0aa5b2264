package fakevpp

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/binapi/nat_types"
)

// docs/fakevpp.md#neighbours-and-nat44-ed-receive-entries: an
// address-only identity mapping's receive entry delivers packets to the
// address to VPP until the address is a neighbour, static or learned from
// the host's own traffic.
func TestNeighbourEntryHidesNATReceiveEntry(t *testing.T) {
	e := identityMappedEnv(t)
	in := udpPkt("eth0", "8.8.8.8:53", "10.1.1.2:5000")
	assert.Equal(t, Local, e.v.Trace(in).Verdict, "not a neighbour: the receive entry")
	tr := e.v.Trace(udpPkt("tap0", "10.1.1.2:5000", "8.8.8.8:53"))
	require.Equal(t, Forward, tr.Verdict, steps(tr))
	assert.False(t, tr.SNAT, "identity mapping")
	assert.True(t, tr.ReplyOK, "10.1.1.2 sent from tap0's subnet: learned, its entry wins: %s", steps(tr))
	requireForward(t, e.v.Trace(in), "tap0", "8.8.8.8:53", "10.1.1.2:5000")
}

// A static neighbour does the same without traffic; an API route of the
// same /32 outranks it; a host of another subnet is not learned.
func TestNeighbourEntrySources(t *testing.T) {
	e := identityMappedEnv(t)
	in := udpPkt("eth0", "8.8.8.8:53", "10.1.1.2:5000")
	require.True(t, e.v.AddNeighbour("eth0", addr("10.1.1.2")))
	assert.Contains(t, steps(e.v.Trace(in)), "10.1.1.2 via eth0 (10.1.1.2/32)")
	e.v.AddRoute(pfx("10.1.1.2/32"), "tap0")
	assert.Contains(t, steps(e.v.Trace(in)), "10.1.1.2 via tap0 (10.1.1.2/32)")

	e.v.Trace(udpPkt("eth0", "172.16.0.9:53", "10.1.1.3:5000"))
	assert.Nil(t, e.v.neighbourIn(0, addr("172.16.0.9")), "not a host of eth0's subnet")
}

// identityMappedEnv has NAT44-ED with tap0 inside and outside, eth0
// outside and an address-only identity mapping of 10.1.1.2, whose receive
// entry is in table 0.
func identityMappedEnv(t *testing.T) *env {
	e := newEnv(t)
	e.enableNAT()
	e.ok(e.natRole("tap0", true, nat_types.NAT_IS_INSIDE))
	e.ok(e.natRole("eth0", true, 0))
	e.pool("1.1.1.1", 0)
	_, err := e.nat.Nat44AddDelIdentityMapping(e.ctx, &nat44_ed.Nat44AddDelIdentityMapping{IsAdd: true, Flags: nat_types.NAT_IS_ADDR_ONLY,
		IPAddress: a4("10.1.1.2"), SwIfIndex: ^interface_types.InterfaceIndex(0)})
	e.ok(err)
	e.ok(e.natRole("tap0", true, 0)) // tap0's table gets the receive entries too
	return e
}
