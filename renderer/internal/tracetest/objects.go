package tracetest

import (
	"k8s.io/apimachinery/pkg/util/intstr"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The two nodes of every trace: the fake VPP is ThisNode's.
const (
	ThisNode  = "node-1"
	OtherNode = "node-2"
)

// L4 protocol numbers of traced packets.
const (
	TCP  uint8 = 6
	UDP  uint8 = 17
	SCTP uint8 = 132
)

// Ptr returns a pointer to v.
func Ptr[T any](v T) *T { return &v }

// Service is a ClusterIP service default/<name> of clusterIP's family with
// TCP port "http" 80, changed by the mutators.
func Service(name, clusterIP string, mutate ...func(*corev1.Service)) *corev1.Service {
	family := corev1.IPv4Protocol
	if netip.MustParseAddr(clusterIP).Is6() {
		family = corev1.IPv6Protocol
	}
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: corev1.ServiceSpec{
			Type:       corev1.ServiceTypeClusterIP,
			ClusterIP:  clusterIP,
			ClusterIPs: []string{clusterIP},
			IPFamilies: []corev1.IPFamily{family},
			Ports:      []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80}},
		},
	}
	for _, m := range mutate {
		m(s)
	}
	return s
}

// NodePort makes the service a NodePort service with node port n.
func NodePort(n int32) func(*corev1.Service) {
	return func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeNodePort
		s.Spec.Ports[0].NodePort = n
	}
}

// LoadBalancer makes the service a LoadBalancer service with node port n
// and the given ingress IPs.
func LoadBalancer(n int32, ingress ...string) func(*corev1.Service) {
	return func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeLoadBalancer
		s.Spec.Ports[0].NodePort = n
		for _, ip := range ingress {
			s.Status.LoadBalancer.Ingress = append(s.Status.LoadBalancer.Ingress, corev1.LoadBalancerIngress{IP: ip})
		}
	}
}

// ExternalIPs sets spec.externalIPs.
func ExternalIPs(ips ...string) func(*corev1.Service) {
	return func(s *corev1.Service) { s.Spec.ExternalIPs = ips }
}

// ETPLocal sets externalTrafficPolicy Local.
func ETPLocal(s *corev1.Service) {
	s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
}

// ITPLocal sets internalTrafficPolicy Local.
func ITPLocal(s *corev1.Service) {
	s.Spec.InternalTrafficPolicy = Ptr(corev1.ServiceInternalTrafficPolicyLocal)
}

// ClientIPAffinity sets session affinity ClientIP with a 600 s timeout.
func ClientIPAffinity(s *corev1.Service) {
	s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
	s.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: Ptr(int32(600))}}
}

// DualStack makes a service dual-stack with the ClusterIPs ipv4 (its
// primary ClusterIP) and ipv6.
func DualStack(ipv4, ipv6 string) func(*corev1.Service) {
	return func(s *corev1.Service) {
		s.Spec.ClusterIP = ipv4
		s.Spec.ClusterIPs = []string{ipv4, ipv6}
		s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}
	}
}

// Slice is the slice "<svc>-v4" or "<svc>-v6" (by family) of service svc
// with port "http" 8080 and the endpoints.
func Slice(svc string, family discoveryv1.AddressType, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	suffix := "-v4"
	if family == discoveryv1.AddressTypeIPv6 {
		suffix = "-v6"
	}
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "default", Name: svc + suffix, Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: family,
		Ports:       []discoveryv1.EndpointPort{{Name: Ptr("http"), Protocol: Ptr(corev1.ProtocolTCP), Port: Ptr(int32(8080))}},
		Endpoints:   eps,
	}
}

// Local and Remote are ready endpoints on ThisNode and OtherNode.
func Local(addr string) discoveryv1.Endpoint  { return Endpoint(addr, ThisNode) }
func Remote(addr string) discoveryv1.Endpoint { return Endpoint(addr, OtherNode) }

// Endpoint is a ready endpoint on node.
func Endpoint(addr, node string) discoveryv1.Endpoint {
	return discoveryv1.Endpoint{Addresses: []string{addr}, NodeName: Ptr(node), Conditions: discoveryv1.EndpointConditions{Ready: Ptr(true)}}
}

// Terminating makes ep a serving, terminating endpoint (KEP-1669).
func Terminating(ep discoveryv1.Endpoint) discoveryv1.Endpoint {
	ep.Conditions = discoveryv1.EndpointConditions{Ready: Ptr(false), Serving: Ptr(true), Terminating: Ptr(true)}
	return ep
}

// Node is a Node with the given InternalIPs.
func Node(name string, ips ...netip.Addr) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for _, ip := range ips {
		n.Status.Addresses = append(n.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: ip.String()})
	}
	return n
}

// SCTPPort adds an SCTP service port "sctp" (port, target port 9000) to a
// Service: only the cnat IPv4 renderer renders SCTP ports; the others'
// frontends must drop it.
func SCTPPort(port int32) func(*corev1.Service) {
	return func(s *corev1.Service) {
		s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "sctp", Protocol: corev1.ProtocolSCTP, Port: port, TargetPort: intstr.FromInt32(9000)})
	}
}
