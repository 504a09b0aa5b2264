package model

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// TrafficPolicy says which endpoints may serve a class of frontends
// (externalTrafficPolicy or internalTrafficPolicy of the Service).
type TrafficPolicy uint8

const (
	// TrafficPolicyCluster lets every ready endpoint of the cluster serve.
	TrafficPolicyCluster TrafficPolicy = iota
	// TrafficPolicyLocal lets only endpoints on this node serve; with none, the
	// frontend drops traffic.
	TrafficPolicyLocal
)

func (p TrafficPolicy) String() string {
	if p == TrafficPolicyLocal {
		return "Local"
	}
	return "Cluster"
}

// Protocol is an L4 protocol, numbered as IANA (and VPP) number them.
type Protocol uint8

const (
	ProtocolTCP  Protocol = 6
	ProtocolUDP  Protocol = 17
	ProtocolSCTP Protocol = 132
)

func (p Protocol) String() string {
	switch p {
	case ProtocolTCP:
		return "TCP"
	case ProtocolUDP:
		return "UDP"
	case ProtocolSCTP:
		return "SCTP"
	}
	return fmt.Sprintf("proto-%d", uint8(p))
}

// ServicePort is one port of a Service, as its frontends expose it.
type ServicePort struct {
	Protocol Protocol
	Port     uint16
	// NodePort is the port opened on every node IP; 0 when the Service has none.
	NodePort uint16
}

func (p ServicePort) String() string {
	s := fmt.Sprintf("%d/%s", p.Port, p.Protocol)
	if p.NodePort != 0 {
		s += fmt.Sprintf(" nodePort=%d", p.NodePort)
	}
	return s
}

// ServiceBackend is one endpoint able to serve a service port.
type ServiceBackend struct {
	IP   netip.Addr
	Port uint16 // the resolved target port
	// Local is true when the endpoint runs on this node.
	Local bool
	// HostNetwork is true when the endpoint IP is a node IP (a host-network pod).
	HostNetwork bool
	// Terminating is true when the endpoint is serving but terminating
	// (KEP-1669). The processor passes every serving endpoint, ready or
	// terminating, and never one that is not serving; which of them may
	// serve a frontend depends on its traffic policy, so a renderer picks
	// them with ContivService.ClusterBackends or LocalBackends rather than
	// reading Backends itself.
	Terminating bool
	// ZoneHints are the zones the EndpointSlice controller hinted this endpoint
	// for; empty when the slice carries no hints.
	ZoneHints Zones
}

// AddrPort returns the endpoint as ip:port.
func (b ServiceBackend) AddrPort() netip.AddrPort { return netip.AddrPortFrom(b.IP, b.Port) }

func (b ServiceBackend) String() string {
	var flags []string
	if b.Local {
		flags = append(flags, "local")
	}
	if b.HostNetwork {
		flags = append(flags, "hostnet")
	}
	if b.Terminating {
		flags = append(flags, "terminating")
	}
	if b.ZoneHints.Len() > 0 {
		flags = append(flags, "zones="+strings.Join(b.ZoneHints.List(), "+"))
	}
	s := b.AddrPort().String()
	if len(flags) > 0 {
		s += "(" + strings.Join(flags, ",") + ")"
	}
	return s
}

// Equal reports whether both backends are the same in every field.
func (b ServiceBackend) Equal(o ServiceBackend) bool {
	return b.IP == o.IP && b.Port == o.Port && b.Local == o.Local && b.HostNetwork == o.HostNetwork &&
		b.Terminating == o.Terminating && b.ZoneHints.Equal(o.ZoneHints)
}

// CompareBackends orders backends by IP, then port.
func CompareBackends(a, b ServiceBackend) int {
	if c := a.IP.Compare(b.IP); c != 0 {
		return c
	}
	return cmp.Compare(a.Port, b.Port)
}

// ContivService is everything a renderer needs to know about one Kubernetes
// Service on this node: its frontends, its ports and, per port, the backends
// that may serve it. The name is kept from the Contiv service plugin, whose
// renderer contract vppsvc follows.
//
// Collections are kept in a canonical order (IP sets sorted, source ranges
// sorted, ports sorted by name, backends sorted by IP:port) so that Equal is
// a plain field compare.
type ContivService struct {
	ID ServiceID

	// ExternalTrafficPolicy applies to NodePort, ExternalIP and LoadBalancer frontends.
	ExternalTrafficPolicy TrafficPolicy
	// InternalTrafficPolicy applies to ClusterIP frontends.
	InternalTrafficPolicy TrafficPolicy
	// HealthCheckNodePort serves kube-proxy style health checks for
	// externalTrafficPolicy Local services; 0 when unset. (Among the small
	// fields so that they share one word: a ContivService is 160 bytes,
	// not 176, one per service.)
	HealthCheckNodePort uint16
	// SessionAffinityTimeout is the ClientIP affinity timeout in seconds; 0 means
	// no session affinity.
	SessionAffinityTimeout uint32

	ClusterIPs      IPAddresses // spec.clusterIPs (both families for dual-stack)
	ExternalIPs     IPAddresses // spec.externalIPs
	LoadBalancerIPs IPAddresses // status.loadBalancer.ingress[].ip (not ipMode Proxy)
	// LoadBalancerSourceRanges restricts the clients of LoadBalancer frontends;
	// empty means any client. Prefixes are masked and sorted.
	LoadBalancerSourceRanges []netip.Prefix

	// Ports are the service's ports sorted by name (distinct names; "" for
	// a single unnamed port), each with the endpoints that may serve it. A
	// sorted list rather than maps keyed by name: most services have one
	// port, and a Go map costs a few hundred bytes even for one entry, which
	// was a quarter of the agent's memory per service. Read it with Port,
	// Backends and PortNames, or range over it; build it with SetPort and
	// SetBackends, or as a literal sorted by name.
	Ports []NamedPort
}

// NamedPort is one port of a service: its name, how the frontends expose
// it, and its backends.
type NamedPort struct {
	Name string
	ServicePort
	// Backends, sorted by IP:port, are every serving endpoint of the port:
	// ready ones and serving-terminating ones (marked Terminating), of both
	// address families. Ready endpoints are already filtered by topology
	// hints. Renderers pick the endpoints of a frontend with
	// ContivService.ClusterBackends or LocalBackends.
	Backends []ServiceBackend
}

// portIndex returns the position of the named port, or where it would be
// inserted, and whether it exists.
func (s *ContivService) portIndex(name string) (int, bool) {
	return slices.BinarySearchFunc(s.Ports, name, func(p NamedPort, name string) int { return cmp.Compare(p.Name, name) })
}

// Port returns the named port and whether the service has it.
func (s *ContivService) Port(name string) (ServicePort, bool) {
	if i, ok := s.portIndex(name); ok {
		return s.Ports[i].ServicePort, true
	}
	return ServicePort{}, false
}

// Backends returns every serving endpoint of the named port, sorted by
// IP:port (see NamedPort.Backends); nil for an unknown port. Frontends use
// ClusterBackends or LocalBackends.
func (s *ContivService) Backends(port string) []ServiceBackend {
	if i, ok := s.portIndex(port); ok {
		return s.Ports[i].Backends
	}
	return nil
}

// SetPort adds the named port or changes how it is exposed, keeping its
// backends. Like SetBackends and DeletePort it is for building a value:
// it writes a new Ports list, so values sharing the old one (a shallow
// copy) are not changed, and a value handed to a renderer must not be
// changed at all.
func (s *ContivService) SetPort(name string, p ServicePort) {
	i, ok := s.portIndex(name)
	ports := slices.Clone(s.Ports)
	if ok {
		ports[i].ServicePort = p
	} else {
		ports = slices.Insert(ports, i, NamedPort{Name: name, ServicePort: p})
	}
	s.Ports = ports
}

// SetBackends replaces the backends of the named port, which must exist
// (SetPort first); list must be sorted by IP:port. See SetPort.
func (s *ContivService) SetBackends(port string, list []ServiceBackend) {
	i, ok := s.portIndex(port)
	if !ok {
		panic(fmt.Sprintf("model: SetBackends of %s: no port %q", s.ID, port))
	}
	ports := slices.Clone(s.Ports)
	ports[i].Backends = list
	s.Ports = ports
}

// DeletePort removes the named port and its backends, if present. See
// SetPort.
func (s *ContivService) DeletePort(name string) {
	if i, ok := s.portIndex(name); ok {
		s.Ports = slices.Delete(slices.Clone(s.Ports), i, i+1)
	}
}

// PortNames returns the service-port names in sorted order.
func (s *ContivService) PortNames() []string {
	out := make([]string, len(s.Ports))
	for i, p := range s.Ports {
		out[i] = p.Name
	}
	return out
}

// HasNodePort reports whether any port of the service is exposed on node IPs.
func (s *ContivService) HasNodePort() bool {
	for _, p := range s.Ports {
		if p.NodePort != 0 {
			return true
		}
	}
	return false
}

// Equal reports whether two services are identical in every field; nil equals
// only nil.
func (s *ContivService) Equal(o *ContivService) bool {
	if s == nil || o == nil {
		return s == o
	}
	return s.ID == o.ID &&
		s.ExternalTrafficPolicy == o.ExternalTrafficPolicy &&
		s.InternalTrafficPolicy == o.InternalTrafficPolicy &&
		s.SessionAffinityTimeout == o.SessionAffinityTimeout &&
		s.ClusterIPs.Equal(o.ClusterIPs) &&
		s.ExternalIPs.Equal(o.ExternalIPs) &&
		s.LoadBalancerIPs.Equal(o.LoadBalancerIPs) &&
		slices.Equal(s.LoadBalancerSourceRanges, o.LoadBalancerSourceRanges) &&
		s.HealthCheckNodePort == o.HealthCheckNodePort &&
		slices.EqualFunc(s.Ports, o.Ports, func(a, b NamedPort) bool {
			return a.Name == b.Name && a.ServicePort == b.ServicePort &&
				slices.EqualFunc(a.Backends, b.Backends, ServiceBackend.Equal)
		})
}

// Clone returns a deep copy; nil clones to nil.
func (s *ContivService) Clone() *ContivService {
	if s == nil {
		return nil
	}
	c := *s
	c.ClusterIPs = slices.Clone(s.ClusterIPs)
	c.ExternalIPs = slices.Clone(s.ExternalIPs)
	c.LoadBalancerIPs = slices.Clone(s.LoadBalancerIPs)
	c.LoadBalancerSourceRanges = slices.Clone(s.LoadBalancerSourceRanges)
	c.Ports = slices.Clone(s.Ports)
	for i := range c.Ports {
		c.Ports[i].Backends = slices.Clone(c.Ports[i].Backends) // zone hints are immutable: shared
	}
	return &c
}

// String renders the service on one line, deterministically.
func (s *ContivService) String() string {
	if s == nil {
		return "<nil>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s etp=%s itp=%s", s.ID, s.ExternalTrafficPolicy, s.InternalTrafficPolicy)
	if s.SessionAffinityTimeout != 0 {
		fmt.Fprintf(&b, " affinity=%ds", s.SessionAffinityTimeout)
	}
	fmt.Fprintf(&b, " clusterIPs=%s", s.ClusterIPs)
	if len(s.ExternalIPs) > 0 {
		fmt.Fprintf(&b, " externalIPs=%s", s.ExternalIPs)
	}
	if len(s.LoadBalancerIPs) > 0 {
		fmt.Fprintf(&b, " lbIPs=%s", s.LoadBalancerIPs)
	}
	if len(s.LoadBalancerSourceRanges) > 0 {
		fmt.Fprintf(&b, " sourceRanges=%v", s.LoadBalancerSourceRanges)
	}
	if s.HealthCheckNodePort != 0 {
		fmt.Fprintf(&b, " hcNodePort=%d", s.HealthCheckNodePort)
	}
	for _, p := range s.Ports {
		backends := make([]string, len(p.Backends))
		for i, be := range p.Backends {
			backends[i] = be.String()
		}
		fmt.Fprintf(&b, " port[%s]=%s->[%s]", p.Name, p.ServicePort, strings.Join(backends, " "))
	}
	return b.String()
}
