package cnat

import (
	"net/netip"

	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// Config is the node configuration of a cnat renderer, for the addresses
// of its family (Family): the faces renderer/ipv6 and renderer/cnat4 define
// their Config as this type. Start from DefaultConfig and override fields
// (renderer.LoadConfigFile does this for a YAML file); New rejects a Config
// that Validate rejects. The documents are docs/renderer-ipv6.md and
// docs/renderer-cnat4.md.
type Config struct {
	// SNATAddress is the address of the family cnat writes into the source of the
	// flows it source-NATs: clients of external frontends
	// (externalTrafficPolicy Cluster) and, with HairpinSNAT, clients of
	// endpoints on this node. Backends reply to it, so it must route to this
	// node; the node's own address of the family is the usual choice. Required: it has
	// no default because the renderer cannot know the node.
	SNATAddress netip.Addr `json:"snatAddress" yaml:"snatAddress"`

	// LoadBalancing is cnat's algorithm for picking the endpoint of a new
	// flow: "default" (flow hash modulo the number of endpoints: cheapest,
	// but adding or removing an endpoint moves most new flows of a client to
	// another endpoint) or "maglev" (a 1009-slot table per translation: a
	// change moves about 1/N of the flows). Default "default". Services with
	// session affinity always use maglev.
	LoadBalancing LBAlgorithm `json:"loadBalancing" yaml:"loadBalancing"`

	// HairpinSNAT is how a pod reaching itself through its own service gets
	// the reply: true (HairpinSNATLocalPaths, the default) source-NATs every
	// path to an endpoint on this node, false (HairpinSNATOff) none, and
	// "hairpin-only" (HairpinSNATOnly) only the flows whose client is the
	// endpoint. See the renderer's document, "Hairpin".
	HairpinSNAT HairpinSNAT `json:"hairpinSNAT" yaml:"hairpinSNAT"`

	// UplinkInterfaces are the frontend interfaces through which clients
	// outside the cluster arrive. With hairpinSNAT "hairpin-only", every
	// other frontend interface (this node's pods, the host) gets cnat's
	// feature nodes; the uplinks never do, so their clients keep the VIP
	// path and the input ACL before it. Default ["uplink0"].
	UplinkInterfaces []string `json:"uplinkInterfaces" yaml:"uplinkInterfaces"`
	// NodeSources are the addresses (or prefixes) of the family the node's own
	// kernel sends from as VPP sees it: its host-link address, since the
	// node IPs are VPP's. A LoadBalancer IP whose loadBalancerSourceRanges
	// hold a node IP admits them, so that the node reaches it as
	// kube-proxy's node does. Default none.
	NodeSources []netip.Prefix `json:"nodeSources" yaml:"nodeSources"`
	// LocalClients are this node's pod CIDRs of the family. With them (or
	// NodeSources), an externalTrafficPolicy: Local service without an
	// endpoint on this node still serves this node's pods and the node
	// itself from every endpoint of the cluster through its node ports,
	// external IPs and LoadBalancer IPs, as kube-proxy does, while clients
	// from anywhere else are dropped. Without either, such frontends drop
	// every client (the renderer's document, "externalTrafficPolicy: Local
	// from inside the cluster"). Default none.
	LocalClients []netip.Prefix `json:"localClients" yaml:"localClients"`

	// ACLShards is the number of filter ACLs (1–256) that hold the
	// renderer's filter rules, each service's rules in the shard its ID
	// hashes to. Default 64. See the renderer's document, "Filtering".
	ACLShards int `json:"aclShards" yaml:"aclShards"`

	// ServiceCIDRs are service CIDRs of the family fixed for this renderer: when
	// set they win over those the processor reports (Node.ServiceCIDRs,
	// from --service-cluster-ip-range or the cluster's ServiceCIDR
	// objects). Traffic to an address of a service CIDR that no cnat VIP
	// holds is dropped by one route per CIDR. A ClusterIP's other ports
	// need nothing: its exclusive cnat VIP drops them.
	ServiceCIDRs []netip.Prefix `json:"-" yaml:"-"`
}

// LBAlgorithm names a cnat load-balancing type in the configuration.
type LBAlgorithm string

const (
	LBDefault LBAlgorithm = "default"
	LBMaglev  LBAlgorithm = "maglev"
)

// lbType returns the cnat LB type, and false for an unknown name.
func (a LBAlgorithm) lbType() (vppcfg.CNATLBType, bool) {
	switch a {
	case LBDefault:
		return vppcfg.CNATLBDefault, true
	case LBMaglev:
		return vppcfg.CNATLBMaglev, true
	}
	return 0, false
}

// DefaultConfig returns the documented defaults. SNATAddress is left unset:
// it depends on the node and must be configured.
func DefaultConfig() Config {
	return Config{LoadBalancing: LBDefault, HairpinSNAT: HairpinSNATLocalPaths, ACLShards: renderer.DefaultACLShards,
		UplinkInterfaces: []string{"uplink0"}}
}

// Validate reports every invalid field, named by its YAML path, for a
// renderer of family f.
func (c *Config) Validate(f Family) error {
	var errs []error
	switch a := c.SNATAddress; {
	case !a.IsValid():
		errs = append(errs, renderer.FieldErrorf("snatAddress", "required: the %[1]s source address of source-NATed flows (usually the node's %[1]s address)", f.IP))
	case (f.is6() && (!a.Is6() || a.Is4In6())) || (!f.is6() && !a.Is4()):
		errs = append(errs, renderer.FieldErrorf("snatAddress", "%s is not an %s address", a, f.IP))
	case a.IsUnspecified() || a.IsMulticast() || a.IsLoopback() || a.IsLinkLocalUnicast():
		// cnat reads an unspecified source endpoint as "no source NAT", and
		// replies to the others cannot be routed back to this node.
		errs = append(errs, renderer.FieldErrorf("snatAddress", "%s is not a routable unicast address", a))
	}
	if _, ok := c.LoadBalancing.lbType(); !ok {
		errs = append(errs, renderer.FieldErrorf("loadBalancing", "%q is not %q or %q", c.LoadBalancing, LBDefault, LBMaglev))
	}
	switch c.HairpinSNAT {
	case HairpinSNATLocalPaths, HairpinSNATOff:
	case HairpinSNATOnly:
		if len(c.UplinkInterfaces) == 0 {
			errs = append(errs, renderer.FieldErrorf("uplinkInterfaces", "hairpinSNAT %q needs the uplinks: without them every client would be treated as a pod", HairpinSNATOnly))
		}
	default:
		errs = append(errs, renderer.FieldErrorf("hairpinSNAT", "%q is not true, false or %q", string(c.HairpinSNAT), HairpinSNATOnly))
	}
	if err := renderer.ValidateACLShards("aclShards", c.ACLShards); err != nil {
		errs = append(errs, err)
	}
	return renderer.JoinFieldErrors(f.Name, errs...)
}

// Shards is the set of filter ACLs of the renderer of family f.
func (c *Config) Shards(f Family) renderer.ACLShards {
	return renderer.ACLShards{Renderer: f.Name, Count: c.ACLShards, Family: f.IP}
}
