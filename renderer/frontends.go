package renderer

import (
	"cmp"
	"net/netip"
	"slices"

	"github.com/sirupsen/logrus"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// FrontendKind is how clients reach a frontend. It decides which traffic
// policy applies, and a renderer may decide more by it (source NAT, VIP
// ownership).
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
// reached: the key of the translation (NAT mapping, cnat translation) a
// renderer puts for it.
type Frontend struct {
	Kind     FrontendKind
	PortName string
	Addr     netip.AddrPort
	Protocol vppcfg.Protocol
}

func (fe Frontend) String() string {
	return fe.Kind.String() + " " + fe.Addr.String() + "/" + fe.Protocol.String()
}

// Frontends returns the TCP and UDP frontends of family f of a service,
// given the IPs of all nodes (for node ports): every ClusterIP, external IP
// and LoadBalancer IP of the family with each service port, and every node
// IP of the family with each node port. A service the family does not
// serve (Serves) has none. SCTP ports are left out (SCTPPorts lists them):
// neither NAT44-ED nor cnat over IPv6 translates SCTP. The unspecified
// address is never a frontend, which the filter-ACL placeholder relies on
// (ACLShards.ACL).
//
// The result is sorted by kind, then address, protocol and port name. When
// one address:port/protocol would be two frontends (an external IP equal to
// a LoadBalancer IP, say) only the first in that order is kept: VPP has a
// single NAT mapping or cnat translation per address, port and protocol.
func Frontends(svc *model.ContivService, nodeIPs model.IPAddresses, f Family) []Frontend {
	return frontends(nil, svc, nodeIPs, f, false)
}

// AppendFrontends is Frontends appended to dst[:0]: a renderer that uses
// the list only while it renders the service passes room on its stack,
// which spares an allocation a service when the frontends fit.
func AppendFrontends(dst []Frontend, svc *model.ContivService, nodeIPs model.IPAddresses, f Family) []Frontend {
	return frontends(dst[:0], svc, nodeIPs, f, false)
}

// FrontendsWithSCTP is Frontends with the SCTP ports too, for a renderer
// whose data plane translates SCTP (cnat over IPv4).
func FrontendsWithSCTP(svc *model.ContivService, nodeIPs model.IPAddresses, f Family) []Frontend {
	return frontends(nil, svc, nodeIPs, f, true)
}

// AppendFrontendsWithSCTP is FrontendsWithSCTP appended to dst[:0], as
// AppendFrontends.
func AppendFrontendsWithSCTP(dst []Frontend, svc *model.ContivService, nodeIPs model.IPAddresses, f Family) []Frontend {
	return frontends(dst[:0], svc, nodeIPs, f, true)
}

func frontends(out []Frontend, svc *model.ContivService, nodeIPs model.IPAddresses, f Family, sctp bool) []Frontend {
	if !Serves(svc, f) {
		return out
	}
	add := func(kind FrontendKind, portName string, ips model.IPAddresses, port uint16, proto vppcfg.Protocol) {
		for _, ip := range ips {
			if ip = ip.Unmap(); f.Has(ip) && !ip.IsUnspecified() {
				out = append(out, Frontend{Kind: kind, PortName: portName, Addr: netip.AddrPortFrom(ip, port), Protocol: proto})
			}
		}
	}
	for _, p := range svc.Ports {
		name := p.Name
		proto, ok := L4Protocol(p.Protocol)
		if !ok && sctp && p.Protocol == model.ProtocolSCTP {
			proto, ok = vppcfg.ProtoSCTP, true
		}
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
	if len(out) <= 8 {
		// A service has a few frontends: comparing each with those kept
		// costs less than a set.
		kept := out[:0]
		for _, fe := range out {
			if !slices.ContainsFunc(kept, func(k Frontend) bool { return k.Addr == fe.Addr && k.Protocol == fe.Protocol }) {
				kept = append(kept, fe)
			}
		}
		return kept
	}
	type extKey struct {
		addr  netip.AddrPort
		proto vppcfg.Protocol
	}
	seen := make(map[extKey]bool, len(out))
	kept := out[:0]
	for _, fe := range out {
		if k := (extKey{fe.Addr, fe.Protocol}); !seen[k] {
			seen[k] = true
			kept = append(kept, fe)
		}
	}
	return kept
}

func compareFrontends(a, b Frontend) int {
	return cmp.Or(cmp.Compare(a.Kind, b.Kind), a.Addr.Compare(b.Addr),
		cmp.Compare(a.Protocol, b.Protocol), cmp.Compare(a.PortName, b.PortName))
}

// L4Protocol maps a service port protocol to the VPP protocol the
// renderers translate, and reports false for SCTP, which they skip.
func L4Protocol(p model.Protocol) (vppcfg.Protocol, bool) {
	switch p {
	case model.ProtocolTCP:
		return vppcfg.ProtoTCP, true
	case model.ProtocolUDP:
		return vppcfg.ProtoUDP, true
	}
	return 0, false
}

// SCTPPorts returns the names of the service's SCTP ports, sorted.
func SCTPPorts(svc *model.ContivService) []string {
	var out []string
	for _, p := range svc.Ports {
		if p.Protocol == model.ProtocolSCTP {
			out = append(out, p.Name)
		}
	}
	return out
}

// WarnSCTP logs the SCTP ports of a service that family f serves, once per
// change of that set (old is the previous value, nil for a new service):
// the renderers skip them, and why is the reason given in the log.
func WarnSCTP(log logrus.FieldLogger, f Family, old, svc *model.ContivService, why string) {
	sctp := SCTPPorts(svc)
	if len(sctp) == 0 || !Serves(svc, f) || (old != nil && Serves(old, f) && slices.Equal(SCTPPorts(old), sctp)) {
		return
	}
	log.WithFields(logrus.Fields{"service": svc.ID.String(), "ports": sctp}).
		Warn("SCTP service ports are " + why + "; skipping them")
}
