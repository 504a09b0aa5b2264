package tracetest

import (
	"context"
	"io"
	"os"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"go.fd.io/govpp/adapter"
	"go.fd.io/govpp/core"

	"github.com/vppsvc/vppsvc/fakevpp"
	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/govppdriver"
)

func init() {
	// govpp probes connections every second by default; keep test
	// connections cheap and quiet.
	core.HealthCheckProbeInterval = 50 * time.Millisecond
	core.HealthCheckReplyTimeout = 200 * time.Millisecond
	core.SetLogger(QuietLogger())
}

// DebugOutput, when set, receives the debug logs of every logger
// QuietLogger makes from then on (a test that keeps logs to show on
// failure).
var DebugOutput io.Writer

// QuietLogger returns a logger that discards everything.
func QuietLogger() *logrus.Logger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	if DebugOutput != nil {
		l.SetOutput(DebugOutput)
		l.SetLevel(logrus.DebugLevel)
		return l
	}
	if path := os.Getenv("VPPSVC_TEST_LOG"); path != "" {
		// Debugging a test: every log at debug level, appended to path.
		if f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err == nil {
			l.SetOutput(f)
			l.SetLevel(logrus.DebugLevel)
		}
	}
	return l
}

// Layer is one run of the VPP layer over a fake VPP: govpp driver and
// reconciler, as an agent runs them.
type Layer struct {
	Rec    *vppcfg.Reconciler
	drv    *govppdriver.Driver
	cancel context.CancelFunc
	done   chan struct{}
}

// StartLayer connects the VPP layer to v (over v itself when first, which
// is how the first connection to a fake is made; otherwise over a new
// client connection, as a restarted agent connects to a running VPP), lets
// register create the renderers on the reconciler's clients, starts the
// reconciler and waits for its first sync. The layer stops when the test
// ends, if it has not been stopped before.
func StartLayer(tb testing.TB, v *fakevpp.VPP, first bool, register func(rec *vppcfg.Reconciler)) *Layer {
	tb.Helper()
	return StartLayerWithClaims(tb, v, first, nil, register)
}

// StartLayerWithClaims is StartLayer with the renderers' claims on untagged
// VPP objects (vppcfg.Options.Claims), as the agent passes them.
func StartLayerWithClaims(tb testing.TB, v *fakevpp.VPP, first bool, claims map[string]vppcfg.ClaimFunc, register func(rec *vppcfg.Reconciler)) *Layer {
	tb.Helper()
	a := v.NewAdapter()
	if first {
		a = v
	}
	return StartLayerOn(tb, a, claims, register)
}

// StartLayerOn is StartLayerWithClaims over any connection to a VPP: a
// dataplane.Node's Adapter, fake or real.
func StartLayerOn(tb testing.TB, a adapter.VppAPI, claims map[string]vppcfg.ClaimFunc, register func(rec *vppcfg.Reconciler)) *Layer {
	tb.Helper()
	log := QuietLogger()
	drv, err := govppdriver.Connect(a, govppdriver.Options{Logger: log, ReconnectInterval: 20 * time.Millisecond})
	if err != nil {
		tb.Fatal(err)
	}
	rec := vppcfg.NewReconciler(drv, vppcfg.Options{Logger: log, RetryMin: time.Millisecond, RetryMax: 20 * time.Millisecond, Claims: claims})
	register(rec)
	ctx, cancel := context.WithCancel(context.Background())
	l := &Layer{Rec: rec, drv: drv, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		if err := rec.Start(ctx); err != nil {
			tb.Errorf("reconciler: %v", err)
		}
	}()
	select {
	case <-rec.Synced():
	case <-time.After(10 * time.Second):
		tb.Fatal("reconciler did not sync")
	}
	tb.Cleanup(l.Stop)
	return l
}

// Stop stops the reconciler and closes the driver; VPP keeps its state.
// Stopping twice is harmless.
func (l *Layer) Stop() {
	select {
	case <-l.done:
		return
	default:
	}
	l.cancel()
	<-l.done
	l.drv.Close()
}

// WaitReapplied waits until the layer has resynced after resyncs (its
// Stats().Resyncs before a VPP restart) and holds every desired item in
// VPP again: what a restart test waits for before it traces.
func (l *Layer) WaitReapplied(tb testing.TB, resyncs uint64, within time.Duration) {
	tb.Helper()
	deadline := time.Now().Add(within)
	for {
		s := l.Rec.Stats()
		if s.Resyncs > resyncs && s.Synced && s.Pending == 0 && s.Failed == 0 && s.Applied == s.Desired {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("not re-applied within %s: %+v", within, s)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
