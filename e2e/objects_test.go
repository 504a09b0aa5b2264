package e2e

// Kubernetes objects, written through the real API server the way the
// cluster's own components would: Nodes and Pods with their status written
// through the status subresource (as kubelet does), EndpointSlices written
// by the tests (the EndpointSlice controller does not run here) with the
// labels the controller sets, LoadBalancer ingress through the Service
// status subresource (as a cloud controller does).

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/vppsvc/vppsvc/fakevpp"
)

// podNamespace holds node-1's pods.
const podNamespace = "e2e-pods"

// setupCluster creates the nodes and node-1's pods every test uses.
func setupCluster(ctx context.Context) error {
	cs := cluster.Client
	for _, n := range []struct {
		name string
		ips  []netip.Addr
	}{{thisNode, []netip.Addr{nodeIPv4, nodeIPv6}}, {otherNode, []netip.Addr{otherNodeIPv4, otherNodeIPv6}}} {
		if err := createNode(ctx, n.name, addrStrings(n.ips)...); err != nil {
			return err
		}
	}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: podNamespace}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	for _, n := range localPods {
		pod, err := cs.CoreV1().Pods(podNamespace).Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%d", n), Labels: map[string]string{"app": "e2e"}},
			Spec: corev1.PodSpec{
				NodeName:   thisNode,
				Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/pause:1"}},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		v4, v6 := localPodIPv4(n).String(), localPodIPv6(n).String()
		pod.Status = corev1.PodStatus{
			Phase:  corev1.PodRunning,
			PodIP:  v4,
			PodIPs: []corev1.PodIP{{IP: v4}, {IP: v6}},
		}
		if _, err := cs.CoreV1().Pods(podNamespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

func addrStrings(ips []netip.Addr) []string {
	var out []string
	for _, ip := range ips {
		out = append(out, ip.String())
	}
	return out
}

// createNode creates a Node and writes its InternalIP addresses through the
// status subresource, as kubelet does.
func createNode(ctx context.Context, name string, addrs ...string) error {
	cs := cluster.Client
	node, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	for _, a := range addrs {
		node.Status.Addresses = append(node.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: a})
	}
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	_, err = cs.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
	return err
}

// Services. Every service of the tests has port "http" 80 → targetPort
// "http" unless a mutator says otherwise; the server allocates cluster IPs
// and node ports.

func newService(name string, mutate ...func(*corev1.Service)) *corev1.Service {
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: map[string]string{"app": name}, // informational: no controller acts on it
			Ports:    []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromString("http")}},
		},
	}
	for _, m := range mutate {
		m(s)
	}
	return s
}

func nodePort(s *corev1.Service)     { s.Spec.Type = corev1.ServiceTypeNodePort }
func loadBalancer(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeLoadBalancer }
func dualStack(s *corev1.Service) {
	s.Spec.IPFamilyPolicy = ptr(corev1.IPFamilyPolicyRequireDualStack)
}
func externalIPs(ips ...string) func(*corev1.Service) {
	return func(s *corev1.Service) { s.Spec.ExternalIPs = ips }
}

func createService(t *testing.T, ns string, svc *corev1.Service) *corev1.Service {
	t.Helper()
	got, err := cluster.Client.CoreV1().Services(ns).Create(context.Background(), svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create service %s/%s: %v", ns, svc.Name, err)
	}
	return got
}

// updateService re-reads the service, applies mutate and writes it back.
func updateService(t *testing.T, ns, name string, mutate func(*corev1.Service)) *corev1.Service {
	t.Helper()
	ctx := context.Background()
	svc, err := cluster.Client.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mutate(svc)
	got, err := cluster.Client.CoreV1().Services(ns).Update(ctx, svc, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update service %s/%s: %v", ns, name, err)
	}
	return got
}

// setLoadBalancerIngress writes status.loadBalancer.ingress through the
// status subresource, as a cloud controller does.
func setLoadBalancerIngress(t *testing.T, ns, name string, ips ...string) *corev1.Service {
	t.Helper()
	ctx := context.Background()
	svc, err := cluster.Client.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc.Status.LoadBalancer.Ingress = nil
	for _, ip := range ips {
		svc.Status.LoadBalancer.Ingress = append(svc.Status.LoadBalancer.Ingress, corev1.LoadBalancerIngress{IP: ip, IPMode: ptr(corev1.LoadBalancerIPModeVIP)})
	}
	got, err := cluster.Client.CoreV1().Services(ns).UpdateStatus(ctx, svc, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update status of service %s/%s: %v", ns, name, err)
	}
	return got
}

func deleteService(t *testing.T, ns, name string) {
	t.Helper()
	if err := cluster.Client.CoreV1().Services(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete service %s/%s: %v", ns, name, err)
	}
}

// clusterIP returns the service's allocated cluster IP of a family.
func clusterIP(t *testing.T, svc *corev1.Service, v6 bool) netip.Addr {
	t.Helper()
	for _, s := range svc.Spec.ClusterIPs {
		ip, err := netip.ParseAddr(s)
		if err == nil && ip.Is6() == v6 {
			if !inServiceCIDR(ip) {
				t.Fatalf("service %s: cluster IP %s outside the configured ranges", svc.Name, ip)
			}
			return ip
		}
	}
	t.Fatalf("service %s has no IPv6=%t cluster IP: %v", svc.Name, v6, svc.Spec.ClusterIPs)
	return netip.Addr{}
}

func inServiceCIDR(ip netip.Addr) bool {
	return netip.MustParsePrefix(serviceCIDRv4).Contains(ip) || netip.MustParsePrefix(serviceCIDRv6).Contains(ip)
}

// nodePortOf returns the node port the server allocated to the named port.
func nodePortOf(t *testing.T, svc *corev1.Service, port string) uint16 {
	t.Helper()
	for _, p := range svc.Spec.Ports {
		if p.Name == port {
			if p.NodePort < nodePortMin || p.NodePort > nodePortMax {
				t.Fatalf("service %s port %s: node port %d outside %s", svc.Name, port, p.NodePort, nodePortRange)
			}
			return uint16(p.NodePort)
		}
	}
	t.Fatalf("service %s has no port %q", svc.Name, port)
	return 0
}

// EndpointSlices, as the EndpointSlice controller would write them.

// sliceEndpoint is one endpoint: an address on a node (ready unless
// notReady).
type sliceEndpoint struct {
	addr string
	node string
}

func local(addr string) sliceEndpoint  { return sliceEndpoint{addr, thisNode} }
func remote(addr string) sliceEndpoint { return sliceEndpoint{addr, otherNode} }

// newSlice is an EndpointSlice of service svc with port "http" 8080/TCP.
func newSlice(svc, name string, family discoveryv1.AddressType, eps ...sliceEndpoint) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			discoveryv1.LabelServiceName: svc,
			discoveryv1.LabelManagedBy:   "endpointslice-controller.k8s.io",
		}},
		AddressType: family,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr("http"), Protocol: ptr(corev1.ProtocolTCP), Port: ptr(int32(8080))}},
	}
	setEndpoints(s, eps...)
	return s
}

func setEndpoints(s *discoveryv1.EndpointSlice, eps ...sliceEndpoint) {
	s.Endpoints = nil
	for _, ep := range eps {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{
			Addresses:  []string{ep.addr},
			NodeName:   ptr(ep.node),
			Conditions: discoveryv1.EndpointConditions{Ready: ptr(true), Serving: ptr(true), Terminating: ptr(false)},
		})
	}
}

func createSlice(t *testing.T, ns string, s *discoveryv1.EndpointSlice) *discoveryv1.EndpointSlice {
	t.Helper()
	got, err := cluster.Client.DiscoveryV1().EndpointSlices(ns).Create(context.Background(), s, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create endpointslice %s/%s: %v", ns, s.Name, err)
	}
	return got
}

func updateSlice(t *testing.T, ns, name string, mutate func(*discoveryv1.EndpointSlice)) *discoveryv1.EndpointSlice {
	t.Helper()
	ctx := context.Background()
	s, err := cluster.Client.DiscoveryV1().EndpointSlices(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mutate(s)
	got, err := cluster.Client.DiscoveryV1().EndpointSlices(ns).Update(ctx, s, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update endpointslice %s/%s: %v", ns, name, err)
	}
	return got
}

func deleteSlice(t *testing.T, ns, name string) {
	t.Helper()
	if err := cluster.Client.DiscoveryV1().EndpointSlices(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete endpointslice %s/%s: %v", ns, name, err)
	}
}

// Packet traces.

// client is where a traced flow starts.
type client struct {
	name    string
	ingress string
	v4, v6  netip.Addr
}

var (
	localPod  = client{"local pod", "tap9", localPodIPv4(9), localPodIPv6(9)}
	theNode   = client{"node", "host0", netip.MustParseAddr("172.30.1.2"), netip.MustParseAddr("fd00:30::2")}
	remotePod = client{"remote pod", "uplink0", netip.MustParseAddr("10.1.2.9"), netip.MustParseAddr("fd00:1:2::9")}
	external  = client{"external client", "uplink0", netip.MustParseAddr("100.64.1.5"), netip.MustParseAddr("2001:db8:c:1::5")}
)

// want is what a traced flow must do.
type want struct {
	verdict   fakevpp.Verdict
	endpoints []string // every endpoint the flow may reach (forward only)
	snat      *bool    // nil: not checked
}

// reaches: forwarded to one of endpoints, the reply coming back.
func reaches(endpoints ...string) want { return want{verdict: fakevpp.Forward, endpoints: endpoints} }

func (w want) snatted(b bool) want { w.snat = &b; return w }

// rejected: dropped by a deny ACL (a service port without endpoints).
var rejected = want{verdict: fakevpp.Drop, endpoints: []string{"deny"}}

// untranslated: the flow passes VPP with its destination unchanged (a
// frontend that is no longer rendered), whatever the FIB then does with it.
var untranslated = want{}

var tracePort uint16 = 40000

// traceProblem traces a new TCP flow from cl to dst and returns "" when it
// does what w says, else what differs, with the trace's steps.
func traceProblem(fake *fakevpp.VPP, cl client, dst string, w want) string {
	d := netip.MustParseAddrPort(dst)
	src := cl.v4
	if d.Addr().Is6() {
		src = cl.v6
	}
	tracePort++
	if tracePort < 40000 {
		tracePort = 40000
	}
	tr := fake.Trace(fakevpp.Packet{Ingress: cl.ingress, Protocol: 6, Src: netip.AddrPortFrom(src, tracePort), Dst: d})
	fail := func(format string, args ...any) string {
		return fmt.Sprintf("%s → %s: %s\n    steps:\n      %s", cl.name, dst, fmt.Sprintf(format, args...), strings.Join(tr.Steps, "\n      "))
	}
	if w.verdict == "" { // untranslated
		if tr.Verdict == fakevpp.Drop && strings.Contains(tr.Reason, "deny") {
			return fail("dropped by an ACL (%s), want untranslated", tr.Reason)
		}
		if tr.Out.Dst != d {
			return fail("translated to %s, want untranslated", tr.Out.Dst)
		}
		return ""
	}
	if tr.Verdict != w.verdict {
		return fail("verdict %s (%s), want %s", tr.Verdict, tr.Reason, w.verdict)
	}
	if w.verdict != fakevpp.Forward {
		if w.verdict == fakevpp.Drop && len(w.endpoints) == 1 && !strings.Contains(tr.Reason, w.endpoints[0]) {
			return fail("dropped (%s), want dropped by %s", tr.Reason, w.endpoints[0])
		}
		return ""
	}
	var got []string
	for _, ep := range tr.Endpoints {
		got = append(got, ep.String())
	}
	slices.Sort(got)
	wantEps := slices.Sorted(slices.Values(w.endpoints))
	if !slices.Equal(got, wantEps) {
		return fail("endpoints %v, want %v", got, wantEps)
	}
	if !slices.Contains(wantEps, tr.Out.Dst.String()) {
		return fail("left for %s, not one of %v", tr.Out.Dst, wantEps)
	}
	if w.snat != nil && tr.SNAT != *w.snat {
		return fail("SNAT %t (source %s), want %t", tr.SNAT, tr.Out.Src, *w.snat)
	}
	if !tr.ReplyOK {
		return fail("the reply does not come back from %s", dst)
	}
	return ""
}

// flow is one traced flow and what it must do.
type flow struct {
	from client
	dst  string
	want want
}

// waitFlows waits until every flow does what it must and the agent has
// converged (nothing failed, pending or waiting for a retry).
func (a *testAgent) waitFlows(t *testing.T, what string, flows ...flow) {
	t.Helper()
	a.waitFlowsWithin(t, 30*time.Second, what, flows...)
}

func (a *testAgent) waitFlowsWithin(t *testing.T, limit time.Duration, what string, flows ...flow) {
	t.Helper()
	eventuallyWithin(t, limit, what, func() string {
		for _, f := range flows {
			if p := traceProblem(a.fake, f.from, f.dst, f.want); p != "" {
				return p
			}
		}
		return a.problem()
	})
}

func hostPort(ip netip.Addr, port uint16) string { return netip.AddrPortFrom(ip, port).String() }

// settledCalls waits until the agent has converged and the fake VPP has
// received no request for 200ms, and returns the requests that change VPP
// (dumps and other read-only requests left out) since the last ResetCalls.
func (a *testAgent) settledCalls(t *testing.T) map[string]int {
	t.Helper()
	var last map[string]int
	stable := 0
	eventually(t, "VPP requests settle", func() string {
		cur := a.fake.Calls()
		if a.problem() == "" && mapsEqual(cur, last) {
			stable++
		} else {
			stable = 0
		}
		last = cur
		if stable < 20 { // 20 polls of 10ms
			return fmt.Sprintf("requests still arriving: %v", cur)
		}
		return ""
	})
	return mutating(last)
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) || a == nil || b == nil {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// mutating drops read-only requests (dumps, gets, shows, event
// registrations): what is left changed VPP.
func mutating(calls map[string]int) map[string]int {
	out := map[string]int{}
	for name, n := range calls {
		if strings.HasSuffix(name, "_dump") || strings.Contains(name, "_get") || strings.Contains(name, "show_") ||
			strings.HasPrefix(name, "want_") || name == "control_ping" || name == "feature_is_enabled" {
			continue
		}
		out[name] = n
	}
	return out
}

// withoutACL splits ACL requests off: how a renderer lays out its filter
// ACLs is its own business, the NAT44/cnat requests are what a change of
// endpoints or frontends must cost.
func withoutACL(calls map[string]int) (rest, acl map[string]int) {
	rest, acl = map[string]int{}, map[string]int{}
	for name, n := range calls {
		if strings.HasPrefix(name, "acl_") {
			acl[name] = n
		} else {
			rest[name] = n
		}
	}
	return rest, acl
}

// expectCalls compares the VPP requests of a change with the expected ones.
func expectCalls(t *testing.T, what string, got, want map[string]int) {
	t.Helper()
	if !mapsEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
		t.Errorf("%s: VPP requests\n  got  %v\n  want %v", what, got, want)
	}
}
