package nat44

import (
	"cmp"
	"net/netip"
	"slices"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// FrontendKind is how clients reach a frontend. It decides which
// traffic policy applies and whether the client source is twice-NATed.
type FrontendKind uint8

const (
	// ClusterIPFrontend is a ClusterIP with the service port.
	ClusterIPFrontend FrontendKind = iota + 1
	// ExternalIPFrontend is one of spec.externalIPs with the service port.
	ExternalIPFrontend
	// LoadBalancerFrontend is a LoadBalancer ingress IP with the service port.
	LoadBalancerFrontend
	// NodePortFrontend is a node IP with the node port.
	NodePortFrontend
)

func (k FrontendKind) String() string {
	switch k {
	case ClusterIPFrontend:
		return "cluster-ip"
	case ExternalIPFrontend:
		return "external-ip"
	case LoadBalancerFrontend:
		return "load-balancer"
	case NodePortFrontend:
		return "node-port"
	}
	return "frontend?"
}

// External reports whether externalTrafficPolicy governs the frontend;
// internalTrafficPolicy governs ClusterIPs.
func (k FrontendKind) External() bool { return k != ClusterIPFrontend }

// Frontend is one address:port/protocol through which a service port is
// reached: VPP's external key of the mapping rendered for it.
type Frontend struct {
	Kind     FrontendKind
	PortName string
	Addr     netip.AddrPort
	Protocol vppcfg.Protocol
}

// Frontends returns the IPv4 TCP and UDP frontends of a service, given the
// IPs of all nodes (for node ports): every ClusterIP, external IP and
// LoadBalancer IP with each service port, and every node IP with each node
// port. IPv6 addresses belong to the IPv6 renderer and are skipped, and so
// are SCTP ports, which NAT44-ED cannot translate (SCTPPorts lists them).
//
// The result is sorted by kind, then address, port, protocol and port name.
// When one address:port/protocol would be two frontends (an external IP
// equal to a LoadBalancer IP, say) only the first in that order is kept:
// VPP has a single mapping per external key.
func Frontends(svc *model.ContivService, nodeIPs model.IPAddresses) []Frontend {
	var out []Frontend
	add := func(kind FrontendKind, portName string, ips model.IPAddresses, port uint16, proto vppcfg.Protocol) {
		for _, ip := range ips {
			if ip = ip.Unmap(); ip.Is4() {
				out = append(out, Frontend{Kind: kind, PortName: portName, Addr: netip.AddrPortFrom(ip, port), Protocol: proto})
			}
		}
	}
	for name, p := range svc.Ports {
		proto, ok := vppProtocol(p.Protocol)
		if !ok || p.Port == 0 {
			continue
		}
		add(ClusterIPFrontend, name, svc.ClusterIPs, p.Port, proto)
		add(ExternalIPFrontend, name, svc.ExternalIPs, p.Port, proto)
		add(LoadBalancerFrontend, name, svc.LoadBalancerIPs, p.Port, proto)
		if p.NodePort != 0 {
			add(NodePortFrontend, name, nodeIPs, p.NodePort, proto)
		}
	}
	slices.SortFunc(out, compareFrontends)
	type extKey struct {
		addr  netip.AddrPort
		proto vppcfg.Protocol
	}
	seen := make(map[extKey]bool, len(out))
	kept := out[:0]
	for _, fe := range out {
		k := extKey{fe.Addr, fe.Protocol}
		if !seen[k] {
			seen[k] = true
			kept = append(kept, fe)
		}
	}
	return kept
}

func compareFrontends(a, b Frontend) int {
	if c := cmp.Compare(a.Kind, b.Kind); c != 0 {
		return c
	}
	if c := a.Addr.Compare(b.Addr); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Protocol, b.Protocol); c != 0 {
		return c
	}
	return cmp.Compare(a.PortName, b.PortName)
}

// SCTPPorts returns the names of the service's SCTP ports, sorted: NAT44-ED
// translates only TCP, UDP and ICMP, so the renderer skips them.
func SCTPPorts(svc *model.ContivService) []string {
	var out []string
	for _, name := range svc.PortNames() {
		if svc.Ports[name].Protocol == model.ProtocolSCTP {
			out = append(out, name)
		}
	}
	return out
}

// vppProtocol maps a service port protocol to the NAT44-ED protocol, and
// reports false for protocols NAT44-ED cannot map (SCTP).
func vppProtocol(p model.Protocol) (vppcfg.Protocol, bool) {
	switch p {
	case model.ProtocolTCP:
		return vppcfg.ProtoTCP, true
	case model.ProtocolUDP:
		return vppcfg.ProtoUDP, true
	}
	return 0, false
}
