package fakevpp

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/binapi/nat_types"
)

// docs/fakevpp.md#nat44-ed-outside-fibs: the output feature's FIB is an
// outside FIB (its interface moved into VRF 22 after the feature was set).
func TestNAT44OutputFeatureInAVRF(t *testing.T) {
	v := New()
	v.AddInterface("in7")
	v.AddInterface("out8")
	e := connectEnv(t, v)
	e.enableNAT()
	_, err := e.nat.Nat44EdAddDelOutputInterface(e.ctx, &nat44_ed.Nat44EdAddDelOutputInterface{IsAdd: true, SwIfIndex: e.sw("out8")})
	e.ok(err)
	e.pool("10.0.0.3", 0)
	v.AddTable(22, false)
	for _, i := range []string{"in7", "out8"} {
		require.Zero(t, v.SetInterfaceTable(i, 22, false))
	}
	require.Zero(t, v.AddAddress("in7", pfx("10.7.0.1/24")))
	require.Zero(t, v.AddAddress("out8", pfx("10.8.0.1/24")))
	tr := v.Trace(udpPkt("in7", "10.7.0.2:5000", "10.8.0.2:53"))
	require.Equal(t, Forward, tr.Verdict, steps(tr))
	assert.Equal(t, ap("10.0.0.3:5000"), tr.Out.Src)
	assert.True(t, tr.ReplyOK, steps(tr))
}

// An inside+outside interface in VRF 1 whose default route continues in
// table 0, the output feature in table 0: VRF 1's FIB does not resolve the
// destination through an interface, so the session's outside FIB is
// table 0 and the reply is translated back.
func TestNAT44OutsideFibResolvesInTheTableAlone(t *testing.T) {
	v := New()
	v.AddInterface("up1", pfx("172.16.2.1/24"))
	v.AddInterface("in5")
	e := connectEnv(t, v)
	v.AddTable(1, false)
	require.Zero(t, v.SetInterfaceTable("in5", 1, false))
	require.Zero(t, v.AddAddress("in5", pfx("10.1.1.1/24")))
	require.True(t, v.AddRouteToTable(1, pfx("0.0.0.0/0"), 0))
	e.enableNAT()
	e.pool("10.0.0.3", 0)
	_, err := e.nat.Nat44EdAddDelOutputInterface(e.ctx, &nat44_ed.Nat44EdAddDelOutputInterface{IsAdd: true, SwIfIndex: e.sw("up1")})
	e.ok(err)
	e.ok(e.natRole("in5", true, 0))
	e.ok(e.natRole("in5", true, nat_types.NAT_IS_INSIDE))
	tr := v.Trace(tcpSyn("in5", "10.1.1.2:2345", "172.16.2.2:22"))
	require.Equal(t, Forward, tr.Verdict, steps(tr))
	assert.Contains(t, steps(tr), "nat44-ed-in2out: not translated (destination not reachable through an outside interface)")
	assert.Equal(t, ap("10.0.0.3:2345"), tr.Out.Src)
	assert.True(t, tr.ReplyOK, steps(tr))
}
