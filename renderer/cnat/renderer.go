package cnat

import (
	"net/netip"

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

// Renderer implements vppsvc.ServiceRendererAPI for one address family
// with cnat. It writes only through its vppcfg.Client. The incremental engine shared by
// all renderers (renderer.Core: per-service item index, filter shards,
// diff, commit, rollback) implements the service methods, Resync and the
// frontend-interface update; this type adds what depends on node IPs.
// A changed translation is a plain put: the VPP layer updates it in place
// (cnat keeps its ID and the sessions already made) or, when the LB type or
// flow hash changed, deletes and re-creates it
// (vppcfg.CNATTranslation.NeedsRecreate).
type Renderer struct {
	*renderer.Core[Node]
	fam Family
	cfg Config
	log logrus.FieldLogger
}

// New returns a renderer of family f writing through client. cfg must pass
// Validate; start from DefaultConfig. Nothing is written before the first
// Resync.
func New(f Family, client vppcfg.Client, cfg Config, log logrus.FieldLogger) (*Renderer, error) {
	if err := cfg.Validate(f); err != nil {
		return nil, err
	}
	if log == nil {
		log = logrus.StandardLogger()
	}
	r := &Renderer{fam: f, cfg: cfg, log: log.WithField("renderer", f.Name)}
	core, err := renderer.NewCore(renderer.CoreConfig[Node]{
		Name:   f.Name,
		Client: client,
		Log:    r.log,
		Shards: cfg.Shards(f),
		NodeOf: nodeOf(f),
		RenderService: func(svc *model.ContivService, node Node, items []vppcfg.Item) renderer.Rendering {
			return renderService(items, f, svc, node, &r.cfg)
		},
		RenderNode: func(node Node) []vppcfg.Item { return RenderNode(f, node, &r.cfg) },
		Warn: func(log logrus.FieldLogger, old, svc *model.ContivService) {
			if !f.SCTP {
				renderer.WarnSCTP(log, f.IP, old, svc, "not translated by cnat over "+f.IP.String())
			}
			r.warnUnreachableFromPods(log, old, svc)
		},
	})
	if err != nil {
		return nil, err
	}
	r.Core = core
	return r, nil
}

// UpdateNodePortServices re-renders, for new node IPs, the services whose
// translations depend on them: those with node ports (a translation per
// node IP of the family) and those with a ClusterIP, external IP or LoadBalancer IP
// that became or stopped being a node IP (real instead of exclusive VIP).
// Listed services use the processor's value; services the processor did
// not list are re-rendered from their last value; listed services the
// renderer does not know (their add has not succeeded yet) are left to that
// add. A change of the other family's node IPs only re-renders nothing.
func (r *Renderer) UpdateNodePortServices(nodeIPs model.IPAddresses, npServices []*model.ContivService) error {
	latest := make(map[model.ServiceID]*model.ContivService, len(npServices))
	for _, s := range npServices {
		latest[s.ID] = s
	}
	return r.Reconfigure("update node IPs", func(node Node, services []*model.ContivService) (Node, []renderer.Change) {
		moved := symmetricDifference(familyIPs(r.fam, node.IPs), familyIPs(r.fam, nodeIPs))
		node.IPs = nodeIPs
		if len(moved) == 0 {
			return node, nil
		}
		var changes []renderer.Change
		for _, old := range services {
			svc := old
			if s, ok := latest[old.ID]; ok {
				svc = s
			}
			if svc.HasNodePort() || old.HasNodePort() || hasAnyAddress(svc, moved) {
				changes = append(changes, renderer.Change{ID: svc.ID, Service: svc})
			}
		}
		return node, changes
	})
}

// UpdateLocalBackendIfs changes nothing: cnat translates on the FIB path of
// the VIP, whatever the interfaces, and the renderer source-NATs per path
// (by the Local flag of each backend) rather than with cnat's per-interface
// SNAT features, so no item depends on the backend interfaces.
func (r *Renderer) UpdateLocalBackendIfs(_, newIfNames model.Interfaces) error {
	r.log.WithField("interfaces", newIfNames.String()).Debug("backend interfaces changed; nothing to render")
	return nil
}

// UpdateServiceCIDRs re-renders the node's drop route per service CIDR of
// the family (vppsvc.ServiceCIDRRenderer). No service depends on them: a
// ClusterIP's exclusive cnat VIP drops its other ports whatever the CIDRs.
func (r *Renderer) UpdateServiceCIDRs(cidrs []netip.Prefix) error {
	return r.Reconfigure("update service CIDRs", func(node Node, _ []*model.ContivService) (Node, []renderer.Change) {
		node.ServiceCIDRs = renderer.FamilyCIDRs(cidrs, r.fam.IP)
		return node, nil
	})
}

// warnUnreachableFromPods logs, when a service becomes so, an
// externalTrafficPolicy: Local service with external frontends of the
// family and no
// usable endpoint on this node, on a node whose configuration names
// neither its pods nor its kernel's sources (Config.LocalClients,
// NodeSources): its node ports, external IPs and LoadBalancer IPs then drop
// this node's pods and the node itself, where kube-proxy sends them to
// every endpoint of the cluster.
func (r *Renderer) warnUnreachableFromPods(log logrus.FieldLogger, old, svc *model.ContivService) {
	unreachable := func(s *model.ContivService) bool {
		if s == nil || len(r.cfg.OwnClients(r.fam)) > 0 || s.ExternalTrafficPolicy != model.TrafficPolicyLocal {
			return false
		}
		if _, ok := clusterIP(r.fam, s); !ok {
			return false
		}
		// Only NodePort and LoadBalancer services may set the policy, so
		// every port has external frontends.
		for _, p := range s.Ports {
			external := renderer.Frontend{Kind: renderer.NodePortFrontend, PortName: p.Name}
			cluster := renderer.Frontend{Kind: renderer.ClusterIPFrontend, PortName: p.Name}
			if len(renderer.Backends(s, external, r.fam.IP)) == 0 && len(renderer.Backends(s, cluster, r.fam.IP)) > 0 {
				return true
			}
		}
		return false
	}
	if unreachable(svc) && !unreachable(old) {
		log.WithField("service", svc.ID.String()).Warning("externalTrafficPolicy Local without an " + r.fam.IP.String() +
			" endpoint on this node: its node ports, external IPs and LoadBalancer IPs are unreachable from this node's pods and the node itself; set localClients and nodeSources to serve them from every endpoint (" + r.fam.Doc + ")")
	}
}

// symmetricDifference returns the addresses in exactly one of a and b.
func symmetricDifference(a, b model.IPAddresses) model.IPAddresses {
	var out model.IPAddresses
	for _, ip := range a.Union(b) {
		if a.Has(ip) != b.Has(ip) {
			out = append(out, ip)
		}
	}
	return out
}

// hasAnyAddress reports whether a ClusterIP, external IP or LoadBalancer IP
// of svc is in ips.
func hasAnyAddress(svc *model.ContivService, ips model.IPAddresses) bool {
	for _, set := range []model.IPAddresses{svc.ClusterIPs, svc.ExternalIPs, svc.LoadBalancerIPs} {
		for _, ip := range set {
			if ips.Has(ip) {
				return true
			}
		}
	}
	return false
}

// familyIPs returns the addresses of ips in family f.
func familyIPs(f Family, ips model.IPAddresses) model.IPAddresses {
	if f.is6() {
		return ips.IPv6()
	}
	return ips.IPv4()
}
