package ipv6

import (
	"cmp"
	"net/netip"
	"slices"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// FrontendKind is how clients reach a frontend. It decides which traffic
// policy applies, whether the client source is NATed, and whether the
// address is an exclusive VIP.
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
// reached: the key of the cnat translation rendered for it.
type Frontend struct {
	Kind     FrontendKind
	PortName string
	Addr     netip.AddrPort
	Protocol vppcfg.Protocol
	// RealIP is true when the address also belongs to a node (every node-port
	// frontend, and any other frontend whose address is a node IP): cnat
	// must then forward what no translation matches instead of dropping it,
	// or the node would lose every other packet sent to its address.
	RealIP bool
}

// Frontends returns the IPv6 TCP and UDP frontends of a service, given the
// IPs of all nodes (for node ports): every ClusterIP, external IP and
// LoadBalancer IP with each service port, and every node IP with each node
// port. IPv4 addresses belong to the NAT44 renderer and are skipped, and so
// are SCTP ports, which cnat does not translate over IPv6 (SCTPPorts lists
// them). A service without an IPv6 ClusterIP (single-stack IPv4) has no
// IPv6 frontend at all, not even node ports: like kube-proxy, which tracks a
// service per family only when it has a ClusterIP of that family, and
// rather than render a node port that no IPv6 endpoint can serve.
//
// The result is sorted by kind, then address, protocol and port name. When
// one address:port/protocol would be two frontends (an external IP equal to
// a LoadBalancer IP, say) only the first in that order is kept: cnat has a
// single translation per address, port and protocol.
func Frontends(svc *model.ContivService, nodeIPs model.IPAddresses) []Frontend {
	if !HasIPv6ClusterIP(svc) {
		return nil
	}
	var out []Frontend
	add := func(kind FrontendKind, portName string, ips model.IPAddresses, port uint16, proto vppcfg.Protocol) {
		for _, ip := range ips {
			if ip = ip.Unmap(); ip.Is6() {
				out = append(out, Frontend{
					Kind: kind, PortName: portName, Addr: netip.AddrPortFrom(ip, port), Protocol: proto,
					RealIP: kind == NodePortFrontend || nodeIPs.Has(ip),
				})
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
	seen := make(map[vppcfg.Key]bool, len(out))
	kept := out[:0]
	for _, fe := range out {
		if k := fe.key(); !seen[k] {
			seen[k] = true
			kept = append(kept, fe)
		}
	}
	return kept
}

// HasIPv6ClusterIP reports whether the service has an IPv6 ClusterIP: only
// then is it this renderer's business.
func HasIPv6ClusterIP(svc *model.ContivService) bool { return len(svc.ClusterIPs.IPv6()) > 0 }

// key is the key of the frontend's translation.
func (fe Frontend) key() vppcfg.Key { return vppcfg.CNATTranslationKey(fe.Addr, fe.Protocol) }

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

// SCTPPorts returns the names of the service's SCTP ports, sorted. VPP 25.10's
// cnat keys IPv6 sessions for TCP, UDP and ICMPv6 only
// (cnat_session_make_key), so an IPv6 SCTP packet never matches a
// translation; the renderer skips these ports.
func SCTPPorts(svc *model.ContivService) []string {
	var out []string
	for _, name := range svc.PortNames() {
		if svc.Ports[name].Protocol == model.ProtocolSCTP {
			out = append(out, name)
		}
	}
	return out
}

// vppProtocol maps a service port protocol to the cnat protocol, and reports
// false for protocols cnat cannot translate over IPv6 (SCTP).
func vppProtocol(p model.Protocol) (vppcfg.Protocol, bool) {
	switch p {
	case model.ProtocolTCP:
		return vppcfg.ProtoTCP, true
	case model.ProtocolUDP:
		return vppcfg.ProtoUDP, true
	}
	return 0, false
}
