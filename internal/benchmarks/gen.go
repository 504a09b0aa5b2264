// Package benchmarks holds the scale benchmarks: whole-agent
// benchmarks (processor → NAT44 renderer → VPP layer → govpp → fake VPP)
// over clusters generated like kube-proxy's own sync benchmark, so that the
// figures in docs/performance.md can be set beside kube-proxy's. Run them
// with `make bench`; this file holds only the cluster generator.
package benchmarks

import (
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeName is the node the generated endpoints run on: the node of the
// agent under benchmark.
const NodeName = "node-1"

var (
	clusterIPBase = netip.MustParseAddr("172.30.0.0")
	endpointBase  = netip.MustParseAddr("10.0.0.0")
)

// Service returns service i of a generated cluster: default/svc<i>,
// ClusterIP 172.30.x.y (the i+1-th address of 172.30.0.0/16, so i <
// 65,535), one TCP port 80 named p80.
func Service(i int) *corev1.Service {
	ip := offset(clusterIPBase, i+1).String()
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprint("svc", i)},
		Spec: corev1.ServiceSpec{
			Type:       corev1.ServiceTypeClusterIP,
			ClusterIP:  ip,
			ClusterIPs: []string{ip},
			IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol},
			Ports:      []corev1.ServicePort{{Name: "p80", Protocol: corev1.ProtocolTCP, Port: 80}},
		},
	}
}

// EndpointSlice returns the one slice of service i with n ready endpoints
// 10.x.y.z:80 on NodeName (addresses i*n+1 … i*n+n of 10.0.0.0/8, so no
// two services share an endpoint), plus extra further endpoints from
// address 10.255.0.1 on (the endpoint changes of the incremental
// benchmarks).
func EndpointSlice(i, n, extra int) *discoveryv1.EndpointSlice {
	ready, node := true, NodeName
	proto, port, name := corev1.ProtocolTCP, int32(80), "p80"
	eps := make([]discoveryv1.Endpoint, 0, n+extra)
	add := func(a netip.Addr) {
		eps = append(eps, discoveryv1.Endpoint{
			Addresses:  []string{a.String()},
			Conditions: discoveryv1.EndpointConditions{Ready: &ready},
			NodeName:   &node,
		})
	}
	for j := range n {
		add(offset(endpointBase, i*n+j+1))
	}
	for j := range extra {
		add(offset(netip.MustParseAddr("10.255.0.0"), j+1))
	}
	svc := fmt.Sprint("svc", i)
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "default", Name: svc + "-abcde",
			Labels: map[string]string{discoveryv1.LabelServiceName: svc},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   eps,
		Ports:       []discoveryv1.EndpointPort{{Name: &name, Protocol: &proto, Port: &port}},
	}
}

// Cluster returns services 0 … n-1 with eps endpoints each, and their slices.
func Cluster(n, eps int) ([]*corev1.Service, []*discoveryv1.EndpointSlice) {
	svcs := make([]*corev1.Service, n)
	slices := make([]*discoveryv1.EndpointSlice, n)
	for i := range n {
		svcs[i], slices[i] = Service(i), EndpointSlice(i, eps, 0)
	}
	return svcs, slices
}

// offset returns the IPv4 address off addresses after base.
func offset(base netip.Addr, off int) netip.Addr {
	b := base.As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	v += uint32(off)
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}
