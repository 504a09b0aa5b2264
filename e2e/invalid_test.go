package e2e

import (
	"context"
	"net/netip"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/vppsvc/vppsvc/processor"
)

// Scenario 5: objects the API server accepts but vppsvc cannot (fully)
// render. Each bad element is skipped with a warning; everything else,
// including the rest of the same object, works.
func TestInvalidObjects(t *testing.T) {
	ns := newNamespace(t)
	fake := newFakeVPP()
	a := startAgent(t, fake, fake)
	eventually(t, "agent ready", a.problem)

	// A healthy service next to the bad ones.
	good := createService(t, ns, newService("good"))
	createSlice(t, ns, newSlice("good", "good-abcde", discoveryv1.AddressTypeIPv4, local("10.1.1.2")))

	// SCTP on NAT44: the server accepts SCTP ports; NAT44-ED cannot
	// translate them, so the renderer skips that port (and says so) and
	// renders the TCP one.
	mixed := createService(t, ns, newService("mixed", func(s *corev1.Service) {
		s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "assoc", Protocol: corev1.ProtocolSCTP, Port: 9999, TargetPort: intstr.FromInt32(9999)})
	}))
	sl := newSlice("mixed", "mixed-abcde", discoveryv1.AddressTypeIPv4, local("10.1.1.3"))
	sl.Ports = append(sl.Ports, discoveryv1.EndpointPort{Name: ptr("assoc"), Protocol: ptr(corev1.ProtocolSCTP), Port: ptr(int32(9999))})
	createSlice(t, ns, sl)

	// An EndpointSlice port number out of range: the server validates the
	// ports' names and protocols but not their numbers.
	badPort := createService(t, ns, newService("badport", func(s *corev1.Service) {
		s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "metrics", Protocol: corev1.ProtocolTCP, Port: 9090, TargetPort: intstr.FromString("metrics")})
	}))
	sl = newSlice("badport", "badport-abcde", discoveryv1.AddressTypeIPv4, local("10.1.1.4"))
	sl.Ports = append(sl.Ports, discoveryv1.EndpointPort{Name: ptr("metrics"), Protocol: ptr(corev1.ProtocolTCP), Port: ptr(int32(70000))})
	createSlice(t, ns, sl)

	// An IPv4 endpoint address with leading zeros: accepted by the server
	// as a legacy format (it warns); vppsvc reads it as the server's sloppy
	// parser does (decimal), so it is the pod 10.1.1.3.
	legacy := createService(t, ns, newService("legacy"))
	createSlice(t, ns, newSlice("legacy", "legacy-abcde", discoveryv1.AddressTypeIPv4, local("10.001.001.003")))

	// A Node whose status carries an address that is not an IP: the server
	// checks node addresses only for duplicates. It is another node's, and
	// the agent watches only its own Node (as kube-proxy does): neither the
	// bad address nor the valid one reaches it (the processor's tests skip
	// a bad node address).
	if err := createNode(context.Background(), "node-3", "node-3.invalid", "192.168.16.3"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cluster.Client.CoreV1().Nodes().Delete(context.Background(), "node-3", metav1.DeleteOptions{}); err != nil {
			t.Errorf("cleanup: node-3: %v", err)
		}
	})
	np := createService(t, ns, newService("np", nodePort))
	createSlice(t, ns, newSlice("np", "np-abcde", discoveryv1.AddressTypeIPv4, local("10.1.1.2")))
	npPort := nodePortOf(t, np, "http")

	a.waitFlows(t, "valid parts rendered",
		flow{localPod, hostPort(clusterIP(t, good, false), 80), reaches("10.1.1.2:8080")},
		flow{localPod, hostPort(clusterIP(t, mixed, false), 80), reaches("10.1.1.3:8080")},
		flow{localPod, hostPort(clusterIP(t, badPort, false), 80), reaches("10.1.1.4:8080")},
		flow{localPod, hostPort(clusterIP(t, legacy, false), 80), reaches("10.1.1.3:8080")},
		flow{external, "192.168.16.3:" + itoa(npPort), untranslated},
		flow{external, hostPort(nodeIPv4, npPort), reaches("10.1.1.2:8080").snatted(true)},
	)
	if a.proc.NodeIPs().Has(netip.MustParseAddr("192.168.16.3")) {
		t.Errorf("node-3's address reached the agent: %s", a.proc.NodeIPs())
	}
	if l := a.logs.matching("node-3"); len(l) > 0 {
		t.Errorf("another node's Node reached the agent: %s", l)
	}
	// The skipped parts: no translation for the SCTP port nor for the port
	// whose only backend port was invalid.
	if p := traceProblem(fake, localPod, hostPort(clusterIP(t, badPort, false), 9090), reaches("10.1.1.4:70000")); p == "" {
		t.Error("port 9090 was translated to the invalid backend port")
	}

	// Each skipped element was reported as a warning.
	for _, w := range [][]string{
		{"SCTP", "mixed"},
		{"badport", "70000"},
	} {
		if len(a.logs.matching(w...)) == 0 {
			t.Errorf("no warning mentioning %q; agent log:\n%s", w, a.logs.String())
		}
	}
	st := a.proc.Stats()
	for _, k := range []processor.ProblemKey{
		{Kind: processor.KindEndpointSlice, Field: "ports[].port"},
	} {
		if st.InvalidSkipped[k] == 0 {
			t.Errorf("Stats().InvalidSkipped has no %s: %v", k, st.InvalidSkipped)
		}
	}
	if v := fake.Violations(); len(v) > 0 {
		t.Errorf("fake VPP reports violations: %v", v)
	}
}

func itoa(p uint16) string { return strconv.Itoa(int(p)) }
