package fakevpp

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.fd.io/govpp/adapter"
	"go.fd.io/govpp/api"
	interfaces "go.fd.io/govpp/binapi/interface"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/memclnt"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/binapi/vpe"
	"go.fd.io/govpp/core"
)

func TestConnectPingAndVersion(t *testing.T) {
	e := connectEnv(t, New(WithPID(777)))
	r, err := memclnt.NewServiceClient(e.conn).ControlPing(e.ctx, &memclnt.ControlPing{})
	require.NoError(t, err)
	assert.Equal(t, uint32(777), r.VpePID)
	assert.NotZero(t, r.ClientIndex)

	ver, err := vpe.NewServiceClient(e.conn).ShowVersion(e.ctx, &vpe.ShowVersion{})
	require.NoError(t, err)
	assert.Equal(t, Version, ver.Version)
	assert.Empty(t, e.v.Calls()["control_ping"], "control pings are not counted")
	assert.Equal(t, 1, e.v.Calls()["show_version"])
}

func TestAsyncConnectReportsConnected(t *testing.T) {
	v := New()
	conn, events, err := core.AsyncConnect(v, 3, 10*time.Millisecond)
	require.NoError(t, err)
	defer conn.Disconnect()
	select {
	case ev := <-events:
		require.Equal(t, core.Connected, ev.State)
	case <-time.After(5 * time.Second):
		t.Fatal("no Connected event")
	}
}

func TestMessageTable(t *testing.T) {
	v := New()
	_, err := v.GetMsgID("nat44_add_del_address_range", "deadbeef")
	var unknown *adapter.UnknownMsgError
	require.ErrorAs(t, err, &unknown, "a CRC VPP 25.10 does not know is rejected like the real VPP does")
	id, err := v.GetMsgID((&nat44_ed.Nat44AddDelAddressRange{}).GetMessageName(), (&nat44_ed.Nat44AddDelAddressRange{}).GetCrcString())
	require.NoError(t, err)
	assert.NotZero(t, id)
}

// An existing VPP message that the fake does not model is answered (never a
// hang) with UNIMPLEMENTED, and flagged.
func TestUnmodelledMessage(t *testing.T) {
	e := connectEnv(t, New())
	_, err := e.nat.NatSetWorkers(e.ctx, &nat44_ed.NatSetWorkers{})
	e.expect(api.UNIMPLEMENTED, err)
	assert.True(t, hasViolation(e.v, "unmodelled message"))
	s, err := e.nat.NatWorkerDump(e.ctx, &nat44_ed.NatWorkerDump{})
	require.NoError(t, err)
	assert.Empty(t, recvAll(t, s.Recv), "an unmodelled dump ends with the control-ping reply")
}

// Replies are delivered from a separate goroutine, so a dump longer than
// govpp's reply buffer (100) streams fine.
func TestLargeDump(t *testing.T) {
	v := New()
	for i := 0; i < 300; i++ {
		v.AddInterface(fmt.Sprintf("tap%d", i))
	}
	e := connectEnv(t, v)
	s, err := e.ifs.SwInterfaceDump(e.ctx, &interfaces.SwInterfaceDump{})
	require.NoError(t, err)
	assert.Len(t, recvAll(t, s.Recv), 301)
}

// The deprecated channel API sets the multipart bit in the context; replies
// echo the context, so it works unchanged.
func TestChannelMultiRequest(t *testing.T) {
	e := newEnv(t)
	ch, err := e.conn.NewAPIChannel()
	require.NoError(t, err)
	defer ch.Close()
	req := ch.SendMultiRequest(&interfaces.SwInterfaceDump{})
	n := 0
	for {
		d := &interfaces.SwInterfaceDetails{}
		last, err := req.ReceiveReply(d)
		require.NoError(t, err)
		if last {
			break
		}
		n++
	}
	assert.Equal(t, 3, n)
}

// SwInterfaceDump filters (docs/fakevpp.md#messages).
func TestSwInterfaceDumpFilters(t *testing.T) {
	v := New()
	v.AddInterface("tap1")
	v.AddInterface("tap10")
	v.AddInterface("eth0")
	e := connectEnv(t, v)
	dump := func(req *interfaces.SwInterfaceDump) []string {
		s, err := e.ifs.SwInterfaceDump(e.ctx, req)
		require.NoError(t, err)
		var names []string
		for _, d := range recvAll(t, s.Recv) {
			names = append(names, d.InterfaceName)
		}
		return names
	}
	assert.Equal(t, []string{"local0", "tap1", "tap10", "eth0"}, dump(&interfaces.SwInterfaceDump{}), "index 0 dumps all")
	assert.Equal(t, []string{"local0", "tap1", "tap10", "eth0"}, dump(&interfaces.SwInterfaceDump{SwIfIndex: ^interface_types.InterfaceIndex(0)}))
	assert.Equal(t, []string{"tap10"}, dump(&interfaces.SwInterfaceDump{SwIfIndex: 2}))
	assert.Empty(t, dump(&interfaces.SwInterfaceDump{SwIfIndex: 99}))
	assert.Equal(t, []string{"tap1", "tap10"}, dump(&interfaces.SwInterfaceDump{NameFilterValid: true, NameFilter: "TAP1"}), "case-insensitive substring")
}

// Indices are allocated LIFO; events announce creation and deletion.
func TestInterfaceLifecycleAndEvents(t *testing.T) {
	e := newEnv(t)
	w, err := e.conn.WatchEvent(e.ctx, &interfaces.SwInterfaceEvent{})
	require.NoError(t, err)
	defer w.Close()
	_, err = e.ifs.WantInterfaceEvents(e.ctx, &interfaces.WantInterfaceEvents{EnableDisable: 1, PID: 99})
	require.NoError(t, err)
	_, err = e.ifs.WantInterfaceEvents(e.ctx, &interfaces.WantInterfaceEvents{EnableDisable: 1, PID: 99})
	e.expect(api.INVALID_REGISTRATION, err)

	next := func() *interfaces.SwInterfaceEvent {
		select {
		case m := <-w.Events():
			return m.(*interfaces.SwInterfaceEvent)
		case <-time.After(5 * time.Second):
			t.Fatal("no event")
			return nil
		}
	}
	sw := e.v.AddInterface("tap7")
	ev := next()
	assert.Equal(t, interface_types.InterfaceIndex(sw), ev.SwIfIndex)
	assert.False(t, ev.Deleted)
	assert.Equal(t, uint32(99), ev.PID)
	assert.NotZero(t, ev.Flags&interface_types.IF_STATUS_API_FLAG_ADMIN_UP)

	require.True(t, e.v.DeleteInterface("tap7"))
	ev = next()
	assert.True(t, ev.Deleted)
	assert.False(t, e.v.DeleteInterface("tap7"))
	assert.False(t, e.v.DeleteInterface("local0"))

	e.v.AddInterface("tapA")
	e.v.AddInterface("tapB")
	a, _ := e.v.InterfaceIndex("tapA")
	assert.Equal(t, sw, a, "the most recently freed index is reused")
	b, _ := e.v.InterfaceIndex("tapB")
	assert.Equal(t, sw+1, b)
}

// A second client shares the state; each gets the events it asked for.
func TestSecondAdapter(t *testing.T) {
	e := newEnv(t)
	conn2, err := core.Connect(e.v.NewAdapter())
	require.NoError(t, err)
	defer conn2.Disconnect()
	w, err := conn2.WatchEvent(e.ctx, &interfaces.SwInterfaceEvent{})
	require.NoError(t, err)
	defer w.Close()
	_, err = interfaces.NewServiceClient(conn2).WantInterfaceEvents(e.ctx, &interfaces.WantInterfaceEvents{EnableDisable: 1})
	require.NoError(t, err)
	e.enableNAT()
	cfg, err := nat44_ed.NewServiceClient(conn2).Nat44ShowRunningConfig(e.ctx, &nat44_ed.Nat44ShowRunningConfig{})
	require.NoError(t, err)
	assert.NotZero(t, cfg.Sessions)
	e.v.AddInterface("tap9")
	select {
	case <-w.Events():
	case <-time.After(5 * time.Second):
		t.Fatal("no event on the second connection")
	}
}

func TestRoutesAndStartupFlags(t *testing.T) {
	v := New()
	v.AddInterface("eth0", pfx("192.168.0.1/24"))
	v.AddRoute(pfx("0.0.0.0/0"), "eth0")
	e := connectEnv(t, v)
	v.AddInterface("tap0", pfx("10.1.1.1/24"))
	assert.True(t, v.SetStartup("tap0", true))
	assert.False(t, v.SetStartup("nope", true))
	v.AddRoute(pfx("10.2.0.0/16"), "tap0")
	requireForward(t, v.Trace(udpPkt("eth0", "8.8.8.8:1", "10.2.3.4:53")), "tap0", "8.8.8.8:1", "10.2.3.4:53")
	assert.True(t, v.DeleteRoute(pfx("10.2.0.0/16")))
	assert.False(t, v.DeleteRoute(pfx("10.2.0.0/16")))
	requireForward(t, v.Trace(udpPkt("tap0", "10.1.1.2:1", "10.2.3.4:53")), "eth0", "10.1.1.2:1", "10.2.3.4:53")
	assert.Panics(t, func() { v.AddRoute(pfx("10.3.0.0/16"), "nope") })
	assert.Panics(t, func() { v.AddInterface("tap0") })

	v.Restart()
	_, ok := v.InterfaceIndex("tap0")
	assert.True(t, ok, "marked startup")
	_ = e
	v.ClearViolations()
	assert.Empty(t, v.Violations())
	assert.Zero(t, v.Uptime())
}
