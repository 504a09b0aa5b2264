package e2e

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/vppsvc/vppsvc/processor"
)

// Scenario 1: objects created before the agent starts arrive in its first
// Resync. The API server allocates cluster IPs (both families for the
// dual-stack service) and node ports; the test reads them back.
func TestResyncAtStart(t *testing.T) {
	ns := newNamespace(t)
	const (
		lbIP  = "198.51.100.7"
		extIP = "203.0.113.5"
	)
	web := createService(t, ns, newService("web"))
	createSlice(t, ns, newSlice("web", "web-abcde", discoveryv1.AddressTypeIPv4, local("10.1.1.2"), remote("10.1.2.2")))
	np := createService(t, ns, newService("np", nodePort))
	createSlice(t, ns, newSlice("np", "np-abcde", discoveryv1.AddressTypeIPv4, local("10.1.1.3")))
	createService(t, ns, newService("lb", loadBalancer))
	lb := setLoadBalancerIngress(t, ns, "lb", lbIP)
	createSlice(t, ns, newSlice("lb", "lb-abcde", discoveryv1.AddressTypeIPv4, remote("10.1.2.4")))
	ext := createService(t, ns, newService("ext", externalIPs(extIP)))
	createSlice(t, ns, newSlice("ext", "ext-abcde", discoveryv1.AddressTypeIPv4, local("10.1.1.4")))
	dual := createService(t, ns, newService("dual", dualStack))
	createSlice(t, ns, newSlice("dual", "dual-v4", discoveryv1.AddressTypeIPv4, local("10.1.1.2")))
	createSlice(t, ns, newSlice("dual", "dual-v6", discoveryv1.AddressTypeIPv6, local("fd00:1:1::2"), remote("fd00:1:2::2")))

	// What the server filled in.
	if lb.Spec.Ports[0].NodePort == 0 || lb.Spec.ClusterIP == "" {
		t.Fatalf("LoadBalancer service not allocated: %+v", lb.Spec)
	}
	if got := lb.Status.LoadBalancer.Ingress; len(got) != 1 || got[0].IP != lbIP {
		t.Fatalf("LoadBalancer status: %+v", got)
	}
	if len(ext.Spec.ExternalIPs) != 1 || ext.Spec.ExternalIPs[0] != extIP {
		t.Fatalf("externalIPs: %v", ext.Spec.ExternalIPs)
	}
	if dual.Spec.IPFamilyPolicy == nil || len(dual.Spec.ClusterIPs) != 2 || web.Spec.IPFamilies[0] != corev1.IPv4Protocol {
		t.Fatalf("families: web %v, dual %v %v", web.Spec.IPFamilies, dual.Spec.IPFamilies, dual.Spec.ClusterIPs)
	}

	fake := newFakeVPP()
	a := startAgent(t, fake, fake)

	webIP, npPort := clusterIP(t, web, false), nodePortOf(t, np, "http")
	lbPort := nodePortOf(t, lb, "http")
	dual4, dual6 := clusterIP(t, dual, false), clusterIP(t, dual, true)
	a.waitFlows(t, "first Resync rendered",
		// ClusterIP, from a local pod, the node and a remote pod: not NATed.
		flow{localPod, hostPort(webIP, 80), reaches("10.1.1.2:8080", "10.1.2.2:8080").snatted(false)},
		flow{theNode, hostPort(webIP, 80), reaches("10.1.1.2:8080", "10.1.2.2:8080")},
		flow{remotePod, hostPort(webIP, 80), reaches("10.1.1.2:8080", "10.1.2.2:8080").snatted(false)},
		// NodePort on this node's IP (externalTrafficPolicy Cluster:
		// twice-NAT); another node's IP is that node's to answer.
		flow{external, hostPort(nodeIPv4, npPort), reaches("10.1.1.3:8080").snatted(true)},
		flow{external, hostPort(otherNodeIPv4, npPort), untranslated},
		// LoadBalancer: the ingress IP from the status subresource, and its node port.
		flow{external, lbIP + ":80", reaches("10.1.2.4:8080").snatted(true)},
		flow{external, hostPort(nodeIPv4, lbPort), reaches("10.1.2.4:8080").snatted(true)},
		// External IP.
		flow{external, extIP + ":80", reaches("10.1.1.4:8080").snatted(true)},
		// Dual-stack: each family's cluster IP to that family's endpoints.
		flow{localPod, hostPort(dual4, 80), reaches("10.1.1.2:8080")},
		flow{localPod, hostPort(dual6, 80), reaches("[fd00:1:1::2]:8080", "[fd00:1:2::2]:8080")},
		flow{remotePod, hostPort(dual6, 80), reaches("[fd00:1:1::2]:8080", "[fd00:1:2::2]:8080")},
		// A port the service does not have is not translated.
		flow{localPod, hostPort(webIP, 443), untranslated},
	)

	// Everything came in the one Resync: no incremental event was needed.
	st := a.proc.Stats()
	if st.Resyncs != 1 || st.Events[processor.KindService] != 0 || st.Events[processor.KindEndpointSlice] != 0 {
		t.Errorf("want the state in one Resync and no service/slice event, got %d resyncs, events %v", st.Resyncs, st.Events)
	}
	// 5 services of this test and the API server's own "kubernetes" service
	// (no endpoints: --endpoint-reconciler-type=none).
	if st.Services != 6 {
		t.Errorf("processor renders %d services, want 6: %v", st.Services, serviceNames(a))
	}
	dump := fake.Dump()
	for _, s := range []string{webIP.String(), lbIP, extIP, dual4.String(), dual6.String()} {
		if !strings.Contains(dump, s) {
			t.Errorf("the VPP dump does not mention %s:\n%s", s, dump)
		}
	}
	if v := fake.Violations(); len(v) > 0 {
		t.Errorf("fake VPP reports violations: %v", v)
	}
}

func serviceNames(a *testAgent) []string {
	var out []string
	for _, s := range a.proc.Services() {
		out = append(out, s.ID.String())
	}
	return out
}
