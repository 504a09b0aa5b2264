package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/sirupsen/logrus"
	"go.fd.io/govpp/adapter"

	vppsvc "github.com/vppsvc/vppsvc"
	"github.com/vppsvc/vppsvc/internal/pipeline"
	"github.com/vppsvc/vppsvc/processor"
	"github.com/vppsvc/vppsvc/vppcfg/engine"
	"github.com/vppsvc/vppsvc/vppcfg/govppdriver"
)

// Options configure an Agent.
type Options struct {
	NodeName string
	// FrontendInterfaces are the uplink and host interfaces.
	FrontendInterfaces []string
	Config             Config
	// VPP is the adapter to VPP: vppsock.New(socket) for a real VPP (it
	// writes the driver's windows of requests at once; govpp's socketclient
	// works too, a request a write), fakevpp in tests and in the
	// render/trace commands.
	VPP adapter.VppAPI
	Log logrus.FieldLogger
	// RetryMin/RetryMax bound retries in the processor and the VPP layer;
	// zero keeps their defaults.
	RetryMin, RetryMax time.Duration
	// ResyncInterval, when positive, makes the VPP layer compare VPP with the
	// desired state periodically, repairing out-of-band changes.
	ResyncInterval time.Duration
	// Observer, when set, is told about every renderer call.
	Observer Observer
	// Driver tunes the govpp driver (reconnect interval, pipeline depth…);
	// its Logger defaults to Log.
	Driver govppdriver.Options
	// ExtraRenderers are renderers of the embedder's, by name, that run
	// next to the NAT44 and IPv6 renderers and program VPP through their
	// own client of the VPP layer (see ExtraRenderer).
	ExtraRenderers map[string]ExtraRenderer
}

// Agent is the wired pipeline of one node.
type Agent struct {
	Processor  *processor.Processor
	Reconciler *engine.Reconciler
	Driver     *govppdriver.Driver
	// Renderers are the registered renderers by name (unwrapped).
	Renderers map[string]vppsvc.ServiceRendererAPI

	gate      *govppdriver.ConnectGate
	observer  Observer
	layerDone chan struct{}
	layerErr  error
}

// New connects to VPP and wires processor, renderers and VPP layer. Nothing
// is applied to VPP before Start.
func New(opts Options) (*Agent, error) {
	log := opts.Log
	if log == nil {
		log = logrus.StandardLogger()
	}
	if opts.Driver.Logger == nil {
		opts.Driver.Logger = log
	}
	cfg := opts.Config
	if err := checkExtraRenderers(opts.ExtraRenderers); err != nil {
		return nil, err
	}
	drv, err := govppdriver.Connect(opts.VPP, opts.Driver)
	if err != nil {
		return nil, err
	}
	gate := govppdriver.NewConnectGate(drv)
	p, err := pipeline.New(gate, pipelineConfig(opts, cfg, log))
	if err != nil {
		gate.Close()
		return nil, err
	}
	return &Agent{Processor: p.Processor, Reconciler: p.Reconciler, Driver: drv, Renderers: p.Renderers,
		gate: gate, observer: opts.Observer, layerDone: make(chan struct{})}, nil
}

// Start runs the VPP layer and the processor's retry loop until ctx ends, and
// returns once the VPP layer has compared VPP with the desired state for the
// first time (or ctx ends first). The VPP layer starts once govpp has
// connected (see govppdriver.ConnectGate); until then commits are only
// recorded. After Start, LayerDone tells when the VPP layer stops for good.
func (a *Agent) Start(ctx context.Context) error {
	go a.Processor.Run(ctx)
	select {
	case <-a.gate.Connected():
	case <-ctx.Done():
		close(a.layerDone) // never started
		return ctx.Err()
	}
	go func() {
		a.layerErr = a.Reconciler.Start(ctx)
		close(a.layerDone)
	}()
	select {
	case <-a.Reconciler.Synced():
		return nil
	case <-a.layerDone:
		if a.layerErr == nil {
			return ctx.Err()
		}
		return fmt.Errorf("VPP layer: %w", a.layerErr)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// LayerDone is closed when the VPP layer started by Start has stopped:
// because ctx ended (also before VPP ever connected), or because VPP is
// incompatible with the driver (LayerErr).
func (a *Agent) LayerDone() <-chan struct{} { return a.layerDone }

// LayerErr is why the VPP layer stopped: nil when its context ended. Valid
// once LayerDone is closed.
func (a *Agent) LayerErr() error {
	select {
	case <-a.layerDone:
		return a.layerErr
	default:
		return nil
	}
}

// Close disconnects from VPP. VPP keeps its configuration, so the next agent
// resyncs hitlessly.
func (a *Agent) Close() { a.gate.Close() }
