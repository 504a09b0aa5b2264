package govppdriver

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc/internal/leakcheck"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
)

// TestConnectGate: the gate opens on the driver's first connection and
// swallows that one EventConnected (the layer's Start resyncs anyway);
// later events, a reconnection to a restarted VPP among them, pass through
// in order; Close leaves no goroutine of the gate or the driver behind.
func TestConnectGate(t *testing.T) {
	before := leakcheck.Goroutines()
	v := newFake()
	d, err := Connect(v, Options{Logger: quietLogger(), ReconnectInterval: 20 * time.Millisecond})
	require.NoError(t, err)
	g := NewConnectGate(d)
	select {
	case <-g.Connected():
	case <-time.After(10 * time.Second):
		t.Fatal("the gate did not open on the first connection")
	}

	// The driver emits its first EventConnected before any interface
	// event, so an event that leaks through would come first.
	idx := v.AddInterface("tap10")
	assert.Equal(t, driverapi.Event{Type: driverapi.EventInterfaceAdded, Interface: "tap10", SwIfIndex: idx}, nextGateEvent(t, g),
		"the first EventConnected is swallowed")

	v.Restart()
	var seen []driverapi.EventType
	for len(seen) == 0 || seen[len(seen)-1] != driverapi.EventConnected {
		seen = append(seen, nextGateEvent(t, g).Type)
	}
	assert.Contains(t, seen, driverapi.EventDisconnected, "the lost connection is passed through")

	g.Close()
	g.Close() // idempotent
	if left := leakcheck.WaitGoroutinesGone(before, 10*time.Second); left != "" {
		t.Fatalf("goroutines left after Close:\n%s", left)
	}
}

func nextGateEvent(t *testing.T, g *ConnectGate) driverapi.Event {
	t.Helper()
	select {
	case ev := <-g.Events():
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event through the gate")
		return driverapi.Event{}
	}
}
