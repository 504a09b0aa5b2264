package processor

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/vppsvc/vppsvc/model"
)

// backendsOf is the shape the endpoint tests compare: backends by port name.
type backendsOf = map[string][]model.ServiceBackend

func TestConvertServiceBackends(t *testing.T) {
	dualStack := withClusterIPs("10.96.0.10", "fd00:96::10")
	testCases := []struct {
		name         string
		svc          *corev1.Service
		slices       []*discoveryv1.EndpointSlice
		want         backendsOf
		wantProblems []ProblemKey
	}{
		{
			name:   "no slices, no backends",
			svc:    makeService("default", "svc"),
			slices: nil,
			want:   backendsOf{},
		},
		{
			name: "named target port resolved through the slice port of the same name",
			svc: makeService("default", "svc", withPorts(
				svcPort("http", corev1.ProtocolTCP, 80, 0), svcPort("metrics", corev1.ProtocolTCP, 9090, 0))),
			slices: []*discoveryv1.EndpointSlice{makeSlice("default", "svc-1", "svc",
				withSlicePorts(slicePort("http", corev1.ProtocolTCP, 8080), slicePort("metrics", corev1.ProtocolTCP, 9100)),
				withEndpoints(makeEndpoint("10.244.2.2"), makeEndpoint("10.244.2.1")))},
			want: backendsOf{
				"http":    {be("10.244.2.1:8080"), be("10.244.2.2:8080")},
				"metrics": {be("10.244.2.1:9100"), be("10.244.2.2:9100")},
			},
		},
		{
			name: "unnamed port matches the slice port with empty name",
			svc:  makeService("default", "svc", withPorts(svcPort("", corev1.ProtocolTCP, 80, 0))),
			slices: []*discoveryv1.EndpointSlice{makeSlice("default", "svc-1", "svc",
				withSlicePorts(slicePort("", corev1.ProtocolTCP, 8080)), withEndpoints(makeEndpoint("10.244.2.1")))},
			want: backendsOf{"": {be("10.244.2.1:8080")}},
		},
		{
			name: "same name, other protocol does not match; nil slice protocol means TCP",
			svc:  makeService("default", "svc", withPorts(svcPort("dns", corev1.ProtocolUDP, 53, 0), svcPort("tcp", corev1.ProtocolTCP, 54, 0))),
			slices: []*discoveryv1.EndpointSlice{makeSlice("default", "svc-1", "svc",
				withSlicePorts(
					slicePort("dns", corev1.ProtocolTCP, 5353),
					discoveryv1.EndpointPort{Name: ptr("tcp"), Port: ptr(int32(5454))}),
				withEndpoints(makeEndpoint("10.244.2.1")))},
			want: backendsOf{"tcp": {be("10.244.2.1:5454")}},
		},
		{
			name: "several slices merged, duplicates removed by IP:port, output sorted",
			svc:  makeService("default", "svc"),
			slices: []*discoveryv1.EndpointSlice{
				makeSlice("default", "svc-b", "svc", withEndpoints(makeEndpoint("10.244.2.3"), makeEndpoint("10.244.2.1"))),
				makeSlice("default", "svc-a", "svc", withEndpoints(makeEndpoint("10.244.2.2"), makeEndpoint("10.244.2.1"))),
				// a different backend port is a different backend
				makeSlice("default", "svc-c", "svc", withSlicePorts(slicePort("http", corev1.ProtocolTCP, 8081)),
					withEndpoints(makeEndpoint("10.244.2.1"))),
			},
			want: backendsOf{"http": {be("10.244.2.1:8080"), be("10.244.2.1:8081"), be("10.244.2.2:8080"), be("10.244.2.3:8080")}},
		},
		{
			name: "endpoint in two slices (moving): the ready copy wins whatever the slice order",
			svc:  makeService("default", "svc"),
			slices: []*discoveryv1.EndpointSlice{
				makeSlice("default", "svc-a", "svc", withEndpoints(makeEndpoint("10.244.2.1", notReady))),
				makeSlice("default", "svc-b", "svc", withEndpoints(makeEndpoint("10.244.2.1"))),
			},
			want: backendsOf{"http": {be("10.244.2.1:8080")}},
		},
		{
			name: "duplicate endpoint: the local copy wins, as in kube-proxy",
			svc:  makeService("default", "svc"),
			slices: []*discoveryv1.EndpointSlice{
				makeSlice("default", "svc-a", "svc", withEndpoints(makeEndpoint("10.244.1.1"))),
				makeSlice("default", "svc-b", "svc", withEndpoints(makeEndpoint("10.244.1.1", onNode(thisNode)))),
			},
			want: backendsOf{"http": {be("10.244.1.1:8080", "local")}},
		},
		{
			name: "local and host-network flags",
			svc:  makeService("default", "svc"),
			slices: []*discoveryv1.EndpointSlice{makeSlice("default", "svc-1", "svc", withEndpoints(
				makeEndpoint("10.244.1.1", onNode(thisNode)),
				makeEndpoint("192.168.0.2"), // host-network pod on node-b
				makeEndpoint("192.168.0.1", onNode(thisNode)),
				makeEndpoint("10.244.3.1", func(e *discoveryv1.Endpoint) { e.NodeName = nil }),
			))},
			want: backendsOf{"http": {
				be("10.244.1.1:8080", "local"), be("10.244.3.1:8080"),
				be("192.168.0.1:8080", "local", "hostnet"), be("192.168.0.2:8080", "hostnet"),
			}},
		},
		{
			name: "ready nil counts as ready; serving-terminating passed marked beside ready ones; not ready dropped",
			svc:  makeService("default", "svc"),
			slices: []*discoveryv1.EndpointSlice{makeSlice("default", "svc-1", "svc", withEndpoints(
				makeEndpoint("10.244.2.1"),
				makeEndpoint("10.244.2.2", notReady),
				makeEndpoint("10.244.2.3", terminating),
				makeEndpoint("10.244.2.4", func(e *discoveryv1.Endpoint) { e.Conditions.Ready = ptr(true) }),
			))},
			want: backendsOf{"http": {be("10.244.2.1:8080"), be("10.244.2.3:8080", "terminating"), be("10.244.2.4:8080")}},
		},
		{
			name: "no ready endpoint: serving terminating ones are used and marked",
			svc:  makeService("default", "svc"),
			slices: []*discoveryv1.EndpointSlice{makeSlice("default", "svc-1", "svc", withEndpoints(
				makeEndpoint("10.244.2.1", terminating),
				makeEndpoint("10.244.2.2", notReady),
				makeEndpoint("10.244.2.3", func(e *discoveryv1.Endpoint) { // terminating, no longer serving
					e.Conditions = discoveryv1.EndpointConditions{Ready: ptr(false), Serving: ptr(false), Terminating: ptr(true)}
				}),
				makeEndpoint("10.244.2.4", func(e *discoveryv1.Endpoint) { // serving nil counts as serving
					e.Conditions = discoveryv1.EndpointConditions{Ready: ptr(false), Terminating: ptr(true)}
				}),
			))},
			want: backendsOf{"http": {be("10.244.2.1:8080", "terminating"), be("10.244.2.4:8080", "terminating")}},
		},
		{
			name: "every serving endpoint is passed, per port",
			svc:  makeService("default", "svc", withPorts(svcPort("a", corev1.ProtocolTCP, 80, 0), svcPort("b", corev1.ProtocolTCP, 81, 0))),
			slices: []*discoveryv1.EndpointSlice{
				makeSlice("default", "svc-1", "svc", withSlicePorts(slicePort("a", corev1.ProtocolTCP, 8080)),
					withEndpoints(makeEndpoint("10.244.2.1"), makeEndpoint("10.244.2.2", terminating))),
				makeSlice("default", "svc-2", "svc", withSlicePorts(slicePort("b", corev1.ProtocolTCP, 8081)),
					withEndpoints(makeEndpoint("10.244.2.2", terminating))),
			},
			want: backendsOf{
				"a": {be("10.244.2.1:8080"), be("10.244.2.2:8080", "terminating")},
				"b": {be("10.244.2.2:8081", "terminating")},
			},
		},
		{
			name: "dual-stack: one slice per family",
			svc:  makeService("default", "svc", dualStack),
			slices: []*discoveryv1.EndpointSlice{
				makeSlice("default", "svc-v4", "svc", withEndpoints(makeEndpoint("10.244.2.1"))),
				makeSlice("default", "svc-v6", "svc", withAddressType(discoveryv1.AddressTypeIPv6), withEndpoints(makeEndpoint("fd00:244:2::1"))),
			},
			want: backendsOf{"http": {be("10.244.2.1:8080"), be("[fd00:244:2::1]:8080")}},
		},
		{
			name: "slices of a family the service lacks and FQDN slices are ignored",
			svc:  makeService("default", "svc"),
			slices: []*discoveryv1.EndpointSlice{
				makeSlice("default", "svc-v4", "svc", withEndpoints(makeEndpoint("10.244.2.1"))),
				makeSlice("default", "svc-v6", "svc", withAddressType(discoveryv1.AddressTypeIPv6), withEndpoints(makeEndpoint("fd00:244:2::1"))),
				makeSlice("default", "svc-dns", "svc", withAddressType(discoveryv1.AddressTypeFQDN), withEndpoints(makeEndpoint("example.com"))),
			},
			want: backendsOf{"http": {be("10.244.2.1:8080")}},
		},
		{
			name: "only the first address of an endpoint is used",
			svc:  makeService("default", "svc"),
			slices: []*discoveryv1.EndpointSlice{makeSlice("default", "svc-1", "svc", withEndpoints(
				discoveryv1.Endpoint{Addresses: []string{"10.244.2.1", "10.244.2.9"}}))},
			want: backendsOf{"http": {be("10.244.2.1:8080")}},
		},
		{
			name: "zone hints are carried sorted and deduplicated (none for this zone: not filtered)",
			svc:  makeService("default", "svc"),
			slices: []*discoveryv1.EndpointSlice{makeSlice("default", "svc-1", "svc", withEndpoints(
				makeEndpoint("10.244.2.1", hinted("zone-c", "zone-b", "zone-c")),
				makeEndpoint("10.244.3.1", hinted("zone-c", "")),
			))},
			want: backendsOf{"http": {be("10.244.2.1:8080", "zones=zone-b+zone-c"), be("10.244.3.1:8080", "zones=zone-c")}},
		},
		{
			name: "bad endpoints and slice ports are skipped one by one",
			svc:  makeService("default", "svc"),
			slices: []*discoveryv1.EndpointSlice{
				makeSlice("default", "svc-1", "svc",
					withSlicePorts(
						slicePort("http", corev1.ProtocolTCP, 8080),
						discoveryv1.EndpointPort{Port: ptr(int32(1))},                                                            // nil name
						discoveryv1.EndpointPort{Name: ptr("http")},                                                              // nil port
						slicePort("http", corev1.ProtocolTCP, 0),                                                                 // zero port
						slicePort("http", corev1.ProtocolTCP, 65536),                                                             // too big
						discoveryv1.EndpointPort{Name: ptr("http"), Protocol: ptr(corev1.Protocol("ICMP")), Port: ptr(int32(7))}, // bad protocol
					),
					withEndpoints(
						makeEndpoint("10.244.2.1"),
						discoveryv1.Endpoint{},               // no address
						makeEndpoint("10.244.2"),             // not an IP
						makeEndpoint("fd00:244:2::1"),        // wrong family for an IPv4 slice
						makeEndpoint("10.244.2.2", hinted()), // empty hints are no hints
					)),
				nil,
				makeSlice("default", "other-1", "other", withEndpoints(makeEndpoint("10.244.2.9"))),
				makeSlice("default", "svc-x", "svc", withAddressType("IPX")),
			},
			want: backendsOf{"http": {be("10.244.2.1:8080"), be("10.244.2.2:8080")}},
			wantProblems: []ProblemKey{
				{KindEndpointSlice, ""},
				{KindEndpointSlice, "metadata.labels[kubernetes.io/service-name]"},
				{KindEndpointSlice, "ports[].name"},
				{KindEndpointSlice, "ports[].port"},
				{KindEndpointSlice, "ports[].port"},
				{KindEndpointSlice, "ports[].port"},
				{KindEndpointSlice, "ports[].protocol"},
				{KindEndpointSlice, "endpoints[].addresses"},
				{KindEndpointSlice, "endpoints[].addresses"},
				{KindEndpointSlice, "endpoints[].addresses"},
				{KindEndpointSlice, "addressType"},
			},
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got, probs := ConvertService(tc.svc, tc.slices, nodeCtx)
			assert.Equal(t, tc.wantProblems, problemKeys(probs), "problems: %v", probs)
			require.NotNil(t, got)
			want := got.Clone()
			for name := range tc.want {
				_, ok := want.Port(name)
				require.True(t, ok, "backends of unknown port %q", name)
			}
			for i := range want.Ports {
				want.Ports[i].Backends = tc.want[want.Ports[i].Name]
			}
			requireSameService(t, want, got)
		})
	}
}

// TestConvertServiceBackendSets checks, through the renderers' own helpers,
// that the processor passes what kube-proxy's CategorizeEndpoints needs: the
// cluster-wide set and the local set each fall back to serving-terminating
// endpoints on their own (KEP-1669), per address family.
func TestConvertServiceBackendSets(t *testing.T) {
	etpLocal := func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeNodePort
		s.Spec.Ports[0].NodePort = 30080
		s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	}
	testCases := []struct {
		name           string
		svc            *corev1.Service
		slices         []*discoveryv1.EndpointSlice
		cluster, local []model.ServiceBackend
	}{
		{
			name: "ETP Local, one local terminating and one remote ready endpoint",
			svc:  makeService("default", "svc", etpLocal),
			slices: []*discoveryv1.EndpointSlice{makeSlice("default", "svc-1", "svc", withEndpoints(
				makeEndpoint("10.244.1.1", onNode(thisNode), terminating),
				makeEndpoint("10.244.2.1", onNode("node-b")),
			))},
			cluster: []model.ServiceBackend{be("10.244.2.1:8080")},
			local:   []model.ServiceBackend{be("10.244.1.1:8080", "local", "terminating")},
		},
		{
			name: "ETP Local, local ready endpoint: terminating ones unused in both sets",
			svc:  makeService("default", "svc", etpLocal),
			slices: []*discoveryv1.EndpointSlice{makeSlice("default", "svc-1", "svc", withEndpoints(
				makeEndpoint("10.244.1.1", onNode(thisNode)),
				makeEndpoint("10.244.1.2", onNode(thisNode), terminating),
				makeEndpoint("10.244.2.1", onNode("node-b"), terminating),
			))},
			cluster: []model.ServiceBackend{be("10.244.1.1:8080", "local")},
			local:   []model.ServiceBackend{be("10.244.1.1:8080", "local")},
		},
		{
			name: "nothing ready: both sets fall back, terminating endpoints ignore zone hints",
			svc:  makeService("default", "svc", etpLocal),
			slices: []*discoveryv1.EndpointSlice{makeSlice("default", "svc-1", "svc", withEndpoints(
				makeEndpoint("10.244.1.1", onNode(thisNode), terminating, hinted("zone-b")),
				makeEndpoint("10.244.2.1", onNode("node-b"), terminating, hinted("zone-b")),
			))},
			cluster: []model.ServiceBackend{be("10.244.1.1:8080", "local", "terminating", "zones=zone-b"), be("10.244.2.1:8080", "terminating", "zones=zone-b")},
			local:   []model.ServiceBackend{be("10.244.1.1:8080", "local", "terminating", "zones=zone-b")},
		},
		{
			name: "dual-stack: the IPv6 half falls back while the IPv4 half is ready",
			svc:  makeService("default", "svc", withClusterIPs("10.96.0.10", "fd00:96::10")),
			slices: []*discoveryv1.EndpointSlice{
				makeSlice("default", "svc-v4", "svc", withEndpoints(makeEndpoint("10.244.2.1"), makeEndpoint("10.244.2.2", terminating))),
				makeSlice("default", "svc-v6", "svc", withAddressType(discoveryv1.AddressTypeIPv6),
					withEndpoints(makeEndpoint("fd00:244:2::1", terminating))),
			},
			cluster: []model.ServiceBackend{be("10.244.2.1:8080"), be("[fd00:244:2::1]:8080", "terminating")},
			local:   nil,
		},
		{
			name: "zone hints filter the ready endpoints per family",
			svc:  makeService("default", "svc", withClusterIPs("10.96.0.10", "fd00:96::10")),
			slices: []*discoveryv1.EndpointSlice{
				makeSlice("default", "svc-v4", "svc", withEndpoints(
					makeEndpoint("10.244.2.1", hinted(thisZone)), makeEndpoint("10.244.2.2", hinted("zone-b")))),
				makeSlice("default", "svc-v6", "svc", withAddressType(discoveryv1.AddressTypeIPv6),
					withEndpoints(makeEndpoint("fd00:244:2::1", hinted("zone-b")), makeEndpoint("fd00:244:2::2"))),
			},
			// IPv4: every endpoint hinted, one for this zone: filtered.
			// IPv6: one endpoint without hints: hints ignored for IPv6 only.
			cluster: []model.ServiceBackend{be("10.244.2.1:8080", "zones="+thisZone), be("[fd00:244:2::1]:8080", "zones=zone-b"), be("[fd00:244:2::2]:8080")},
			local:   nil,
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got, probs := ConvertService(tc.svc, tc.slices, nodeCtx)
			require.Empty(t, probs)
			require.NotNil(t, got)
			assert.Equal(t, tc.cluster, got.ClusterBackends("http"), "cluster set")
			assert.Equal(t, tc.local, got.LocalBackends("http"), "local set")
		})
	}
}

// TestConvertServiceSliceOrder checks that the result does not depend on the
// order slices are given in, which Resync equivalence relies on.
func TestConvertServiceSliceOrder(t *testing.T) {
	svc := makeService("default", "svc")
	slices := []*discoveryv1.EndpointSlice{
		makeSlice("default", "svc-a", "svc", withEndpoints(makeEndpoint("10.244.2.1", notReady, hinted("zone-a")), makeEndpoint("10.244.2.2"))),
		makeSlice("default", "svc-b", "svc", withEndpoints(makeEndpoint("10.244.2.1", hinted("zone-b")), makeEndpoint("10.244.2.2", onNode(thisNode)))),
		makeSlice("default", "svc-c", "svc", withEndpoints(makeEndpoint("10.244.2.1", hinted("zone-c")), makeEndpoint("10.244.2.3", terminating))),
	}
	want, _ := ConvertService(svc, slices, nodeCtx)
	// svc-b's ready copy of .1 beats svc-a's not-ready one, and is met first
	// among the ready ones; .2 is local in svc-b; .3 is serving-terminating.
	assert.Equal(t, []model.ServiceBackend{be("10.244.2.1:8080", "zones=zone-b"), be("10.244.2.2:8080", "local"), be("10.244.2.3:8080", "terminating")}, want.Backends("http"))
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		rng.Shuffle(len(slices), func(i, j int) { slices[i], slices[j] = slices[j], slices[i] })
		got, _ := ConvertService(svc, slices, nodeCtx)
		requireSameService(t, want, got)
	}
}

// TestConvertServiceDoesNotModifyInput guards the informer cache: objects
// handed in are shared and must stay untouched.
func TestConvertServiceDoesNotModifyInput(t *testing.T) {
	svc := makeService("default", "svc", withType(corev1.ServiceTypeLoadBalancer), func(s *corev1.Service) {
		s.Spec.LoadBalancerSourceRanges = []string{" 10.0.0.0/8", "198.18.0.0/15"}
	})
	slices := []*discoveryv1.EndpointSlice{
		makeSlice("default", "svc-b", "svc", withEndpoints(makeEndpoint("10.244.2.2"), makeEndpoint("10.244.2.1", hinted("zone-b", "zone-a")))),
		makeSlice("default", "svc-a", "svc"),
	}
	svcCopy := svc.DeepCopy()
	sliceCopies := []*discoveryv1.EndpointSlice{slices[0].DeepCopy(), slices[1].DeepCopy()}
	ConvertService(svc, slices, nodeCtx)
	assert.Equal(t, svcCopy, svc)
	assert.Equal(t, sliceCopies, slices)
}
