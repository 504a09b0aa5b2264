// Package pipeline wires one node's control plane over a VPP driver: the
// processor, the NAT44 and IPv6 renderers (and any extra ones), each on its
// own client of one VPP layer, with the renderers' claims on untagged VPP
// objects. It is the one place these parts are connected: agent.New builds
// its agent with it over the govpp driver, and the benchmarks build theirs
// with it over a driver that applies every op at once (which agent.New,
// taking only a govpp adapter, cannot be given without a new public
// option no embedder needs).
//
// Running the parts (the VPP layer's Start, the processor's retry loop) is
// the caller's: the agent gates it on govpp's first connection, a benchmark
// does not.
package pipeline

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"time"

	"github.com/sirupsen/logrus"

	vppsvc "github.com/vppsvc/vppsvc"
	"github.com/vppsvc/vppsvc/processor"
	"github.com/vppsvc/vppsvc/renderer/cnat4"
	"github.com/vppsvc/vppsvc/renderer/ipv6"
	"github.com/vppsvc/vppsvc/renderer/nat44"
	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
	"github.com/vppsvc/vppsvc/vppcfg/engine"
)

// Config is what the parts are built from.
type Config struct {
	NodeName           string
	FrontendInterfaces []string
	NodePortAddresses  processor.NodePortAddresses
	// ServiceCIDRs are the configured service CIDRs (processor.Config).
	ServiceCIDRs []netip.Prefix
	// NAT44 and IPv6 configure the agent's own renderers; nil leaves one
	// out (its family is not rendered).
	NAT44 *nat44.Config
	// CNAT4 configures the cnat IPv4 renderer, the alternative to NAT44:
	// at most one of the two is set.
	CNAT4 *cnat4.Config
	IPv6  *ipv6.Config
	// Extra renderers by name, built after NAT44 and IPv6 in name order.
	Extra map[string]Extra
	Log   logrus.FieldLogger
	// RetryMin/RetryMax bound the processor's and the VPP layer's retries;
	// zero keeps their defaults.
	RetryMin, RetryMax time.Duration
	// ResyncInterval, when positive, makes the VPP layer compare VPP with
	// the desired state periodically.
	ResyncInterval time.Duration
	// Wrap, when set, is what the processor calls instead of each renderer
	// (the agent's Observer); Pipeline.Renderers keeps them unwrapped.
	Wrap func(name string, r vppsvc.ServiceRendererAPI) vppsvc.ServiceRendererAPI
}

// Extra is a renderer of the embedder's (agent.ExtraRenderer).
type Extra struct {
	New   func(client vppcfg.Client, log logrus.FieldLogger) (vppsvc.ServiceRendererAPI, error)
	Claim vppcfg.UntaggedClaimFunc
}

// Pipeline is the wired, not yet running, control plane.
type Pipeline struct {
	Processor  *processor.Processor
	Reconciler *engine.Reconciler
	// Renderers are the registered renderers by name, unwrapped.
	Renderers map[string]vppsvc.ServiceRendererAPI
}

// New builds the VPP layer over drv, the renderers on its clients and the
// processor, and registers the renderers with the processor. Nothing is
// sent to drv before the VPP layer starts.
func New(drv driverapi.Driver, cfg Config) (*Pipeline, error) {
	log := cfg.Log
	if log == nil {
		log = logrus.StandardLogger()
	}
	rec := engine.NewReconciler(drv, engine.Options{
		Logger: log, RetryMin: cfg.RetryMin, RetryMax: cfg.RetryMax, ResyncInterval: cfg.ResyncInterval,
		Claims: claims(cfg),
	})
	p := &Pipeline{
		Processor: processor.New(processor.Config{
			NodeName: cfg.NodeName, FrontendInterfaces: cfg.FrontendInterfaces, Logger: log,
			RetryMin: cfg.RetryMin, RetryMax: cfg.RetryMax, NodePortAddresses: cfg.NodePortAddresses,
			ServiceCIDRs: cfg.ServiceCIDRs,
		}),
		Reconciler: rec,
		Renderers:  map[string]vppsvc.ServiceRendererAPI{},
	}
	if cfg.NAT44 != nil {
		r, err := nat44.New(rec.Client(nat44.Name), *cfg.NAT44, log.WithField("renderer", nat44.Name))
		if err != nil {
			return nil, err
		}
		p.register(nat44.Name, r, cfg.Wrap)
	}
	if cfg.CNAT4 != nil {
		if cfg.NAT44 != nil {
			return nil, fmt.Errorf("both IPv4 renderers, %s and %s: their cnat objects overlap, run one", nat44.Name, cnat4.Name)
		}
		r, err := cnat4.New(rec.Client(cnat4.Name), *cfg.CNAT4, log.WithField("renderer", cnat4.Name))
		if err != nil {
			return nil, err
		}
		p.register(cnat4.Name, r, cfg.Wrap)
	}
	if cfg.IPv6 != nil {
		r, err := ipv6.New(rec.Client(ipv6.Name), *cfg.IPv6, log.WithField("renderer", ipv6.Name))
		if err != nil {
			return nil, err
		}
		p.register(ipv6.Name, r, cfg.Wrap)
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Extra)) {
		r, err := cfg.Extra[name].New(rec.Client(name), log.WithField("renderer", name))
		if err != nil {
			return nil, fmt.Errorf("extra renderer %q: %w", name, err)
		}
		p.register(name, r, cfg.Wrap)
	}
	return p, nil
}

func (p *Pipeline) register(name string, r vppsvc.ServiceRendererAPI, wrap func(string, vppsvc.ServiceRendererAPI) vppsvc.ServiceRendererAPI) {
	p.Renderers[name] = r
	if wrap != nil {
		r = wrap(name, r)
	}
	p.Processor.RegisterRenderer(name, r)
}

// claims are the VPP layer's claims: those of the renderers that run.
func claims(cfg Config) map[string]vppcfg.UntaggedClaimFunc {
	out := map[string]vppcfg.UntaggedClaimFunc{}
	if cfg.NAT44 != nil {
		maps.Copy(out, nat44.Claims())
	}
	if cfg.CNAT4 != nil {
		maps.Copy(out, cnat4.Claims())
	}
	if cfg.IPv6 != nil {
		maps.Copy(out, ipv6.Claims())
	}
	for name, x := range cfg.Extra {
		if x.Claim != nil {
			out[name] = x.Claim
		}
	}
	return out
}
