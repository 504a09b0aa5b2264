package agent

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus/hooks/test"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc/fakevpp"
	"github.com/vppsvc/vppsvc/internal/leakcheck"
	"github.com/vppsvc/vppsvc/renderer/nat44"
)

// TestStoppedAgentIsCollected: once an agent is stopped (its context
// cancelled, LayerDone closed, Close called), no goroutine it started is
// left — processor retry loop, VPP layer, connect gate, govpp driver and
// connection, the fake's outbox — and the agent, its parts and the fake VPP
// are garbage-collected: no timer (the processor's and the VPP layer's
// retry timers, the periodic resync ticker, all armed here), goroutine or
// global keeps them. A process that restarts its agent, or a test that
// starts thousands, then holds one agent's memory, not all of them.
func TestStoppedAgentIsCollected(t *testing.T) {
	before := leakcheck.Goroutines()
	var checks []leakcheck.Check
	func() {
		log, _ := test.NewNullLogger()
		vpp := fakevpp.New()
		vpp.AddInterface("uplink0", netip.MustParsePrefix("192.168.16.1/24"))
		cfg := DefaultConfig([]netip.Addr{netip.MustParseAddr("192.168.16.1")})
		a, err := New(Options{NodeName: "node-a", FrontendInterfaces: []string{"uplink0"}, Config: cfg, VPP: vpp, Log: log,
			RetryMin: time.Millisecond, RetryMax: 10 * time.Millisecond, ResyncInterval: 10 * time.Millisecond,
			Observer: &calls{begun: map[string]int{}, ended: map[string]int{}}})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		require.NoError(t, a.Start(ctx))
		// A failing item arms the retry timers; then converge.
		vpp.FailMessage("nat44_add_del_lb_static_mapping", -1)
		a.Processor.Resync(snapshot("10.1.2.2", "10.1.3.2"))
		require.Eventually(t, func() bool { return a.Reconciler.Stats().CallFailures["nat44_add_del_lb_static_mapping"] > 0 },
			5*time.Second, time.Millisecond)
		vpp.ClearFaults()
		require.NoError(t, a.WaitConverged(ctx, 5*time.Second))

		cancel()
		<-a.LayerDone()
		a.Close()

		checks = []leakcheck.Check{
			leakcheck.Weak("the agent", a),
			leakcheck.Weak("the processor", a.Processor),
			leakcheck.Weak("the reconciler", a.Reconciler),
			leakcheck.Weak("the govpp driver", a.Driver),
			leakcheck.Weak("the connect gate", a.gate),
			leakcheck.Weak("the fake VPP", vpp),
			leakcheck.Weak("the nat44 renderer", a.Renderers[nat44.Name].(*nat44.Renderer)),
			leakcheck.Weak("the observer", a.observer.(*calls)),
		}
	}()
	if left := leakcheck.WaitGoroutinesGone(before, 10*time.Second); left != "" {
		t.Fatalf("goroutines left after the agent stopped:\n%s", left)
	}
	if alive := leakcheck.WaitCollected(10*time.Second, checks...); len(alive) > 0 {
		t.Fatalf("not garbage-collected after the agent stopped: %s", strings.Join(alive, ", "))
	}
}
