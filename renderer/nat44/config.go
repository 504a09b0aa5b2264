package nat44

import (
	"net/netip"
	"strconv"
	"strings"

	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// Config is the node configuration of the NAT44 renderer. Start from
// DefaultConfig and override fields (renderer.LoadConfigFile does this for a
// YAML file); New rejects a Config that Validate rejects.
type Config struct {
	// TwiceNATAddress is the address VPP puts in the source of twice-NATed
	// sessions: clients of external frontends (externalTrafficPolicy
	// Cluster) and pods that reach themselves through a ClusterIP. Backends
	// on other nodes reply to it, so it must route to this node; the node's
	// own IP is the usual choice. Required: it has no default because the
	// renderer cannot know the node.
	TwiceNATAddress netip.Addr `json:"twiceNATAddress" yaml:"twiceNATAddress"`

	// LocalEndpointWeight and RemoteEndpointWeight are the relative weights
	// (1–255) with which VPP picks endpoints on this node and on other nodes
	// for a new session. Default 1 and 1: every endpoint equally, as
	// kube-proxy does. A higher local weight keeps more traffic on the node.
	LocalEndpointWeight  int `json:"localEndpointWeight" yaml:"localEndpointWeight"`
	RemoteEndpointWeight int `json:"remoteEndpointWeight" yaml:"remoteEndpointWeight"`

	// PodVRF is the VRF of pod endpoints, and NAT44-ED's inside VRF.
	// Default 0.
	PodVRF uint32 `json:"podVRF" yaml:"podVRF"`
	// HostVRF is the VRF of host-network endpoints (an endpoint IP that is a
	// node IP), and NAT44-ED's outside VRF. Default 0.
	HostVRF uint32 `json:"hostVRF" yaml:"hostVRF"`

	// SessionLimit is NAT44-ED's per-thread session limit; 0 (default)
	// keeps VPP's 64512.
	SessionLimit uint32 `json:"sessionLimit" yaml:"sessionLimit"`
	// Timeouts are NAT44-ED's session timeouts in seconds; 0 (default)
	// keeps VPP's value for that field.
	Timeouts Timeouts `json:"timeouts" yaml:"timeouts"`

	// EgressSNAT configures source NAT of pod traffic leaving the node.
	// Disabled by default.
	EgressSNAT EgressSNAT `json:"egressSNAT" yaml:"egressSNAT"`

	// ACLShards is the number of filter ACLs (1–256) that hold the
	// renderer's filter rules, each service's rules in the shard its ID
	// hashes to. Default 64. See docs/renderer-nat44.md, "Filtering".
	ACLShards int `json:"aclShards" yaml:"aclShards"`
	// UplinkInterfaces are the frontend interfaces through which clients
	// outside the cluster arrive; every other frontend interface (this
	// node's pods, the host) carries internal clients, which reach the
	// external frontends of an externalTrafficPolicy Local service through
	// its ClusterIP, as kube-proxy short-circuits them (docs/renderer-nat44.md,
	// "Internal clients of externalTrafficPolicy Local"). Default
	// ["uplink0"]; the egress SNAT interface counts as an uplink. Empty
	// turns the short-circuit off.
	UplinkInterfaces []string `json:"uplinkInterfaces" yaml:"uplinkInterfaces"`
	// NodeSources are the IPv4 addresses (or prefixes) the node's own
	// kernel sends from as VPP sees it: its host-link address, since the
	// node IPs are VPP's. A LoadBalancer IP whose loadBalancerSourceRanges
	// hold a node IP admits them, so that the node reaches it as
	// kube-proxy's node does. Default none.
	NodeSources []netip.Prefix `json:"nodeSources" yaml:"nodeSources"`
	// ServiceCIDRs are IPv4 service CIDRs fixed for this renderer: when
	// set they win over those the processor reports (Node.ServiceCIDRs,
	// from --service-cluster-ip-range or the cluster's ServiceCIDR
	// objects), which is how the agent passes its configured ones. Traffic
	// to an address of a service CIDR that no service translates is
	// dropped by one route per CIDR; each ClusterIP outside every service
	// CIDR gets its own drop route for its other ports.
	ServiceCIDRs []netip.Prefix `json:"-" yaml:"-"`
}

// Timeouts are NAT44-ED session timeouts in seconds; 0 keeps VPP's default
// (udp 300, tcpEstablished 7440, tcpTransitory 240, icmp 60).
type Timeouts struct {
	UDP            uint32 `json:"udp" yaml:"udp"`
	TCPEstablished uint32 `json:"tcpEstablished" yaml:"tcpEstablished"`
	TCPTransitory  uint32 `json:"tcpTransitory" yaml:"tcpTransitory"`
	ICMP           uint32 `json:"icmp" yaml:"icmp"`
}

// EgressSNAT rewrites the source of pod traffic that leaves through the
// uplink to the node's address (dynamic SNAT). NAT44-ED only does dynamic
// SNAT on an output-feature interface while forwarding is on, so the uplink
// then gets the output role instead of the outside role (VPP refuses both on
// one interface); it still translates service traffic arriving on it.
//
// Everything leaving the interface is a candidate, so enable it only when
// traffic between pods of different nodes does not leave through this
// interface unencapsulated (for example with a VXLAN overlay, whose outer
// header IdentityPorts exempts).
type EgressSNAT struct {
	// Enabled turns egress SNAT on. Default false.
	Enabled bool `json:"enabled" yaml:"enabled"`
	// Interface is the VPP name of the uplink. Required when enabled.
	Interface string `json:"interface" yaml:"interface"`
	// Address is the IPv4 address (normally the node IP on the uplink)
	// pod traffic is translated to. Required when enabled.
	Address netip.Addr `json:"address" yaml:"address"`
	// IdentityPorts are ports of Address that must never be translated,
	// such as the VXLAN port of tunnels VPP itself terminates. Default
	// [{port: 4789, protocol: udp}].
	IdentityPorts []PortProtocol `json:"identityPorts" yaml:"identityPorts"`
}

// PortProtocol is one port of one protocol ("tcp" or "udp").
type PortProtocol struct {
	Port     uint16 `json:"port" yaml:"port"`
	Protocol string `json:"protocol" yaml:"protocol"`
}

// vppProtocol returns the protocol as VPP numbers it, and false when it is
// neither TCP nor UDP.
func (p PortProtocol) vppProtocol() (vppcfg.Protocol, bool) {
	switch strings.ToLower(p.Protocol) {
	case "tcp":
		return vppcfg.ProtoTCP, true
	case "udp":
		return vppcfg.ProtoUDP, true
	}
	return 0, false
}

// DefaultConfig returns the documented defaults. TwiceNATAddress is left
// unset: it depends on the node and must be configured.
func DefaultConfig() Config {
	return Config{
		LocalEndpointWeight:  1,
		RemoteEndpointWeight: 1,
		ACLShards:            renderer.DefaultACLShards,
		UplinkInterfaces:     []string{"uplink0"},
		EgressSNAT: EgressSNAT{
			IdentityPorts: []PortProtocol{{Port: 4789, Protocol: "udp"}},
		},
	}
}

// Validate reports every invalid field, named by its YAML path.
func (c *Config) Validate() error {
	var errs []error
	if !c.TwiceNATAddress.IsValid() {
		errs = append(errs, renderer.FieldErrorf("twiceNATAddress", "required: the IPv4 source address of twice-NATed sessions (usually the node IP)"))
	} else if !c.TwiceNATAddress.Is4() {
		errs = append(errs, renderer.FieldErrorf("twiceNATAddress", "%s is not an IPv4 address", c.TwiceNATAddress))
	}
	// A weight of 0 would never be picked, and all-zero weights make VPP
	// divide by zero, so 0 is not a valid weight.
	if c.LocalEndpointWeight < 1 || c.LocalEndpointWeight > 255 {
		errs = append(errs, renderer.FieldErrorf("localEndpointWeight", "%d is outside 1–255", c.LocalEndpointWeight))
	}
	if c.RemoteEndpointWeight < 1 || c.RemoteEndpointWeight > 255 {
		errs = append(errs, renderer.FieldErrorf("remoteEndpointWeight", "%d is outside 1–255", c.RemoteEndpointWeight))
	}
	if c.PodVRF == vppcfg.AnyVRF {
		errs = append(errs, renderer.FieldErrorf("podVRF", "%d is VPP's \"any VRF\" marker, not a VRF", c.PodVRF))
	}
	if c.HostVRF == vppcfg.AnyVRF {
		errs = append(errs, renderer.FieldErrorf("hostVRF", "%d is VPP's \"any VRF\" marker, not a VRF", c.HostVRF))
	}
	if e := c.EgressSNAT; e.Enabled {
		if e.Interface == "" {
			errs = append(errs, renderer.FieldErrorf("egressSNAT.interface", "required when egressSNAT.enabled is true"))
		}
		switch {
		case !e.Address.IsValid():
			errs = append(errs, renderer.FieldErrorf("egressSNAT.address", "required when egressSNAT.enabled is true"))
		case !e.Address.Is4():
			errs = append(errs, renderer.FieldErrorf("egressSNAT.address", "%s is not an IPv4 address", e.Address))
		}
		for i, p := range e.IdentityPorts {
			if p.Port == 0 {
				errs = append(errs, renderer.FieldErrorf(fieldIndex("egressSNAT.identityPorts", i)+".port", "must not be 0"))
			}
			if _, ok := p.vppProtocol(); !ok {
				errs = append(errs, renderer.FieldErrorf(fieldIndex("egressSNAT.identityPorts", i)+".protocol", "%q is not tcp or udp", p.Protocol))
			}
		}
	}
	if err := renderer.ValidateACLShards("aclShards", c.ACLShards); err != nil {
		errs = append(errs, err)
	}
	return renderer.JoinFieldErrors(Name, errs...)
}

// shards is the renderer's set of filter ACLs.
func (c *Config) shards() renderer.ACLShards {
	return renderer.ACLShards{Renderer: Name, Count: c.ACLShards, Family: renderer.IPv4}
}

func fieldIndex(field string, i int) string {
	return field + "[" + strconv.Itoa(i) + "]"
}
