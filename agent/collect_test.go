package agent

import (
	"bytes"
	"context"
	"net/netip"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"weak"

	"github.com/sirupsen/logrus/hooks/test"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc/fakevpp"
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
	before := goroutineStacks()
	var checks []func() (string, bool)
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

		for what, alive := range map[string]func() bool{
			"the agent":          weakAlive(a),
			"the processor":      weakAlive(a.Processor),
			"the reconciler":     weakAlive(a.Reconciler),
			"the govpp driver":   weakAlive(a.Driver),
			"the connect gate":   weakAlive(a.gate),
			"the fake VPP":       weakAlive(vpp),
			"the nat44 renderer": weakAlive(a.Renderers[nat44.Name].(*nat44.Renderer)),
			"the observer":       weakAlive(a.observer.(*calls)),
		} {
			checks = append(checks, func() (string, bool) { return what, !alive() })
		}
	}()
	if left := waitGoroutinesGone(before, 10*time.Second); left != "" {
		t.Fatalf("goroutines left after the agent stopped:\n%s", left)
	}
	if alive := waitCollected(10*time.Second, checks); len(alive) > 0 {
		t.Fatalf("not garbage-collected after the agent stopped: %s", strings.Join(alive, ", "))
	}
}

// weakAlive tells whether p has not been garbage-collected, without
// keeping it.
func weakAlive[T any](p *T) func() bool {
	w := weak.Make(p)
	return func() bool { return w.Value() != nil }
}

// goroutineStacks returns the stack of every goroutine (system goroutines
// aside) by its header line "goroutine N".
func goroutineStacks() map[string]string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	out := map[string]string{}
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		id, _, _ := strings.Cut(string(g), " [")
		out[id] = string(g)
	}
	return out
}

// waitGoroutinesGone waits until every goroutine started since before has
// ended, or timeout passes; it returns the stacks of those left.
func waitGoroutinesGone(before map[string]string, timeout time.Duration) string {
	var left []string
	for deadline := time.Now().Add(timeout); ; time.Sleep(5 * time.Millisecond) {
		left = left[:0]
		for id, stack := range goroutineStacks() {
			if _, ok := before[id]; !ok {
				left = append(left, stack)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
	}
	slices.Sort(left)
	return strings.Join(left, "\n\n")
}

// waitCollected runs the garbage collector until every check reports its
// object collected, or timeout passes; it returns the objects still alive.
func waitCollected(timeout time.Duration, checks []func() (string, bool)) []string {
	var alive []string
	deadline := time.Now().Add(timeout)
	for {
		runtime.GC()
		alive = alive[:0]
		for _, c := range checks {
			if what, ok := c(); !ok {
				alive = append(alive, what)
			}
		}
		if len(alive) == 0 || time.Now().After(deadline) {
			slices.Sort(alive)
			return alive
		}
		time.Sleep(10 * time.Millisecond)
	}
}
