package e2e

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/vppsvc/vppsvc/processor"
)

// Scenario 2: live changes reach VPP through the watch, each with the
// minimal VPP requests (counted by the fake) and the expected traces.
func TestLiveChanges(t *testing.T) {
	ns := newNamespace(t)
	fake := newFakeVPP()
	a := startAgent(t, fake, fake)
	eventually(t, "agent ready", a.problem)

	// A NodePort service with a local and a remote endpoint.
	svc := createService(t, ns, newService("web", nodePort))
	createSlice(t, ns, newSlice("web", "web-abcde", discoveryv1.AddressTypeIPv4, local("10.1.1.2"), remote("10.1.2.2")))
	cip, np := clusterIP(t, svc, false), nodePortOf(t, svc, "http")
	a.waitFlows(t, "service created",
		flow{localPod, hostPort(cip, 80), reaches("10.1.1.2:8080", "10.1.2.2:8080").snatted(false)},
		flow{external, hostPort(nodeIPv4, np), reaches("10.1.1.2:8080", "10.1.2.2:8080").snatted(true)},
	)
	a.settledCalls(t)

	// Scale up: one more remote endpoint. Each of the service's two LB
	// mappings (cluster IP, node port on this node's IP) gains one local.
	fake.ResetCalls()
	updateSlice(t, ns, "web-abcde", func(s *discoveryv1.EndpointSlice) {
		setEndpoints(s, local("10.1.1.2"), remote("10.1.2.2"), remote("10.1.2.3"))
	})
	three := []string{"10.1.1.2:8080", "10.1.2.2:8080", "10.1.2.3:8080"}
	a.waitFlows(t, "scaled up",
		flow{localPod, hostPort(cip, 80), reaches(three...)},
		flow{external, hostPort(nodeIPv4, np), reaches(three...).snatted(true)},
		// Another node's IP:nodePort is that node's to answer.
		flow{external, hostPort(otherNodeIPv4, np), untranslated},
	)
	expectCalls(t, "scale up", a.settledCalls(t), map[string]int{"nat44_lb_static_mapping_add_del_local": 2})

	// Scale down: the first remote endpoint goes.
	fake.ResetCalls()
	updateSlice(t, ns, "web-abcde", func(s *discoveryv1.EndpointSlice) {
		setEndpoints(s, local("10.1.1.2"), remote("10.1.2.3"))
	})
	two := []string{"10.1.1.2:8080", "10.1.2.3:8080"}
	a.waitFlows(t, "scaled down",
		flow{localPod, hostPort(cip, 80), reaches(two...)},
		flow{external, hostPort(nodeIPv4, np), reaches(two...).snatted(true)},
	)
	expectCalls(t, "scale down", a.settledCalls(t), map[string]int{"nat44_lb_static_mapping_add_del_local": 2})

	// externalTrafficPolicy Local: external frontends reach only the local
	// endpoint and keep the client's source; the cluster IP is unchanged.
	fake.ResetCalls()
	updateService(t, ns, "web", func(s *corev1.Service) {
		s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	})
	a.waitFlows(t, "externalTrafficPolicy Local",
		flow{external, hostPort(nodeIPv4, np), reaches("10.1.1.2:8080").snatted(false)},
		flow{external, hostPort(otherNodeIPv4, np), untranslated},
		flow{localPod, hostPort(cip, 80), reaches(two...)},
	)
	expectCalls(t, "externalTrafficPolicy Local", a.settledCalls(t), map[string]int{
		// The node-port mapping (on this node's IP) goes from two endpoints
		// with twice-NAT to the local one without: a new twice-NAT mode is
		// a delete + create of the LB mapping. The first
		// Local service brings the short-circuit of this node's pods and
		// host: the node port's cnat translation to the ClusterIP, and
		// cnat-input/cnat-output on host0 and the four pod taps.
		"nat44_add_del_lb_static_mapping": 2,
		"cnat_translation_update":         1, "feature_enable_disable": 10,
	})

	// And back to Cluster.
	fake.ResetCalls()
	updateService(t, ns, "web", func(s *corev1.Service) {
		s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
	})
	a.waitFlows(t, "externalTrafficPolicy Cluster",
		flow{external, hostPort(nodeIPv4, np), reaches(two...).snatted(true)},
		flow{localPod, hostPort(cip, 80), reaches(two...)},
	)
	expectCalls(t, "externalTrafficPolicy Cluster", a.settledCalls(t), map[string]int{
		"nat44_add_del_lb_static_mapping": 2,
		// The last Local service takes the short-circuit away.
		"cnat_translation_del": 1, "feature_enable_disable": 10,
	})

	// A second port. The server allocates its node port. Until the slice
	// has the port, it has no endpoints and is rejected.
	fake.ResetCalls()
	svc = updateService(t, ns, "web", func(s *corev1.Service) {
		s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "https", Protocol: corev1.ProtocolTCP, Port: 443, TargetPort: intstr.FromInt32(8443)})
	})
	np2 := nodePortOf(t, svc, "https")
	if np2 == np {
		t.Fatalf("the server gave both ports node port %d", np)
	}
	a.waitFlows(t, "port added, no endpoints yet",
		flow{localPod, hostPort(cip, 443), rejected},
		flow{external, hostPort(nodeIPv4, np2), rejected},
		flow{localPod, hostPort(cip, 80), reaches(two...)},
	)
	nat, acl := withoutACL(a.settledCalls(t))
	expectCalls(t, "port without endpoints (NAT)", nat, nil)
	if len(acl) == 0 {
		t.Error("port without endpoints: no ACL request, yet it is now rejected")
	}
	// The slice gets the port, as the EndpointSlice controller writes it.
	fake.ResetCalls()
	updateSlice(t, ns, "web-abcde", func(s *discoveryv1.EndpointSlice) {
		s.Ports = append(s.Ports, discoveryv1.EndpointPort{Name: ptr("https"), Protocol: ptr(corev1.ProtocolTCP), Port: ptr(int32(8443))})
	})
	a.waitFlows(t, "port added, with endpoints",
		flow{localPod, hostPort(cip, 443), reaches("10.1.1.2:8443", "10.1.2.3:8443")},
		flow{external, hostPort(nodeIPv4, np2), reaches("10.1.1.2:8443", "10.1.2.3:8443").snatted(true)},
		flow{localPod, hostPort(cip, 80), reaches(two...)},
	)
	nat, acl = withoutACL(a.settledCalls(t))
	// Two LB mappings for the new port: cluster IP and this node's IP.
	expectCalls(t, "port endpoints (NAT)", nat, map[string]int{"nat44_add_del_lb_static_mapping": 2})
	t.Logf("port endpoints: ACL requests %v", acl)

	// Delete the service, then its slice (as the garbage collector does).
	fake.ResetCalls()
	deleteService(t, ns, "web")
	a.waitFlows(t, "service deleted",
		flow{localPod, hostPort(cip, 80), untranslated},
		flow{localPod, hostPort(cip, 443), untranslated},
		flow{external, hostPort(nodeIPv4, np), untranslated},
		flow{external, hostPort(nodeIPv4, np2), untranslated},
	)
	expectCalls(t, "service deleted", a.settledCalls(t), map[string]int{
		// 2 ports × (cluster IP + this node's IP) mappings; tap2 backs no
		// service any more and loses its inside role. No route: the API
		// server's ServiceCIDR's drop route covers the ClusterIP
		// (servicecidr_test.go).
		"nat44_add_del_lb_static_mapping": 4, "nat44_interface_add_del_feature": 1,
	})
	fake.ResetCalls()
	sliceEvents := a.proc.Stats().Events[processor.KindEndpointSlice]
	deleteSlice(t, ns, "web-abcde")
	eventually(t, "slice deleted", func() string {
		if a.proc.Stats().Events[processor.KindEndpointSlice] == sliceEvents {
			return "the slice deletion has not reached the processor"
		}
		return a.problem()
	})
	expectCalls(t, "slice of a deleted service deleted", a.settledCalls(t), nil)
	if dump := fake.Dump(); strings.Contains(dump, cip.String()) {
		t.Errorf("the VPP dump still mentions %s:\n%s", cip, dump)
	}
}
