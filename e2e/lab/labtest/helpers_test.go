package labtest

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/vppsvc/vppsvc/agent"
	"github.com/vppsvc/vppsvc/e2e/lab/host"
	"github.com/vppsvc/vppsvc/e2e/lab/netexec"
	"github.com/vppsvc/vppsvc/e2e/lab/topology"
)

// The netexec container's ports in every lab pod.
const (
	httpPort = 8080
	udpPort  = 8081
	linePort = 8082
)

// families are the IP families every test runs on.
var families = []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}

// onCNAT reports whether the lab's VPP nodes render family f with cnat:
// IPv6 always, IPv4 when the lab runs the cnat IPv4 renderer
// (VPPSVC_LAB_IPV4_RENDERER=cnat); otherwise IPv4 is NAT44-ED's.
func onCNAT(f corev1.IPFamily) bool {
	return f == corev1.IPv6Protocol || theLab.Opts.IPv4Renderer == agent.IPv4RendererCNAT
}

func famName(f corev1.IPFamily) string {
	if f == corev1.IPv4Protocol {
		return "IPv4"
	}
	return "IPv6"
}

func client() kubernetes.Interface { return theLab.CP.Client }

// newNamespace makes a Kubernetes namespace for one test; at the end its
// pods and services are deleted (no namespace controller runs in the lab).
func newNamespace(t *testing.T) string {
	t.Helper()
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(name) > 50 {
		name = name[:50]
	}
	name = strings.TrimRight(name, "-")
	_, err := client().CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteAll(t, name) })
	return name
}

func deleteAll(t *testing.T, ns string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs := client()
	svcs, _ := cs.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
	for _, s := range svcs.Items {
		_ = cs.CoreV1().Services(ns).Delete(ctx, s.Name, metav1.DeleteOptions{})
	}
	_ = cs.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(0))}, metav1.ListOptions{})
	// The node agents tear the pods down and remove them; wait, so the
	// next test starts with free pod slots.
	for ctx.Err() == nil {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err == nil && len(pods.Items) == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("cleanup: pods of %s still there after 60 s", ns)
}

// podSpec is a lab pod: one netexec container, as Kubernetes' e2e tests
// run agnhost.
type podSpec struct {
	name  string
	node  string
	app   string // label app=
	grace int64  // terminationGracePeriodSeconds (0: 30, Kubernetes' default)
	// probed gives the container a readinessProbe on netexec's /readyz,
	// every second, one failure making it unready.
	probed bool
}

func createPod(t *testing.T, ns string, p podSpec) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: p.name, Labels: map[string]string{"app": p.app}},
		Spec: corev1.PodSpec{
			NodeName: p.node,
			Containers: []corev1.Container{{
				Name: "netexec", Image: "registry.k8s.io/e2e-test-images/agnhost:2.53",
				Args: []string{"netexec", "--http-port=" + strconv.Itoa(httpPort), "--udp-port=" + strconv.Itoa(udpPort),
					"--tcp-line-port=" + strconv.Itoa(linePort), "--delay-shutdown=-1"},
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: httpPort}, {Name: "udp", ContainerPort: udpPort, Protocol: corev1.ProtocolUDP}, {Name: "line", ContainerPort: linePort}},
			}},
		},
	}
	if p.grace > 0 {
		pod.Spec.TerminationGracePeriodSeconds = &p.grace
	}
	if p.probed {
		pod.Spec.Containers[0].ReadinessProbe = &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromString("http")}},
			PeriodSeconds: 1, FailureThreshold: 1,
		}
	}
	if _, err := client().CoreV1().Pods(ns).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// createPods creates pods app-0…app-(n-1), spread round-robin over nodes,
// and waits until they run.
func createPods(t *testing.T, ns, app string, n int, nodes ...string) []*corev1.Pod {
	t.Helper()
	var names []string
	for i := range n {
		name := fmt.Sprintf("%s-%d", app, i)
		createPod(t, ns, podSpec{name: name, node: nodes[i%len(nodes)], app: app})
		names = append(names, name)
	}
	return waitRunning(t, ns, names...)
}

// waitRunning waits until the pods are Ready with both IPs.
func waitRunning(t *testing.T, ns string, names ...string) []*corev1.Pod {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var out []*corev1.Pod
	for _, name := range names {
		for {
			p, err := client().CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
			if err == nil && podReady(p) && len(p.Status.PodIPs) == 2 {
				out = append(out, p)
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("pod %s/%s not running after 60 s (%v)", ns, name, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return out
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func names(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	slices.Sort(out)
	return out
}

// podIP is the pod's address of family f.
func podIP(p *corev1.Pod, f corev1.IPFamily) netip.Addr {
	for _, s := range p.Status.PodIPs {
		if ip, err := netip.ParseAddr(s.IP); err == nil && ip.Is4() == (f == corev1.IPv4Protocol) {
			return ip
		}
	}
	return netip.Addr{}
}

// nodeOf is the lab node a pod runs on.
func nodeOf(p *corev1.Pod) topology.Node {
	for _, n := range theLab.Nodes {
		if n.Name == p.Spec.NodeName {
			return n
		}
	}
	panic("pod on no lab node: " + p.Name)
}

// fromPod dials from inside the pod's network namespace.
func fromPod(p *corev1.Pod) netexec.DialFunc {
	n := nodeOf(p)
	ns := theLab.Names.PodNS(n.Index, n.PodSlot(podIP(p, corev1.IPv4Protocol)))
	return nsDialer(ns, netip.Addr{})
}

// fromHost dials from node's own kernel (hostNetwork clients).
func fromHost(node topology.Node) netexec.DialFunc {
	return nsDialer(theLab.Names.HostNS(node.Index), netip.Addr{})
}

// fromExternal dials from the external client with source src (the zero
// Addr: the default one of the family).
func fromExternal(src netip.Addr) netexec.DialFunc {
	return nsDialer(theLab.Names.ExternalNS(), src)
}

func nsDialer(ns string, src netip.Addr) netexec.DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if !src.IsValid() {
			return host.DialContext(ctx, ns, network, addr)
		}
		var local net.Addr = &net.TCPAddr{IP: src.AsSlice()}
		if strings.HasPrefix(network, "udp") {
			local = &net.UDPAddr{IP: src.AsSlice()}
		}
		return host.DialContextFrom(ctx, ns, network, local, addr)
	}
}

// svcIP is the service's ClusterIP of family f.
func svcIP(svc *corev1.Service, f corev1.IPFamily) netip.Addr {
	for _, s := range svc.Spec.ClusterIPs {
		if ip, err := netip.ParseAddr(s); err == nil && ip.Is4() == (f == corev1.IPv4Protocol) {
			return ip
		}
	}
	return netip.Addr{}
}

func hostPort(ip netip.Addr, port int32) string {
	return net.JoinHostPort(ip.String(), strconv.Itoa(int(port)))
}

// nodeIP is node's address of family f.
func nodeIP(n topology.Node, f corev1.IPFamily) netip.Addr {
	if f == corev1.IPv4Protocol {
		return n.IPs()[0]
	}
	return n.IPs()[1]
}

func externalClient(f corev1.IPFamily) netip.Addr {
	if f == corev1.IPv4Protocol {
		return topology.ExternalClientV4
	}
	return topology.ExternalClientV6
}

func refusedClient(f corev1.IPFamily) netip.Addr {
	if f == corev1.IPv4Protocol {
		return topology.RefusedClientV4
	}
	return topology.RefusedClientV6
}

// webService is a dual-stack service over pods labelled app, with an HTTP
// port (80 → 8080/TCP) and a UDP port (90 → 8081/UDP).
func webService(name, app string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{
			Selector:       map[string]string{"app": app},
			IPFamilyPolicy: ptr(corev1.IPFamilyPolicyRequireDualStack),
			Ports: []corev1.ServicePort{
				{Name: "http", Port: 80, TargetPort: intstr.FromInt32(httpPort), Protocol: corev1.ProtocolTCP},
				{Name: "udp", Port: 90, TargetPort: intstr.FromInt32(udpPort), Protocol: corev1.ProtocolUDP},
				{Name: "line", Port: 82, TargetPort: intstr.FromInt32(linePort), Protocol: corev1.ProtocolTCP},
			},
		},
	}
}

// createService creates svc and returns it as the API server allocated it
// (with its LoadBalancer ingress, once allocated, for that type).
func createService(t *testing.T, ns string, svc *corev1.Service) *corev1.Service {
	t.Helper()
	got, err := client().CoreV1().Services(ns).Create(context.Background(), svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.Type != corev1.ServiceTypeLoadBalancer {
		return got
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		got, err = client().CoreV1().Services(ns).Get(context.Background(), svc.Name, metav1.GetOptions{})
		if err == nil && len(got.Status.LoadBalancer.Ingress) == len(got.Spec.IPFamilies) {
			return got
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("service %s/%s got no LoadBalancer ingress", ns, svc.Name)
	return nil
}

// updateService applies mutate to the current service and writes it back.
func updateService(t *testing.T, ns, name string, mutate func(*corev1.Service)) *corev1.Service {
	t.Helper()
	for range 10 {
		svc, err := client().CoreV1().Services(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		mutate(svc)
		got, err := client().CoreV1().Services(ns).Update(context.Background(), svc, metav1.UpdateOptions{})
		if err == nil {
			return got
		}
		if !apierrors.IsConflict(err) {
			t.Fatal(err)
		}
	}
	t.Fatalf("service %s/%s: update kept conflicting", ns, name)
	return nil
}

// lbIP is the service's LoadBalancer address of family f.
func lbIP(svc *corev1.Service, f corev1.IPFamily) netip.Addr {
	for _, in := range svc.Status.LoadBalancer.Ingress {
		if ip, err := netip.ParseAddr(in.IP); err == nil && ip.Is4() == (f == corev1.IPv4Protocol) {
			return ip
		}
	}
	return netip.Addr{}
}

// readyEndpoints counts the service's ready endpoints of family f.
func readyEndpoints(t *testing.T, ns, svc string, f corev1.IPFamily) int {
	sl, err := client().DiscoveryV1().EndpointSlices(ns).List(context.Background(), metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range sl.Items {
		if string(s.AddressType) != string(f) {
			continue
		}
		for _, e := range s.Endpoints {
			if e.Conditions.Ready == nil || *e.Conditions.Ready {
				n++
			}
		}
	}
	return n
}

// reachAll asserts that every one of want answers /hostname (or the UDP
// hostname command) at addr through dial, within a bounded number of
// requests. A service change takes a moment to reach VPP, so the first
// failures are retried within the bound.
// programmingAllowance is how long a check waits for a change to be
// programmed: kube-proxy's minimum sync period (1 s) with room for its
// sync on a loaded machine.
const programmingAllowance = 5 * time.Second

func reachAll(t *testing.T, dial netexec.DialFunc, proto, addr string, want []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// A change reaches the data plane after a while: kube-proxy syncs at
	// most once per --min-sync-period (1 s by default), so a check right
	// after an API write may see the old rules. Tries repeat for
	// programmingAllowance, and a check that needed more than one says so.
	start := time.Now()
	var tally netexec.HostnameTally
	var err error
	for try := 1; ; try++ {
		tally, err = netexec.ReachAll(ctx, dial, proto, addr, want, 40*len(want)+40)
		if err == nil {
			if try > 1 {
				t.Logf("%s %s: every endpoint answered after %s (%d tries)", proto, addr, time.Since(start).Round(time.Millisecond), try)
			}
			break
		}
		if time.Since(start) > programmingAllowance || ctx.Err() != nil {
			t.Errorf("%s %s: %v (answers %v; %d tries in %s)", proto, addr, err, tally.Names(), try, time.Since(start).Round(time.Millisecond))
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	if extra := slices.DeleteFunc(tally.Names(), func(n string) bool { return slices.Contains(want, n) }); len(extra) > 0 {
		t.Errorf("%s %s: answered by %v, which are not endpoints %v", proto, addr, extra, want)
	}
}

// onlyFrom asserts that n requests to addr are all answered, and only by
// the names in want (at least one of them).
func onlyFrom(t *testing.T, dial netexec.DialFunc, proto, addr string, want []string, n int) netexec.HostnameTally {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tally, err := netexec.Hostnames(ctx, dial, proto, addr, n)
	if err != nil {
		t.Errorf("%s %s: %v", proto, addr, err)
	}
	for _, name := range tally.Names() {
		if !slices.Contains(want, name) {
			t.Errorf("%s %s: answered by %s, want only %v", proto, addr, name, want)
		}
	}
	return tally
}

// eventually retries check (bounded) until it returns nil.
func eventually(t *testing.T, timeout time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var err error
	for {
		if err = check(); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s: %v", what, timeout, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// unreachable asserts that a TCP connection to addr fails (a VPP drop: a
// timeout, not a reset, where VPP cannot reject) within the bound.
func unreachable(t *testing.T, dial netexec.DialFunc, addr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if name, err := netexec.Hostname(ctx, dial, addr); err == nil {
		t.Errorf("%s answered (%s), want no connection", addr, name)
	}
}

func ptr[T any](v T) *T { return &v }
