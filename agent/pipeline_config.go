package agent

import (
	"github.com/sirupsen/logrus"

	vppsvc "github.com/vppsvc/vppsvc"
	"github.com/vppsvc/vppsvc/internal/pipeline"
)

// pipelineConfig is what pipeline.New needs of the options (cfg is
// opts.Config).
func pipelineConfig(opts Options, cfg Config, log logrus.FieldLogger) pipeline.Config {
	pc := pipeline.Config{
		NodeName: opts.NodeName, FrontendInterfaces: opts.FrontendInterfaces,
		NodePortAddresses: opts.Config.nodePortAddresses(), ServiceCIDRs: opts.Config.serviceCIDRs(),
		Log: log, RetryMin: opts.RetryMin, RetryMax: opts.RetryMax, ResyncInterval: opts.ResyncInterval,
		Extra: map[string]pipeline.Extra{},
	}
	switch {
	case cfg.DisableIPv4:
	case cfg.UseCNAT4():
		pc.CNAT4 = &cfg.CNAT4
	default:
		pc.NAT44 = &cfg.NAT44
	}
	if !cfg.DisableIPv6 {
		pc.IPv6 = &cfg.IPv6
	}
	for name, x := range opts.ExtraRenderers {
		pc.Extra[name] = pipeline.Extra{New: x.New, Claim: x.Claim}
	}
	if opts.Observer != nil {
		pc.Wrap = func(name string, r vppsvc.ServiceRendererAPI) vppsvc.ServiceRendererAPI {
			return &observedRenderer{name: name, r: r, obs: opts.Observer}
		}
	}
	return pc
}
