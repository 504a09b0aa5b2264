package nat44

import (
	"iter"
	"net/netip"
	"slices"

	"github.com/sirupsen/logrus"

	"github.com/vppsvc/vppsvc"
	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/vppcfg"
)

var (
	_ vppsvc.ServiceRendererAPI  = (*Renderer)(nil)
	_ vppsvc.ServiceCIDRRenderer = (*Renderer)(nil)
)

// Renderer implements vppsvc.ServiceRendererAPI for IPv4 with NAT44-ED. It
// writes only through its vppcfg.Client. The incremental engine shared by
// all renderers (renderer.Core: per-service item index, filter shards,
// node-wide state that follows the services, diff, commit, rollback)
// implements the service methods, Resync and the frontend-interface update
// (outside roles follow through RenderNode); this type adds what depends on
// node IPs, service CIDRs and backend interfaces.
type Renderer struct {
	*renderer.Core[Node]
	cfg Config
}

// New returns a renderer writing through client. cfg must pass Validate;
// start from DefaultConfig. Nothing is written before the first Resync.
func New(client vppcfg.Client, cfg Config, log logrus.FieldLogger) (*Renderer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = logrus.StandardLogger()
	}
	cfg.EgressSNAT.IdentityPorts = slices.Clone(cfg.EgressSNAT.IdentityPorts)
	r := &Renderer{cfg: cfg}
	core, err := renderer.NewCore(renderer.CoreConfig[Node]{
		Name:   Name,
		Client: client,
		Log:    log.WithField("renderer", Name),
		Shards: cfg.shards(),
		NodeOf: nodeOf,
		RenderService: func(svc *model.ContivService, node Node, items []vppcfg.Item) renderer.Rendering {
			return renderService(items, svc, node, &r.cfg)
		},
		RenderNode: func(node Node) []vppcfg.Item { return RenderNode(node, &r.cfg) },
		Claim:      claimOf,
		Warn: func(log logrus.FieldLogger, old, svc *model.ContivService) {
			warnSCTP(log, old, svc)
			warnLBCapacity(log, old, svc, &r.cfg)
		},
		NodeConflict: "frontend is an egress SNAT identity port of the node; not rendered",
		Demand:       shortCircuitDemand(),
	})
	if err != nil {
		return nil, err
	}
	r.Core = core
	return r, nil
}

// UpdateNodePortServices re-renders the node-port frontends for new node
// IPs. Services with node ports the processor did not list are re-rendered
// from their last value; listed services the renderer does not know (their
// add has not succeeded yet) are left to that add.
func (r *Renderer) UpdateNodePortServices(nodeIPs model.IPAddresses, npServices []*model.ContivService) error {
	latest := make(map[model.ServiceID]*model.ContivService, len(npServices))
	for _, s := range npServices {
		latest[s.ID] = s
	}
	return r.Reconfigure("update node IPs", func(node Node, services []*model.ContivService) (Node, []renderer.Change) {
		node.IPs = nodeIPs
		var changes []renderer.Change
		for _, svc := range services {
			if s, ok := latest[svc.ID]; ok {
				changes = append(changes, renderer.Change{ID: svc.ID, Service: s})
			} else if svc.HasNodePort() {
				changes = append(changes, renderer.Change{ID: svc.ID, Service: svc})
			}
		}
		return node, changes
	})
}

// UpdateServiceCIDRs re-renders the drop routes for new service CIDRs
// (vppsvc.ServiceCIDRRenderer): the node's route per CIDR, and the
// ClusterIP routes of the services whose IPv4 ClusterIPs a CIDR starts or
// stops covering; no other service is written. With Config.ServiceCIDRs
// set nothing changes.
func (r *Renderer) UpdateServiceCIDRs(cidrs []netip.Prefix) error {
	return r.ReconfigureSome("update service CIDRs", func(node Node, services iter.Seq[*model.ContivService]) (Node, []renderer.Change) {
		before := serviceCIDRs(node, &r.cfg)
		node.ServiceCIDRs = renderer.FamilyCIDRs(cidrs, renderer.IPv4)
		return node, renderer.ServiceCIDRChanges(before, serviceCIDRs(node, &r.cfg), renderer.IPv4, services)
	})
}

// serviceCIDRs are the IPv4 service CIDRs in force: the configured ones,
// else the reported ones.
func serviceCIDRs(node Node, cfg *Config) []netip.Prefix {
	return renderer.EffectiveServiceCIDRs(cfg.ServiceCIDRs, node.ServiceCIDRs)
}

// UpdateLocalBackendIfs moves the inside role to the new set of backend
// interfaces.
func (r *Renderer) UpdateLocalBackendIfs(_, newIfNames model.Interfaces) error {
	return r.Reconfigure("update backend interfaces", func(node Node, _ []*model.ContivService) (Node, []renderer.Change) {
		node.BackendIfs = newIfNames
		return node, nil
	})
}

// warnLBCapacity logs, when a service starts to have more IPv4 endpoints on
// a port than one VPP load-balancing mapping can weigh (their weights sum
// past vppcfg.MaxLBProbabilitySum), that the endpoints past that sum get no
// new sessions (lbLocals).
func warnLBCapacity(log logrus.FieldLogger, old, svc *model.ContivService, cfg *Config) {
	over := func(s *model.ContivService) (string, int) {
		if s == nil {
			return "", 0
		}
		for _, p := range s.Ports { // sorted by name, like PortNames, without the list
			sum := 0
			for _, b := range p.Backends {
				if b.IP.Is4() {
					sum += backendWeight(b, cfg)
				}
			}
			if sum > vppcfg.MaxLBProbabilitySum {
				return p.Name, sum
			}
		}
		return "", 0
	}
	port, sum := over(svc)
	if sum == 0 {
		return
	}
	if _, before := over(old); before != 0 {
		return
	}
	log.WithFields(logrus.Fields{"service": svc.ID.String(), "port": port, "weight": sum, "max": vppcfg.MaxLBProbabilitySum}).
		Warn("more IPv4 endpoints than one NAT44-ED load-balancing mapping can weigh (VPP sums the weights in 8 bits); the endpoints past the limit get no new sessions")
}

// warnSCTP logs, once per change of the set, the SCTP ports of a service:
// NAT44-ED cannot translate SCTP, so they are skipped.
func warnSCTP(log logrus.FieldLogger, old, svc *model.ContivService) {
	renderer.WarnSCTP(log, renderer.IPv4, old, svc, "not supported by NAT44-ED")
}
