// Package agenttest runs the product's agent in tests (the renderers'
// packet traces, the reliability suite): the same wiring as a node runs,
// with the tests' fast retries, started over a fake or real VPP and
// stopped when the test, or an earlier scope, ends. It lives outside
// renderer/ because the agent reaches the processor, which packages under
// renderer/ may not.
package agenttest

import (
	"context"
	"io"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"go.fd.io/govpp/adapter"

	"github.com/vppsvc/vppsvc/agent"
	"github.com/vppsvc/vppsvc/fakevpp"
	"github.com/vppsvc/vppsvc/renderer/cnat4"
	"github.com/vppsvc/vppsvc/renderer/ipv6"
	"github.com/vppsvc/vppsvc/renderer/nat44"
	"github.com/vppsvc/vppsvc/vppcfg/engine"
)

// Run is one run of the product's agent (package agent: govpp driver,
// connect gate, VPP layer, processor and renderers, as agent.New wires
// them) over a VPP, fake or real.
type Run struct {
	Agent *agent.Agent
	// Rec is the agent's VPP layer.
	Rec    *engine.Reconciler
	tb     testing.TB
	cancel context.CancelFunc
	once   sync.Once
}

// Config is the agent's configuration for the given renderers' own
// configurations: a nil one leaves its family unrendered. Their service
// CIDRs go into ServiceClusterIPRange, from which agent.New hands them
// back to each renderer.
func Config(cfg4 *nat44.Config, cfg6 *ipv6.Config) agent.Config {
	var c agent.Config
	if cfg4 != nil {
		c.NAT44 = *cfg4
		c.ServiceClusterIPRange = cidrStrings(cfg4.ServiceCIDRs)
	} else {
		c.DisableIPv4 = true
	}
	withIPv6(&c, cfg6)
	return c
}

// ConfigCNAT4 is Config with the cnat IPv4 renderer instead of NAT44.
func ConfigCNAT4(cfg4 *cnat4.Config, cfg6 *ipv6.Config) agent.Config {
	c := agent.Config{IPv4Renderer: agent.IPv4RendererCNAT}
	if cfg4 != nil {
		c.CNAT4 = *cfg4
		c.ServiceClusterIPRange = cidrStrings(cfg4.ServiceCIDRs)
	} else {
		c.DisableIPv4 = true
	}
	withIPv6(&c, cfg6)
	return c
}

// withIPv6 sets c's IPv6 renderer, or disables the family when cfg6 is nil.
func withIPv6(c *agent.Config, cfg6 *ipv6.Config) {
	if cfg6 == nil {
		c.DisableIPv6 = true
		return
	}
	c.IPv6 = *cfg6
	c.ServiceClusterIPRange = append(c.ServiceClusterIPRange, cidrStrings(cfg6.ServiceCIDRs)...)
}

// cidrStrings are ps as the configuration file writes them.
func cidrStrings(ps []netip.Prefix) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	return out
}

// Start starts an agent over v (over v itself when first, which is
// how the first connection to a fake is made; otherwise over a new client
// connection, as a restarted agent connects to a running VPP).
func Start(tb testing.TB, v *fakevpp.VPP, first bool, opts agent.Options) *Run {
	tb.Helper()
	a := v.NewAdapter()
	if first {
		a = v
	}
	return StartOn(tb, a, opts)
}

// StartOn starts an agent over any connection to a VPP (a
// dataplane.Node's Adapter, fake or real) and waits until its VPP layer
// has compared VPP with the desired state for the first time. Unset
// options get the tests' values: a logger that discards, retries from
// 1 to 20 ms, reconnects every 20 ms. The agent stops when the test ends, if it has
// not been stopped before.
func StartOn(tb testing.TB, a adapter.VppAPI, opts agent.Options) *Run {
	tb.Helper()
	opts.VPP = a
	if opts.Log == nil {
		log := logrus.New()
		log.SetOutput(io.Discard)
		opts.Log = log
	}
	if opts.RetryMin == 0 {
		opts.RetryMin, opts.RetryMax = time.Millisecond, 20*time.Millisecond
	}
	if opts.Driver.ReconnectInterval == 0 {
		opts.Driver.ReconnectInterval = 20 * time.Millisecond
	}
	ag, err := agent.New(opts)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	run := &Run{Agent: ag, Rec: ag.Reconciler, tb: tb, cancel: cancel}
	tb.Cleanup(run.Stop)
	started := make(chan error, 1)
	go func() { started <- ag.Start(ctx) }()
	select {
	case err := <-started:
		if err != nil {
			tb.Fatalf("agent: %v", err)
		}
	case <-time.After(10 * time.Second):
		tb.Fatal("the agent's VPP layer did not sync")
	}
	return run
}

// Stop stops the agent (its VPP layer and the processor's retry loop) and
// closes its connection; VPP keeps its state. Stopping twice is harmless.
func (r *Run) Stop() {
	r.once.Do(func() {
		r.cancel()
		<-r.Agent.LayerDone()
		if err := r.Agent.LayerErr(); err != nil {
			r.tb.Errorf("VPP layer: %v", err)
		}
		r.Agent.Close()
	})
}

// WaitReapplied waits until the layer has resynced after resyncs (its
// Stats().Resyncs before a VPP restart) and holds every desired item in
// VPP again: what a restart test waits for before it traces.
func (r *Run) WaitReapplied(tb testing.TB, resyncs uint64, within time.Duration) {
	tb.Helper()
	deadline := time.Now().Add(within)
	for {
		s := r.Rec.Stats()
		if s.Resyncs > resyncs && s.Synced && s.Pending == 0 && s.Failed == 0 && s.Applied == s.Desired {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("not re-applied within %s: %+v", within, s)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
