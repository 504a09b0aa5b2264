package agent

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/sirupsen/logrus/hooks/test"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc/agent/inspect"
	"github.com/vppsvc/vppsvc/fakevpp"
)

// Items waiting for an interface keep the agent from converging (as after a
// VPP restart, before the CNI has recreated the interfaces), but not from
// having done all it can; Divergence names them, and the agent converges
// once the interface appears.
func TestInterfaceWaitsKeepTheAgentFromConverging(t *testing.T) {
	log, _ := test.NewNullLogger()
	vpp := fakevpp.New()
	vpp.AddInterface("uplink0", netip.MustParsePrefix("192.168.16.1/24"))
	cfg := DefaultConfig([]netip.Addr{netip.MustParseAddr("192.168.16.1")})
	a, err := New(Options{NodeName: "node-a", FrontendInterfaces: []string{"uplink0", "host0"}, Config: cfg, VPP: vpp, Log: log,
		RetryMin: time.Millisecond, RetryMax: 10 * time.Millisecond})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		cancel()
		<-a.LayerDone()
		a.Close()
	})
	before := time.Now()
	require.NoError(t, a.Start(ctx))
	a.Processor.Resync(snapshot("10.1.2.2", "10.1.3.2"))

	assert.True(t, a.ConvergedExceptInterfaces(), "everything else is applied")
	assert.False(t, a.Converged(), "host0 does not exist")
	w := inspect.InterfaceWaits(a.Reconciler)
	assert.Positive(t, w.Items)
	assert.Equal(t, w.Items, a.Reconciler.Stats().WaitingForInterface)
	assert.False(t, w.Since.Before(before.Add(-time.Second)), "waiting since the resync, not forever: %s", w.Since)
	assert.Contains(t, w.Example, `interface "host0" not found`)
	err = a.WaitConverged(ctx, 20*time.Millisecond)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "wait for an interface")
	assert.Contains(t, err.Error(), `"host0"`)

	vpp.AddInterface("host0")
	require.NoError(t, a.WaitConverged(ctx, 5*time.Second))
	assert.Equal(t, inspect.InterfaceWait{}, inspect.InterfaceWaits(a.Reconciler))
	assert.Equal(t, "converged", a.Divergence())
}
