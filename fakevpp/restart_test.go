package fakevpp

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.fd.io/govpp/binapi/acl"
	interfaces "go.fd.io/govpp/binapi/interface"
	"go.fd.io/govpp/binapi/memclnt"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/core"
)

// Restart (docs/fakevpp.md#restart).
func TestRestart(t *testing.T) {
	v := New()
	v.AddInterface("eth0", pfx("192.168.0.1/24"))
	v.AddRoute(pfx("0.0.0.0/0"), "eth0")
	e, waitState := reconnectingEnv(t, v)
	conn, ctx := e.conn, e.ctx

	// API-created state: a tap, NAT, an ACL.
	v.AddInterface("tap0", pfx("10.1.1.1/24"))
	v.AddInterface("tap5", pfx("10.1.5.1/24"))
	require.True(t, v.DeleteInterface("tap0"), "frees index 2, so tap5 keeps index 3")
	tap5, _ := v.InterfaceIndex("tap5")
	e.enableNAT()
	e.ok(e.natRole("eth0", true, 0))
	e.pool("1.1.1.1", 0)
	e.ok(e.static(true, "10.1.5.5:8080", "1.1.1.1:80", tcp, 0))
	e.addACL("a")
	e.addACL("b")
	ping, err := memclnt.NewServiceClient(conn).ControlPing(ctx, &memclnt.ControlPing{})
	require.NoError(t, err)
	pid := ping.VpePID

	v.Restart()
	waitState(core.Disconnected)
	waitState(core.Connected)

	ping, err = memclnt.NewServiceClient(conn).ControlPing(ctx, &memclnt.ControlPing{})
	require.NoError(t, err)
	assert.NotEqual(t, pid, ping.VpePID)
	cfg, err := e.nat.Nat44ShowRunningConfig(ctx, &nat44_ed.Nat44ShowRunningConfig{})
	e.ok(err)
	assert.Zero(t, cfg.Sessions, "NAT is disabled after a restart")
	assert.Empty(t, e.staticDump())
	assert.Empty(t, e.addresses())
	assert.Empty(t, e.natInterfaces())
	assert.Empty(t, e.lbDump())
	assert.Empty(t, e.aclDump(^uint32(0)))
	assert.Equal(t, uint32(0), e.addACL("again"), "ACL indices start again at 0")

	_, ok := v.InterfaceIndex("tap5")
	assert.False(t, ok, "API-created interfaces are gone")
	eth0, ok := v.InterfaceIndex("eth0")
	assert.True(t, ok)
	assert.Equal(t, uint32(1), eth0)
	assert.Equal(t, Forward, v.Trace(udpPkt("eth0", "192.168.0.7:1", "8.8.8.8:53")).Verdict, "startup routes survive")
	assert.NotEqual(t, tap5, v.AddInterface("tap5"), "re-created with another index")
}

// DropConnections: the client reconnects to the same process, and VPP kept
// everything.
func TestDropConnections(t *testing.T) {
	v := New()
	v.AddInterface("eth0", pfx("192.168.0.1/24"))
	e, waitState := reconnectingEnv(t, v)
	conn, ctx := e.conn, e.ctx
	e.enableNAT()
	e.pool("1.1.1.1", 0)
	before := v.Dump()
	ping, err := memclnt.NewServiceClient(conn).ControlPing(ctx, &memclnt.ControlPing{})
	require.NoError(t, err)

	v.DropConnections()
	waitState(core.Disconnected)
	waitState(core.Connected)
	again, err := memclnt.NewServiceClient(conn).ControlPing(ctx, &memclnt.ControlPing{})
	require.NoError(t, err)
	assert.Equal(t, ping.VpePID, again.VpePID, "the same process")
	assert.Equal(t, before, v.Dump(), "VPP kept its tables")
}

// reconnectingEnv connects to v with govpp's reconnecting connection and a
// fast health check, so that a reset connection is noticed at once, and
// returns the test env and a wait for the next connection event.
func reconnectingEnv(t *testing.T, v *VPP) (*env, func(core.ConnectionState)) {
	t.Helper()
	old := core.HealthCheckProbeInterval
	core.HealthCheckProbeInterval = 20 * time.Millisecond
	t.Cleanup(func() { core.HealthCheckProbeInterval = old })
	conn, events, err := core.AsyncConnect(v, 10, 20*time.Millisecond)
	require.NoError(t, err)
	t.Cleanup(conn.Disconnect)
	waitState := func(want core.ConnectionState) {
		t.Helper()
		select {
		case ev := <-events:
			require.Equal(t, want, ev.State, "event %+v", ev)
		case <-time.After(10 * time.Second):
			t.Fatalf("no %v event", want)
		}
	}
	waitState(core.Connected)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return &env{t: t, v: v, conn: conn, ctx: ctx, nat: nat44_ed.NewServiceClient(conn), acl: acl.NewServiceClient(conn),
		ifs: interfaces.NewServiceClient(conn)}, waitState
}
