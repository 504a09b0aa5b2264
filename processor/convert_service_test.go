package processor

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/vppsvc/vppsvc/model"
)

// wantService returns the value of makeService("default", "svc") without
// endpoints, changed by the mutators.
func wantService(mutators ...func(*model.ContivService)) *model.ContivService {
	s := &model.ContivService{
		ID:         model.ServiceID{Namespace: "default", Name: "svc"},
		ClusterIPs: ips("10.96.0.10"),
		Ports:      []model.NamedPort{{Name: "http", ServicePort: model.ServicePort{Protocol: model.ProtocolTCP, Port: 80}}},
	}
	for _, m := range mutators {
		m(s)
	}
	return s
}

// problemKeys returns the kind and field of each problem, in order.
func problemKeys(probs []Problem) []ProblemKey {
	var out []ProblemKey
	for _, p := range probs {
		out = append(out, p.Key())
	}
	return out
}

// requireSameService compares values by String (readable diff) and Equal
// (which String could hide nothing from, but Equal is the contract).
func requireSameService(t *testing.T, want, got *model.ContivService) {
	t.Helper()
	require.Equal(t, want.String(), got.String())
	require.True(t, want.Equal(got), "values print alike but are not Equal")
}

func TestConvertServiceFrontends(t *testing.T) {
	testCases := []struct {
		name         string
		svc          *corev1.Service
		want         *model.ContivService // nil: not rendered
		wantProblems []ProblemKey
	}{
		{
			name: "plain ClusterIP",
			svc:  makeService("default", "svc"),
			want: wantService(),
		},
		{
			name: "legacy object with clusterIP only",
			svc:  makeService("default", "svc", func(s *corev1.Service) { s.Spec.ClusterIPs = nil }),
			want: wantService(),
		},
		{
			name: "dual-stack ClusterIP keeps both families",
			svc:  makeService("default", "svc", withClusterIPs("fd00:96::10", "10.96.0.10")),
			want: wantService(func(s *model.ContivService) { s.ClusterIPs = ips("10.96.0.10", "fd00:96::10") }),
		},
		{
			name: "NodePort carries node ports",
			svc: makeService("default", "svc", withType(corev1.ServiceTypeNodePort),
				withPorts(svcPort("http", corev1.ProtocolTCP, 80, 30080), svcPort("dns", corev1.ProtocolUDP, 53, 30053))),
			want: wantService(func(s *model.ContivService) {
				s.Ports = nil
				s.SetPort("http", model.ServicePort{Protocol: model.ProtocolTCP, Port: 80, NodePort: 30080})
				s.SetPort("dns", model.ServicePort{Protocol: model.ProtocolUDP, Port: 53, NodePort: 30053})
			}),
		},
		{
			name: "node port on a ClusterIP service is ignored",
			svc:  makeService("default", "svc", withPorts(svcPort("http", corev1.ProtocolTCP, 80, 30080))),
			want: wantService(),
		},
		{
			name: "protocols TCP UDP SCTP and the empty default",
			svc: makeService("default", "svc", withPorts(
				svcPort("", "", 1, 0), svcPort("u", corev1.ProtocolUDP, 2, 0), svcPort("s", corev1.ProtocolSCTP, 3, 0))),
			want: wantService(func(s *model.ContivService) {
				s.Ports = nil
				s.SetPort("", model.ServicePort{Protocol: model.ProtocolTCP, Port: 1})
				s.SetPort("u", model.ServicePort{Protocol: model.ProtocolUDP, Port: 2})
				s.SetPort("s", model.ServicePort{Protocol: model.ProtocolSCTP, Port: 3})
			}),
		},
		{
			name: "LoadBalancer: VIP ingress kept, Proxy mode and hostname-only skipped, ranges cleaned",
			svc: makeService("default", "svc", withType(corev1.ServiceTypeLoadBalancer),
				withPorts(svcPort("http", corev1.ProtocolTCP, 80, 30080)),
				func(s *corev1.Service) {
					s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{
						{IP: "192.0.2.2"},
						{IP: "192.0.2.1", IPMode: ptr(corev1.LoadBalancerIPModeVIP)},
						{IP: "192.0.2.3", IPMode: ptr(corev1.LoadBalancerIPModeProxy)},
						{Hostname: "lb.example.com"},
					}
					s.Spec.LoadBalancerSourceRanges = []string{" 198.18.0.7/15 ", "10.0.0.0/8", "10.1.2.3/8", "bogus"}
				}),
			want: wantService(func(s *model.ContivService) {
				s.SetPort("http", model.ServicePort{Protocol: model.ProtocolTCP, Port: 80, NodePort: 30080})
				s.LoadBalancerIPs = ips("192.0.2.1", "192.0.2.2")
				s.LoadBalancerSourceRanges = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("198.18.0.0/15")}
			}),
			wantProblems: []ProblemKey{{KindService, "spec.loadBalancerSourceRanges[]"}},
		},
		{
			name: "LB status and source ranges of a non-LoadBalancer service are ignored",
			svc: makeService("default", "svc", func(s *corev1.Service) {
				s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "192.0.2.1"}}
				s.Spec.LoadBalancerSourceRanges = []string{"10.0.0.0/8"}
			}),
			want: wantService(),
		},
		{
			name: "external IPs filtered to the service's families",
			svc: makeService("default", "svc", func(s *corev1.Service) {
				s.Spec.ExternalIPs = []string{"198.51.100.2", "198.51.100.1", "2001:db8:51::1", "nope"}
			}),
			want:         wantService(func(s *model.ContivService) { s.ExternalIPs = ips("198.51.100.1", "198.51.100.2") }),
			wantProblems: []ProblemKey{{KindService, "spec.externalIPs[]"}, {KindService, "spec.externalIPs[]"}},
		},
		{
			name: "externalTrafficPolicy Local with health check node port",
			svc: makeService("default", "svc", withType(corev1.ServiceTypeLoadBalancer), func(s *corev1.Service) {
				s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
				s.Spec.HealthCheckNodePort = 32000
			}),
			want: wantService(func(s *model.ContivService) {
				s.ExternalTrafficPolicy = model.TrafficPolicyLocal
				s.HealthCheckNodePort = 32000
			}),
		},
		{
			name: "externalTrafficPolicy Local is moot without external frontends",
			svc: makeService("default", "svc", func(s *corev1.Service) {
				s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
				s.Spec.HealthCheckNodePort = 32000
			}),
			want: wantService(),
		},
		{
			name: "externalTrafficPolicy Local applies to external IPs; no health check outside LoadBalancer",
			svc: makeService("default", "svc", func(s *corev1.Service) {
				s.Spec.ExternalIPs = []string{"198.51.100.1"}
				s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
				s.Spec.HealthCheckNodePort = 32000
			}),
			want: wantService(func(s *model.ContivService) {
				s.ExternalIPs = ips("198.51.100.1")
				s.ExternalTrafficPolicy = model.TrafficPolicyLocal
			}),
		},
		{
			name: "internalTrafficPolicy Local",
			svc: makeService("default", "svc", func(s *corev1.Service) {
				s.Spec.InternalTrafficPolicy = ptr(corev1.ServiceInternalTrafficPolicyLocal)
			}),
			want: wantService(func(s *model.ContivService) { s.InternalTrafficPolicy = model.TrafficPolicyLocal }),
		},
		{
			name: "ClientIP affinity without config uses the default timeout",
			svc:  makeService("default", "svc", func(s *corev1.Service) { s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP }),
			want: wantService(func(s *model.ContivService) { s.SessionAffinityTimeout = DefaultSessionAffinityTimeout }),
		},
		{
			name: "ClientIP affinity with timeout",
			svc: makeService("default", "svc", func(s *corev1.Service) {
				s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
				s.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr(int32(60))}}
			}),
			want: wantService(func(s *model.ContivService) { s.SessionAffinityTimeout = 60 }),
		},
		{
			name: "ClientIP affinity with out-of-range timeout falls back to the default",
			svc: makeService("default", "svc", func(s *corev1.Service) {
				s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
				s.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr(int32(0))}}
			}),
			want:         wantService(func(s *model.ContivService) { s.SessionAffinityTimeout = DefaultSessionAffinityTimeout }),
			wantProblems: []ProblemKey{{KindService, "spec.sessionAffinityConfig.clientIP.timeoutSeconds"}},
		},
		{
			name: "affinity config ignored when affinity is None",
			svc: makeService("default", "svc", func(s *corev1.Service) {
				s.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr(int32(60))}}
			}),
			want: wantService(),
		},
		{
			name: "ExternalName is not rendered",
			svc:  makeService("default", "svc", withType(corev1.ServiceTypeExternalName), withClusterIPs()),
		},
		{
			name: "headless is not rendered",
			svc:  makeService("default", "svc", withClusterIPs(corev1.ClusterIPNone)),
		},
		{
			name: "service without an allocated cluster IP is not rendered",
			svc:  makeService("default", "svc", withClusterIPs()),
		},
		{
			name: "service-proxy-name label (any value) is not rendered",
			svc: makeService("default", "svc", func(s *corev1.Service) {
				s.Labels = map[string]string{LabelServiceProxyName: ""}
			}),
		},
		{
			name:         "unknown type is not rendered",
			svc:          makeService("default", "svc", withType("Magic")),
			wantProblems: []ProblemKey{{KindService, "spec.type"}},
		},
		{
			name:         "bad cluster IP skipped, the other family kept",
			svc:          makeService("default", "svc", withClusterIPs("10.96.0.10", "fd00::zz")),
			want:         wantService(),
			wantProblems: []ProblemKey{{KindService, "spec.clusterIPs[]"}},
		},
		{
			name:         "no valid cluster IP is not rendered",
			svc:          makeService("default", "svc", withClusterIPs("10.96.0.300")),
			wantProblems: []ProblemKey{{KindService, "spec.clusterIPs[]"}},
		},
		{
			name: "IPv4 with leading zeros is read as decimal, like kube-proxy",
			svc:  makeService("default", "svc", withClusterIPs("010.096.000.010")),
			want: wantService(),
		},
		{
			name: "bad ports are skipped one by one",
			svc: makeService("default", "svc", withType(corev1.ServiceTypeNodePort), withPorts(
				svcPort("http", corev1.ProtocolTCP, 80, 0),
				svcPort("zero", corev1.ProtocolTCP, 0, 0),
				svcPort("big", corev1.ProtocolTCP, 70000, 0),
				svcPort("icmp", "ICMP", 1, 0),
				svcPort("http", corev1.ProtocolUDP, 81, 0),
				svcPort("badnp", corev1.ProtocolTCP, 82, 99999),
			)),
			want: wantService(func(s *model.ContivService) {
				s.SetPort("badnp", model.ServicePort{Protocol: model.ProtocolTCP, Port: 82})
			}),
			wantProblems: []ProblemKey{
				{KindService, "spec.ports[].port"}, {KindService, "spec.ports[].port"}, {KindService, "spec.ports[].protocol"},
				{KindService, "spec.ports[].name"}, {KindService, "spec.ports[].nodePort"},
			},
		},
		{
			name:         "service without any valid port is not rendered",
			svc:          makeService("default", "svc", withPorts(svcPort("x", corev1.ProtocolTCP, -1, 0))),
			wantProblems: []ProblemKey{{KindService, "spec.ports[].port"}},
		},
		{
			name:         "service without ports is not rendered",
			svc:          makeService("default", "svc", withPorts()),
			wantProblems: []ProblemKey{{KindService, "spec.ports"}},
		},
		{
			name: "unknown policies and affinity fall back to defaults",
			svc: makeService("default", "svc", withType(corev1.ServiceTypeNodePort), func(s *corev1.Service) {
				s.Spec.ExternalTrafficPolicy = "Sometimes"
				s.Spec.InternalTrafficPolicy = ptr(corev1.ServiceInternalTrafficPolicy("Nearby"))
				s.Spec.SessionAffinity = "Cookie"
			}),
			want: wantService(),
			wantProblems: []ProblemKey{
				{KindService, "spec.externalTrafficPolicy"}, {KindService, "spec.internalTrafficPolicy"}, {KindService, "spec.sessionAffinity"},
			},
		},
		{
			name: "bad health check node port skipped",
			svc: makeService("default", "svc", withType(corev1.ServiceTypeLoadBalancer), func(s *corev1.Service) {
				s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
				s.Spec.HealthCheckNodePort = 65536
			}),
			want:         wantService(func(s *model.ContivService) { s.ExternalTrafficPolicy = model.TrafficPolicyLocal }),
			wantProblems: []ProblemKey{{KindService, "spec.healthCheckNodePort"}},
		},
		{
			name: "bad LB ingress IP skipped",
			svc: makeService("default", "svc", withType(corev1.ServiceTypeLoadBalancer), func(s *corev1.Service) {
				s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "192.0.2.1"}, {IP: "192.0.2"}}
			}),
			want:         wantService(func(s *model.ContivService) { s.LoadBalancerIPs = ips("192.0.2.1") }),
			wantProblems: []ProblemKey{{KindService, "status.loadBalancer.ingress[].ip"}},
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got, probs := ConvertService(tc.svc, nil, nodeCtx)
			assert.Equal(t, tc.wantProblems, problemKeys(probs), "problems: %v", probs)
			if tc.want == nil {
				require.Nil(t, got)
				return
			}
			require.NotNil(t, got)
			requireSameService(t, tc.want, got)
		})
	}
}

func TestConvertServiceNil(t *testing.T) {
	got, probs := ConvertService(nil, []*discoveryv1.EndpointSlice{nil}, nodeCtx)
	assert.Nil(t, got)
	assert.Empty(t, probs)
}

// TestConvertServiceProblemNamesObject checks that a problem says which
// object and value it is about, which is what the warning log shows.
func TestConvertServiceProblemNamesObject(t *testing.T) {
	_, probs := ConvertService(makeService("ns1", "web", withClusterIPs("10.96.0.10", "nope")), nil, nodeCtx)
	require.Len(t, probs, 1)
	assert.Equal(t, Problem{Kind: KindService, Object: "ns1/web", Field: "spec.clusterIPs[]", Value: "nope", Reason: "not an IP address"}, probs[0])
	assert.Equal(t, `Service ns1/web: spec.clusterIPs[] "nope": not an IP address`, probs[0].String())
}
