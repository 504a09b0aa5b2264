package ipv6

import (
	"github.com/sirupsen/logrus"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/renderer/cnat"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// Config is the node configuration of the IPv6 renderer (cnat.Config, whose
// fields hold IPv6 addresses here). Start from DefaultConfig and override
// fields (renderer.LoadConfigFile does this for a YAML file); New rejects a
// Config that Validate rejects.
type Config cnat.Config

// The configuration's value types and names, as renderer/cnat defines them.
type (
	LBAlgorithm = cnat.LBAlgorithm
	HairpinSNAT = cnat.HairpinSNAT
	// Node is the node-wide context a translation depends on.
	Node = cnat.Node
	// Frontend is one IPv6 frontend and whether its address is real.
	Frontend = cnat.Frontend
)

const (
	LBDefault             = cnat.LBDefault
	LBMaglev              = cnat.LBMaglev
	HairpinSNATLocalPaths = cnat.HairpinSNATLocalPaths
	HairpinSNATOff        = cnat.HairpinSNATOff
	HairpinSNATOnly       = cnat.HairpinSNATOnly
)

// DefaultConfig returns the documented defaults. SNATAddress is left unset:
// it depends on the node and must be configured.
func DefaultConfig() Config { return Config(cnat.DefaultConfig()) }

// Validate reports every invalid field, named by its YAML path.
func (c *Config) Validate() error { return c.cnat().Validate(family) }

// cnat is c as renderer/cnat takes it.
func (c *Config) cnat() *cnat.Config { return (*cnat.Config)(c) }

// shards is the renderer's set of filter ACLs.
func (c *Config) shards() renderer.ACLShards { return c.cnat().Shards(family) }

// Renderer implements vppsvc.ServiceRendererAPI for IPv6 with cnat
// (cnat.Renderer).
type Renderer struct {
	*cnat.Renderer
	// cfg is the configuration it was built with, as this package's
	// tests read it.
	cfg Config
}

// New returns a renderer writing through client. cfg must pass Validate;
// start from DefaultConfig. Nothing is written before the first Resync.
func New(client vppcfg.Client, cfg Config, log logrus.FieldLogger) (*Renderer, error) {
	r, err := cnat.New(family, client, cnat.Config(cfg), log)
	if err != nil {
		return nil, err
	}
	return &Renderer{Renderer: r, cfg: cfg}, nil
}

// RenderService translates one service into what implements its IPv6
// frontends (cnat.RenderService).
func RenderService(svc *model.ContivService, node Node, cfg *Config) renderer.Rendering {
	return cnat.RenderService(family, svc, node, cfg.cnat())
}

// RenderNode returns the renderer's node-wide items (cnat.RenderNode).
func RenderNode(node Node, cfg *Config) []vppcfg.Item {
	return cnat.RenderNode(family, node, cfg.cnat())
}

// Frontends returns the IPv6 TCP and UDP frontends of a service
// (cnat.Frontends).
func Frontends(svc *model.ContivService, nodeIPs model.IPAddresses) []Frontend {
	return cnat.Frontends(family, svc, nodeIPs)
}

// Claims are the VPP layer claims of this renderer (cnat.Claims): every
// IPv6 cnat translation, and cnat-input-ip6 and cnat-output-ip6 on every
// interface.
func Claims() map[string]vppcfg.UntaggedClaimFunc { return cnat.Claims(family) }
