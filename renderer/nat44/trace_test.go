package nat44_test

// Packet traces: Kubernetes objects go through the processor, this renderer,
// the VPP layer (store, reconciler, govpp driver) and the fake VPP, and
// packets are then traced through the fake's data plane. These tests assert
// behaviour (who reaches which endpoint, with or without source NAT), not
// item layout.
//
// Address plan. One node, node-1, of a two-node cluster:
//
//	uplink0          192.168.16.1/24   node-1's IP (InternalIP); node-2 is 192.168.16.2.
//	                                   Remote pods, external clients, external IPs and
//	                                   LoadBalancer IPs are routed here (0.0.0.0/0,
//	                                   10.1.2.0/24 via uplink0).
//	host0            172.30.1.1/24     VPP's side of the host interface; the node's own
//	                                   host stack sends from 172.30.1.2.
//	tap<N>           (no address)      local pod 10.1.1.<N>, route 10.1.1.<N>/32 via tap<N>
//	10.1.2.0/24                        pods on node-2
//	10.96.0.0/16                       ClusterIPs (fd00:96::/112 for the IPv6 half)
//	203.0.113.0/24                     spec.externalIPs
//	198.51.100.0/24                    LoadBalancer ingress IPs
//	100.64.0.0/16                      external clients (100.64.1.0/24 is an allowed
//	                                   source range, 100.64.2.0/24 is not)
//
// The twice-NAT address is node-1's IP. Clients used by every scenario:
// a local pod 10.1.1.9 (tap9, serves nothing), the node (host0), a remote pod
// 10.1.2.9 and an external client 100.64.1.5 (both on uplink0).

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"go.fd.io/govpp/core"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vppsvc/vppsvc/fakevpp"
	"github.com/vppsvc/vppsvc/processor"
	"github.com/vppsvc/vppsvc/renderer/nat44"
	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/govppdriver"
)

const (
	thisNode  = "node-1"
	otherNode = "node-2"

	protoTCP uint8 = 6
	protoUDP uint8 = 17
)

func init() {
	// govpp probes connections every second by default; keep test
	// connections cheap and quiet.
	core.HealthCheckProbeInterval = 50 * time.Millisecond
	core.HealthCheckReplyTimeout = 200 * time.Millisecond
	core.SetLogger(quietLogger())
}

func quietLogger() *logrus.Logger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}

// client is where a traced flow starts.
type client struct {
	name    string
	ingress string
	addr    netip.Addr
}

var (
	localPod    = client{"local pod", "tap9", netip.MustParseAddr("10.1.1.9")}
	theNode     = client{"node", "host0", netip.MustParseAddr("172.30.1.2")}
	remotePod   = client{"remote pod", "uplink0", netip.MustParseAddr("10.1.2.9")}
	external    = client{"external client", "uplink0", netip.MustParseAddr("100.64.1.5")}
	denied      = client{"external client outside the source ranges", "uplink0", netip.MustParseAddr("100.64.2.5")}
	allClients  = []client{localPod, theNode, remotePod, external}
	nodeIP      = netip.MustParseAddr("192.168.16.1")
	otherNodeIP = netip.MustParseAddr("192.168.16.2")
)

// podClient is a local pod as a client (pod <N> at 10.1.1.<N> on tap<N>).
func podClient(n int) client {
	return client{fmt.Sprintf("pod %d", n), fmt.Sprintf("tap%d", n), netip.MustParseAddr(fmt.Sprintf("10.1.1.%d", n))}
}

// localPods are the pods of node-1 the fake has a tap for.
var localPods = []int{2, 3, 4, 9}

// newFake returns the fake VPP of node-1, interfaces and routes created
// before the first connection (VPP's startup configuration).
func newFake() *fakevpp.VPP { return newFakeWith(false) }

// newFakeWith optionally adds an overlay: the pods of node-2 are then
// reached through vxlan0 (an overlay interface, 10.255.0.1/24) instead of
// uplink0, as with a VXLAN overlay whose encapsulated traffic leaves by the
// uplink unseen by NAT44.
func newFakeWith(overlay bool) *fakevpp.VPP {
	v := fakevpp.New(fakevpp.WithSeed(1))
	v.AddInterface("uplink0", netip.MustParsePrefix("192.168.16.1/24"))
	v.AddInterface("host0", netip.MustParsePrefix("172.30.1.1/24"))
	for _, n := range localPods {
		tap := fmt.Sprintf("tap%d", n)
		v.AddInterface(tap)
		v.AddRoute(netip.MustParsePrefix(fmt.Sprintf("10.1.1.%d/32", n)), tap)
	}
	remotePods := "uplink0"
	if overlay {
		v.AddInterface("vxlan0", netip.MustParsePrefix("10.255.0.1/24"))
		remotePods = "vxlan0"
	}
	v.AddRoute(netip.MustParsePrefix("10.1.2.0/24"), remotePods)
	v.AddRoute(netip.MustParsePrefix("0.0.0.0/0"), "uplink0")
	return v
}

// agent is one run of the control plane over a fake VPP: processor, this
// renderer, reconciler and govpp driver.
type agent struct {
	proc   *processor.Processor
	rec    *vppcfg.Reconciler
	drv    *govppdriver.Driver
	cancel context.CancelFunc
	done   chan struct{}
}

func testConfig() nat44.Config {
	cfg := nat44.DefaultConfig()
	cfg.TwiceNATAddress = nodeIP
	return cfg
}

// startAgent connects a new agent to v (first: over v itself, otherwise
// over a new client connection) and waits for the reconciler's first sync.
func startAgent(t testing.TB, v *fakevpp.VPP, first bool) *agent {
	t.Helper()
	return startAgentWith(t, v, first, testConfig(), "uplink0", "host0")
}

func startAgentWith(t testing.TB, v *fakevpp.VPP, first bool, cfg nat44.Config, frontendIfs ...string) *agent {
	t.Helper()
	log := quietLogger()
	var a = v.NewAdapter()
	if first {
		a = v
	}
	drv, err := govppdriver.Connect(a, govppdriver.Options{Logger: log, ReconnectInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	rec := vppcfg.NewReconciler(drv, vppcfg.Options{Logger: log, RetryMin: time.Millisecond, RetryMax: 20 * time.Millisecond})
	r, err := nat44.New(rec.Client("nat44"), cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	proc := processor.New(processor.Config{NodeName: thisNode, FrontendInterfaces: frontendIfs, Logger: log})
	proc.RegisterRenderer(nat44.Name, r)
	ctx, cancel := context.WithCancel(context.Background())
	ag := &agent{proc: proc, rec: rec, drv: drv, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(ag.done)
		if err := rec.Start(ctx); err != nil {
			t.Errorf("reconciler: %v", err)
		}
	}()
	select {
	case <-rec.Synced():
	case <-time.After(10 * time.Second):
		t.Fatal("reconciler did not sync")
	}
	t.Cleanup(ag.stop)
	return ag
}

func (a *agent) stop() {
	a.cancel()
	<-a.done
	a.drv.Close()
}

// cluster is the Kubernetes state of a scenario.
type cluster struct {
	services []*corev1.Service
	slices   []*discoveryv1.EndpointSlice
}

func (c cluster) snapshot() processor.Snapshot {
	s := processor.Snapshot{
		Services:       c.services,
		EndpointSlices: c.slices,
		Nodes:          []*corev1.Node{k8sNode(thisNode, nodeIP), k8sNode(otherNode, otherNodeIP)},
	}
	for _, n := range localPods {
		s.LocalPods = append(s.LocalPods, processor.LocalPod{
			ID:        processor.PodID{Namespace: "default", Name: fmt.Sprintf("pod-%d", n)},
			IPs:       []netip.Addr{netip.MustParseAddr(fmt.Sprintf("10.1.1.%d", n))},
			Interface: fmt.Sprintf("tap%d", n),
		})
	}
	return s
}

// env is a fake VPP programmed by an agent from a cluster state.
type env struct {
	t     *testing.T
	fake  *fakevpp.VPP
	agent *agent
	mu    sync.Mutex
	sport uint16
}

func newEnv(t *testing.T, c cluster) *env {
	t.Helper()
	return newEnvWith(t, testConfig(), c)
}

func newEnvWith(t *testing.T, cfg nat44.Config, c cluster) *env {
	t.Helper()
	v := newFake()
	ag := startAgentWith(t, v, true, cfg, "uplink0", "host0")
	ag.proc.Resync(c.snapshot())
	return &env{t: t, fake: v, agent: ag, sport: 40000}
}

// trace sends the first packet (TCP SYN, or UDP) of a new flow from cl to dst.
func (e *env) trace(cl client, proto uint8, dst string) fakevpp.Trace {
	e.mu.Lock()
	e.sport++
	sport := e.sport
	e.mu.Unlock()
	return e.fake.Trace(fakevpp.Packet{
		Ingress: cl.ingress, Protocol: proto,
		Src: netip.AddrPortFrom(cl.addr, sport), Dst: netip.MustParseAddrPort(dst),
	})
}

// expect is what a flow must do.
type expect struct {
	verdict   fakevpp.Verdict
	endpoints []string // every endpoint the flow may reach (forward only)
	snat      bool     // the client source is rewritten (twice-NAT)
}

var dropped = expect{verdict: fakevpp.Drop}

func reaches(snat bool, endpoints ...string) expect {
	return expect{verdict: fakevpp.Forward, endpoints: endpoints, snat: snat}
}

// check traces a new flow and compares it with want; a forwarded flow must
// also get its reply back as coming from dst.
func (e *env) check(cl client, proto uint8, dst string, want expect) fakevpp.Trace {
	e.t.Helper()
	tr := e.trace(cl, proto, dst)
	fail := func(format string, args ...any) {
		e.t.Helper()
		e.t.Fatalf("%s → %s: %s\nsteps:\n  %s", cl.name, dst, fmt.Sprintf(format, args...), strings.Join(tr.Steps, "\n  "))
	}
	if tr.Verdict != want.verdict {
		fail("verdict %s (%s), want %s", tr.Verdict, tr.Reason, want.verdict)
	}
	if want.verdict != fakevpp.Forward {
		return tr
	}
	got := make([]string, len(tr.Endpoints))
	for i, ep := range tr.Endpoints {
		got[i] = ep.String()
	}
	slices.Sort(got)
	wantEps := slices.Sorted(slices.Values(want.endpoints))
	if !slices.Equal(got, wantEps) {
		fail("endpoints %v, want %v", got, wantEps)
	}
	if !slices.Contains(wantEps, tr.Out.Dst.String()) {
		fail("left for %s, not one of %v", tr.Out.Dst, wantEps)
	}
	if tr.SNAT != want.snat {
		fail("SNAT %t (source %s), want %t", tr.SNAT, tr.Out.Src, want.snat)
	}
	if want.snat && tr.Out.Src.Addr() != nodeIP {
		fail("source NATed to %s, want the twice-NAT address %s", tr.Out.Src.Addr(), nodeIP)
	}
	if !tr.ReplyOK {
		fail("the reply does not come back from %s", dst)
	}
	return tr
}

// Kubernetes object builders.

func ptr[T any](v T) *T { return &v }

// k8sService is a ClusterIP service with TCP port "http" 80 → target "http".
func k8sService(name, clusterIP string, mutate ...func(*corev1.Service)) *corev1.Service {
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: corev1.ServiceSpec{
			Type:       corev1.ServiceTypeClusterIP,
			ClusterIP:  clusterIP,
			ClusterIPs: []string{clusterIP},
			Ports:      []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80}},
		},
	}
	for _, m := range mutate {
		m(s)
	}
	return s
}

func nodePortType(nodePort int32) func(*corev1.Service) {
	return func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeNodePort
		s.Spec.Ports[0].NodePort = nodePort
	}
}

func loadBalancer(nodePort int32, ingress ...string) func(*corev1.Service) {
	return func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeLoadBalancer
		s.Spec.Ports[0].NodePort = nodePort
		for _, ip := range ingress {
			s.Status.LoadBalancer.Ingress = append(s.Status.LoadBalancer.Ingress, corev1.LoadBalancerIngress{IP: ip})
		}
	}
}

func etpLocal(s *corev1.Service) {
	s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
}

func itpLocal(s *corev1.Service) {
	s.Spec.InternalTrafficPolicy = ptr(corev1.ServiceInternalTrafficPolicyLocal)
}

// k8sSlice is an IPv4 slice of svc with port "http" 8080 and the endpoints.
func k8sSlice(svc string, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "default", Name: svc + "-v4", Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr("http"), Protocol: ptr(corev1.ProtocolTCP), Port: ptr(int32(8080))}},
		Endpoints:   eps,
	}
}

// local and remote are ready endpoints on node-1 and node-2.
func local(addr string) discoveryv1.Endpoint  { return endpoint(addr, thisNode) }
func remote(addr string) discoveryv1.Endpoint { return endpoint(addr, otherNode) }

func endpoint(addr, node string) discoveryv1.Endpoint {
	return discoveryv1.Endpoint{Addresses: []string{addr}, NodeName: ptr(node), Conditions: discoveryv1.EndpointConditions{Ready: ptr(true)}}
}

func terminating(ep discoveryv1.Endpoint) discoveryv1.Endpoint {
	ep.Conditions = discoveryv1.EndpointConditions{Ready: ptr(false), Serving: ptr(true), Terminating: ptr(true)}
	return ep
}

func k8sNode(name string, ip netip.Addr) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status:     corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip.String()}}},
	}
}

// The scenarios.

func TestTraceClusterIPWithSeveralBackends(t *testing.T) {
	e := newEnv(t, cluster{
		services: []*corev1.Service{k8sService("web", "10.96.0.10")},
		slices:   []*discoveryv1.EndpointSlice{k8sSlice("web", local("10.1.1.2"), remote("10.1.2.2"), remote("10.1.2.3"))},
	})
	all := []string{"10.1.1.2:8080", "10.1.2.2:8080", "10.1.2.3:8080"}
	for _, cl := range allClients {
		t.Run(cl.name, func(t *testing.T) {
			e.t = t
			e.check(cl, protoTCP, "10.96.0.10:80", reaches(false, all...))
		})
	}
	t.Run("other ports of the ClusterIP are not translated", func(t *testing.T) {
		e.t = t
		tr := e.trace(localPod, protoTCP, "10.96.0.10:443")
		if tr.Verdict == fakevpp.Forward && tr.Out.Dst.Addr() != netip.MustParseAddr("10.96.0.10") {
			t.Fatalf("port 443 was translated to %s", tr.Out.Dst)
		}
	})
	t.Run("unrelated traffic passes untranslated", func(t *testing.T) {
		e.t = t
		tr := e.trace(localPod, protoTCP, "10.1.2.7:22")
		if tr.Verdict != fakevpp.Forward || tr.Out.Dst.String() != "10.1.2.7:22" || tr.SNAT || !tr.ReplyOK {
			t.Fatalf("pod to remote pod: %s to %s snat=%t replyOK=%t\n%s", tr.Verdict, tr.Out.Dst, tr.SNAT, tr.ReplyOK, strings.Join(tr.Steps, "\n"))
		}
		tr = e.trace(remotePod, protoTCP, "10.1.1.2:22")
		if tr.Verdict != fakevpp.Forward || tr.Out.Dst.String() != "10.1.1.2:22" || tr.SNAT || !tr.ReplyOK {
			t.Fatalf("remote pod to pod: %s to %s snat=%t replyOK=%t\n%s", tr.Verdict, tr.Out.Dst, tr.SNAT, tr.ReplyOK, strings.Join(tr.Steps, "\n"))
		}
	})
}

func TestTracePodReachesItselfThroughItsService(t *testing.T) {
	e := newEnv(t, cluster{
		services: []*corev1.Service{k8sService("self", "10.96.0.11"), k8sService("pair", "10.96.0.12")},
		slices: []*discoveryv1.EndpointSlice{
			k8sSlice("self", local("10.1.1.2")),
			k8sSlice("pair", local("10.1.1.2"), local("10.1.1.3")),
		},
	})
	// One backend: always itself, always self-twice-NATed.
	e.check(podClient(2), protoTCP, "10.96.0.11:80", reaches(true, "10.1.1.2:8080"))
	// Two backends: self-twice-NAT exactly when the draw picks itself.
	seen := map[bool]bool{}
	for range 40 {
		tr := e.trace(podClient(2), protoTCP, "10.96.0.12:80")
		self := tr.Out.Dst.Addr() == netip.MustParseAddr("10.1.1.2")
		if tr.Verdict != fakevpp.Forward || !tr.ReplyOK || tr.SNAT != self {
			t.Fatalf("to %s: verdict %s snat=%t replyOK=%t\n%s", tr.Out.Dst, tr.Verdict, tr.SNAT, tr.ReplyOK, strings.Join(tr.Steps, "\n"))
		}
		seen[self] = true
	}
	if !seen[true] || !seen[false] {
		t.Fatalf("40 draws reached only self=%v", seen)
	}
}

func TestTraceNodePortOnEveryNodeIP(t *testing.T) {
	e := newEnv(t, cluster{
		services: []*corev1.Service{k8sService("np", "10.96.0.13", nodePortType(30080))},
		slices:   []*discoveryv1.EndpointSlice{k8sSlice("np", local("10.1.1.2"), remote("10.1.2.2"))},
	})
	all := []string{"10.1.1.2:8080", "10.1.2.2:8080"}
	for _, cl := range allClients {
		t.Run(cl.name, func(t *testing.T) {
			e.t = t
			e.check(cl, protoTCP, "192.168.16.1:30080", reaches(true, all...))
			e.check(cl, protoTCP, "192.168.16.2:30080", reaches(true, all...))
			e.check(cl, protoTCP, "10.96.0.13:80", reaches(false, all...))
		})
	}
}

func TestTraceExternalIPs(t *testing.T) {
	e := newEnv(t, cluster{
		services: []*corev1.Service{k8sService("ext", "10.96.0.14", func(s *corev1.Service) {
			s.Spec.ExternalIPs = []string{"203.0.113.10", "203.0.113.11"}
		})},
		slices: []*discoveryv1.EndpointSlice{k8sSlice("ext", remote("10.1.2.2"), remote("10.1.2.3"))},
	})
	for _, cl := range allClients {
		t.Run(cl.name, func(t *testing.T) {
			e.t = t
			e.check(cl, protoTCP, "203.0.113.10:80", reaches(true, "10.1.2.2:8080", "10.1.2.3:8080"))
			e.check(cl, protoTCP, "203.0.113.11:80", reaches(true, "10.1.2.2:8080", "10.1.2.3:8080"))
		})
	}
}

func TestTraceLoadBalancerIngress(t *testing.T) {
	e := newEnv(t, cluster{
		services: []*corev1.Service{k8sService("lb", "10.96.0.15", loadBalancer(30081, "198.51.100.10"))},
		slices:   []*discoveryv1.EndpointSlice{k8sSlice("lb", local("10.1.1.2"), remote("10.1.2.2"))},
	})
	all := []string{"10.1.1.2:8080", "10.1.2.2:8080"}
	for _, cl := range allClients {
		t.Run(cl.name, func(t *testing.T) {
			e.t = t
			e.check(cl, protoTCP, "198.51.100.10:80", reaches(true, all...))
			e.check(cl, protoTCP, "192.168.16.1:30081", reaches(true, all...))
		})
	}
}

func TestTraceExternalTrafficPolicyLocal(t *testing.T) {
	e := newEnv(t, cluster{
		services: []*corev1.Service{
			k8sService("with-local", "10.96.0.16", loadBalancer(30082, "198.51.100.16"), etpLocal),
			k8sService("no-local", "10.96.0.17", loadBalancer(30083, "198.51.100.17"), etpLocal),
		},
		slices: []*discoveryv1.EndpointSlice{
			k8sSlice("with-local", local("10.1.1.2"), local("10.1.1.3"), remote("10.1.2.2")),
			k8sSlice("no-local", remote("10.1.2.2"), remote("10.1.2.3")),
		},
	})
	t.Run("with local endpoints: only those, client IP kept", func(t *testing.T) {
		e.t = t
		for _, cl := range allClients {
			e.check(cl, protoTCP, "198.51.100.16:80", reaches(false, "10.1.1.2:8080", "10.1.1.3:8080"))
			e.check(cl, protoTCP, "192.168.16.1:30082", reaches(false, "10.1.1.2:8080", "10.1.1.3:8080"))
			e.check(cl, protoTCP, "192.168.16.2:30082", reaches(false, "10.1.1.2:8080", "10.1.1.3:8080"))
		}
		// The ClusterIP keeps every endpoint.
		e.check(localPod, protoTCP, "10.96.0.16:80", reaches(false, "10.1.1.2:8080", "10.1.1.3:8080", "10.1.2.2:8080"))
	})
	t.Run("without local endpoints: external frontends drop, ClusterIP serves", func(t *testing.T) {
		e.t = t
		for _, cl := range allClients {
			e.check(cl, protoTCP, "198.51.100.17:80", dropped)
			e.check(cl, protoTCP, "192.168.16.1:30083", dropped)
		}
		e.check(localPod, protoTCP, "10.96.0.17:80", reaches(false, "10.1.2.2:8080", "10.1.2.3:8080"))
	})
}

func TestTraceInternalTrafficPolicyLocal(t *testing.T) {
	e := newEnv(t, cluster{
		services: []*corev1.Service{
			k8sService("itp", "10.96.0.18", itpLocal),
			k8sService("itp-none", "10.96.0.19", itpLocal),
		},
		slices: []*discoveryv1.EndpointSlice{
			k8sSlice("itp", local("10.1.1.2"), remote("10.1.2.2")),
			k8sSlice("itp-none", remote("10.1.2.2")),
		},
	})
	for _, cl := range allClients {
		t.Run(cl.name, func(t *testing.T) {
			e.t = t
			e.check(cl, protoTCP, "10.96.0.18:80", reaches(false, "10.1.1.2:8080"))
			e.check(cl, protoTCP, "10.96.0.19:80", dropped)
		})
	}
}

func TestTraceTerminatingFallback(t *testing.T) {
	e := newEnv(t, cluster{
		services: []*corev1.Service{k8sService("term", "10.96.0.20"), k8sService("mixed", "10.96.0.21")},
		slices: []*discoveryv1.EndpointSlice{
			k8sSlice("term", terminating(local("10.1.1.2")), terminating(remote("10.1.2.2"))),
			k8sSlice("mixed", terminating(local("10.1.1.2")), remote("10.1.2.2"), remote("10.1.2.3")),
		},
	})
	for _, cl := range allClients {
		t.Run(cl.name, func(t *testing.T) {
			e.t = t
			// Nothing ready: the terminating endpoints still serve.
			e.check(cl, protoTCP, "10.96.0.20:80", reaches(false, "10.1.1.2:8080", "10.1.2.2:8080"))
			// Something ready: terminating endpoints get no new flows.
			e.check(cl, protoTCP, "10.96.0.21:80", reaches(false, "10.1.2.2:8080", "10.1.2.3:8080"))
		})
	}
}

func TestTraceNoEndpointsDrops(t *testing.T) {
	e := newEnv(t, cluster{
		services: []*corev1.Service{
			k8sService("empty", "10.96.0.22", loadBalancer(30084, "198.51.100.22")),
			k8sService("web", "10.96.0.10"),
		},
		slices: []*discoveryv1.EndpointSlice{k8sSlice("empty"), k8sSlice("web", remote("10.1.2.2"), remote("10.1.2.3"))},
	})
	for _, cl := range allClients {
		t.Run(cl.name, func(t *testing.T) {
			e.t = t
			e.check(cl, protoTCP, "10.96.0.22:80", dropped)
			e.check(cl, protoTCP, "198.51.100.22:80", dropped)
			e.check(cl, protoTCP, "192.168.16.1:30084", dropped)
			// The drop ACL matches only its own frontends.
			e.check(cl, protoTCP, "10.96.0.10:80", reaches(false, "10.1.2.2:8080", "10.1.2.3:8080"))
		})
	}
	t.Run("unrelated traffic on filtered interfaces passes", func(t *testing.T) {
		e.t = t
		for _, tc := range []struct {
			cl  client
			dst string
		}{{localPod, "10.1.2.7:22"}, {remotePod, "10.1.1.2:22"}, {external, "10.1.1.3:8080"}} {
			tr := e.trace(tc.cl, protoTCP, tc.dst)
			if tr.Verdict != fakevpp.Forward || tr.Out.Dst.String() != tc.dst || !tr.ReplyOK {
				t.Fatalf("%s → %s: %s (%s)\n%s", tc.cl.name, tc.dst, tr.Verdict, tr.Reason, strings.Join(tr.Steps, "\n"))
			}
		}
	})
}

func TestTraceLoadBalancerSourceRanges(t *testing.T) {
	e := newEnv(t, cluster{
		services: []*corev1.Service{
			k8sService("ranged", "10.96.0.23", loadBalancer(30085, "198.51.100.23"), func(s *corev1.Service) {
				s.Spec.LoadBalancerSourceRanges = []string{"100.64.1.0/24", "10.1.0.0/16"}
			}),
			k8sService("open", "10.96.0.24", loadBalancer(30086, "198.51.100.24")),
		},
		slices: []*discoveryv1.EndpointSlice{
			k8sSlice("ranged", remote("10.1.2.2"), remote("10.1.2.3")),
			k8sSlice("open", remote("10.1.2.4"), remote("10.1.2.5")),
		},
	})
	ranged := reaches(true, "10.1.2.2:8080", "10.1.2.3:8080")
	e.check(external, protoTCP, "198.51.100.23:80", ranged)
	e.check(localPod, protoTCP, "198.51.100.23:80", ranged)
	e.check(remotePod, protoTCP, "198.51.100.23:80", ranged)
	e.check(denied, protoTCP, "198.51.100.23:80", dropped)
	e.check(theNode, protoTCP, "198.51.100.23:80", dropped)
	// Source ranges restrict the LoadBalancer IP only (as in kube-proxy).
	e.check(denied, protoTCP, "192.168.16.1:30085", ranged)
	e.check(denied, protoTCP, "10.96.0.23:80", reaches(false, "10.1.2.2:8080", "10.1.2.3:8080"))
	// Other services and other traffic are untouched.
	e.check(denied, protoTCP, "198.51.100.24:80", reaches(true, "10.1.2.4:8080", "10.1.2.5:8080"))
}

func TestTraceSessionAffinity(t *testing.T) {
	e := newEnv(t, cluster{
		services: []*corev1.Service{k8sService("sticky", "10.96.0.25", func(s *corev1.Service) {
			s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
			s.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr(int32(600))}}
		})},
		slices: []*discoveryv1.EndpointSlice{k8sSlice("sticky", remote("10.1.2.2"), remote("10.1.2.3"), remote("10.1.2.4"), remote("10.1.2.5"))},
	})
	all := []string{"10.1.2.2:8080", "10.1.2.3:8080", "10.1.2.4:8080", "10.1.2.5:8080"}
	firsts := map[netip.AddrPort]bool{}
	for _, cl := range allClients {
		// The first connection is a draw among all endpoints ...
		first := e.check(cl, protoTCP, "10.96.0.25:80", reaches(false, all...)).Out.Dst
		firsts[first] = true
		// ... the next ones follow the client's affinity record.
		for range 10 {
			e.check(cl, protoTCP, "10.96.0.25:80", reaches(false, first.String()))
		}
	}
	t.Logf("first picks of %d clients: %v", len(allClients), firsts)
}

func TestTraceMultiPortNamedTargetPorts(t *testing.T) {
	svc := k8sService("multi", "10.96.0.26", func(s *corev1.Service) {
		s.Spec.Ports = []corev1.ServicePort{
			{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80},
			{Name: "metrics", Protocol: corev1.ProtocolTCP, Port: 9090},
			{Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53},
		}
	})
	slice := k8sSlice("multi", local("10.1.1.2"), remote("10.1.2.2"))
	slice.Ports = []discoveryv1.EndpointPort{
		{Name: ptr("http"), Protocol: ptr(corev1.ProtocolTCP), Port: ptr(int32(8080))},
		{Name: ptr("metrics"), Protocol: ptr(corev1.ProtocolTCP), Port: ptr(int32(9100))},
		{Name: ptr("dns"), Protocol: ptr(corev1.ProtocolUDP), Port: ptr(int32(5353))},
	}
	e := newEnv(t, cluster{services: []*corev1.Service{svc}, slices: []*discoveryv1.EndpointSlice{slice}})
	for _, cl := range allClients {
		t.Run(cl.name, func(t *testing.T) {
			e.t = t
			e.check(cl, protoTCP, "10.96.0.26:80", reaches(false, "10.1.1.2:8080", "10.1.2.2:8080"))
			e.check(cl, protoTCP, "10.96.0.26:9090", reaches(false, "10.1.1.2:9100", "10.1.2.2:9100"))
			e.check(cl, protoUDP, "10.96.0.26:53", reaches(false, "10.1.1.2:5353", "10.1.2.2:5353"))
		})
	}
}

func TestTraceUDP(t *testing.T) {
	svc := k8sService("dns", "10.96.0.27", nodePortType(30053), func(s *corev1.Service) {
		s.Spec.Ports[0].Protocol = corev1.ProtocolUDP
		s.Spec.Ports[0].Port = 53
	})
	slice := k8sSlice("dns", local("10.1.1.2"), remote("10.1.2.2"))
	slice.Ports[0].Protocol = ptr(corev1.ProtocolUDP)
	slice.Ports[0].Port = ptr(int32(53))
	e := newEnv(t, cluster{services: []*corev1.Service{svc}, slices: []*discoveryv1.EndpointSlice{slice}})
	for _, cl := range allClients {
		t.Run(cl.name, func(t *testing.T) {
			e.t = t
			e.check(cl, protoUDP, "10.96.0.27:53", reaches(false, "10.1.1.2:53", "10.1.2.2:53"))
			e.check(cl, protoUDP, "192.168.16.1:30053", reaches(true, "10.1.1.2:53", "10.1.2.2:53"))
			// Same port number over TCP is not the service.
			if tr := e.trace(cl, protoTCP, "10.96.0.27:53"); tr.Verdict == fakevpp.Forward && tr.Out.Dst.Addr() != netip.MustParseAddr("10.96.0.27") {
				t.Fatalf("TCP 53 translated to %s", tr.Out.Dst)
			}
		})
	}
}

func TestTraceDualStackRendersIPv4Half(t *testing.T) {
	svc := k8sService("dual", "10.96.0.28", func(s *corev1.Service) {
		s.Spec.ClusterIPs = []string{"10.96.0.28", "fd00:96::28"}
		s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}
	})
	v6 := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "default", Name: "dual-v6", Labels: map[string]string{discoveryv1.LabelServiceName: "dual"}},
		AddressType: discoveryv1.AddressTypeIPv6,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr("http"), Protocol: ptr(corev1.ProtocolTCP), Port: ptr(int32(8080))}},
		Endpoints:   []discoveryv1.Endpoint{endpoint("fd00:1:1::2", thisNode), endpoint("fd00:1:2::2", otherNode)},
	}
	e := newEnv(t, cluster{
		services: []*corev1.Service{svc},
		slices:   []*discoveryv1.EndpointSlice{k8sSlice("dual", local("10.1.1.2"), remote("10.1.2.2")), v6},
	})
	for _, cl := range allClients {
		e.check(cl, protoTCP, "10.96.0.28:80", reaches(false, "10.1.1.2:8080", "10.1.2.2:8080"))
	}
	dump := e.fake.Dump()
	if strings.Contains(dump, "fd00:") {
		t.Fatalf("IPv6 addresses in VPP state programmed by the NAT44 renderer:\n%s", dump)
	}
}

func TestTraceScaleKeepsSessionsToUnchangedBackends(t *testing.T) {
	svc := k8sService("web", "10.96.0.10")
	e := newEnv(t, cluster{
		services: []*corev1.Service{svc},
		slices:   []*discoveryv1.EndpointSlice{k8sSlice("web", remote("10.1.2.2"), remote("10.1.2.3"), remote("10.1.2.4"))},
	})
	// Open one connection per client and remember where each went.
	type conn struct {
		cl  client
		syn fakevpp.Trace
	}
	var conns []conn
	for _, cl := range allClients {
		tr := e.check(cl, protoTCP, "10.96.0.10:80", reaches(false, "10.1.2.2:8080", "10.1.2.3:8080", "10.1.2.4:8080"))
		conns = append(conns, conn{cl, tr})
	}
	// next sends a data segment of an open connection.
	next := func(c conn) fakevpp.Trace {
		return e.fake.Trace(fakevpp.Packet{Ingress: c.cl.ingress, Protocol: protoTCP, Src: c.syn.In.Src, Dst: c.syn.In.Dst, TCPFlags: 0x10})
	}
	used := map[string]bool{}
	for _, c := range conns {
		used[c.syn.Out.Dst.String()] = true
	}

	// Scale up: every open connection keeps its backend.
	e.agent.proc.UpdateEndpointSlice(k8sSlice("web", remote("10.1.2.2"), remote("10.1.2.3"), remote("10.1.2.4"), remote("10.1.2.5"), local("10.1.1.2")))
	for _, c := range conns {
		if tr := next(c); tr.Verdict != fakevpp.Forward || tr.Out.Dst != c.syn.Out.Dst {
			t.Fatalf("after scale-up, %s's connection: %s to %s, was %s\n%s", c.cl.name, tr.Verdict, tr.Out.Dst, c.syn.Out.Dst, strings.Join(tr.Steps, "\n"))
		}
	}
	e.check(localPod, protoTCP, "10.96.0.10:80", reaches(false, "10.1.1.2:8080", "10.1.2.2:8080", "10.1.2.3:8080", "10.1.2.4:8080", "10.1.2.5:8080"))

	// Scale down by one endpoint that no connection uses (10.1.2.5 is
	// new, so unused); connections to the others survive.
	e.agent.proc.UpdateEndpointSlice(k8sSlice("web", remote("10.1.2.2"), remote("10.1.2.3"), remote("10.1.2.4"), local("10.1.1.2")))
	for _, c := range conns {
		if tr := next(c); tr.Verdict != fakevpp.Forward || tr.Out.Dst != c.syn.Out.Dst {
			t.Fatalf("after scale-down, %s's connection: %s to %s, was %s\n%s", c.cl.name, tr.Verdict, tr.Out.Dst, c.syn.Out.Dst, strings.Join(tr.Steps, "\n"))
		}
	}
	e.check(localPod, protoTCP, "10.96.0.10:80", reaches(false, "10.1.1.2:8080", "10.1.2.2:8080", "10.1.2.3:8080", "10.1.2.4:8080"))

	// Remove the endpoint of the first connection: its sessions go (VPP
	// deletes the sessions of a removed local), the others stay.
	gone := conns[0].syn.Out.Dst
	var keep []discoveryv1.Endpoint
	for _, a := range []string{"10.1.2.2", "10.1.2.3", "10.1.2.4"} {
		if a != gone.Addr().String() {
			keep = append(keep, remote(a))
		}
	}
	keep = append(keep, local("10.1.1.2"))
	e.agent.proc.UpdateEndpointSlice(k8sSlice("web", keep...))
	for _, c := range conns {
		tr := next(c)
		if c.syn.Out.Dst == gone {
			if tr.Verdict == fakevpp.Forward && tr.Out.Dst == gone {
				t.Fatalf("%s's connection still reaches the removed endpoint %s", c.cl.name, gone)
			}
			continue
		}
		if tr.Verdict != fakevpp.Forward || tr.Out.Dst != c.syn.Out.Dst {
			t.Fatalf("after removing %s, %s's connection: %s to %s, was %s", gone, c.cl.name, tr.Verdict, tr.Out.Dst, c.syn.Out.Dst)
		}
	}
}

func TestTraceDeleteLeavesNoTrace(t *testing.T) {
	web := k8sService("web", "10.96.0.10", loadBalancer(30087, "198.51.100.10"), func(s *corev1.Service) {
		s.Spec.LoadBalancerSourceRanges = []string{"100.64.1.0/24"}
		s.Spec.ExternalIPs = []string{"203.0.113.10"}
	})
	empty := k8sService("empty", "10.96.0.22")
	one := k8sService("one", "10.96.0.11", nodePortType(30088))
	v := newFake()
	ag := startAgent(t, v, true)
	ag.proc.Resync(cluster{}.snapshot())
	before := v.Dump()

	ag.proc.UpdateService(web)
	ag.proc.UpdateService(empty)
	ag.proc.UpdateService(one)
	ag.proc.UpdateEndpointSlice(k8sSlice("web", local("10.1.1.2"), remote("10.1.2.2")))
	ag.proc.UpdateEndpointSlice(k8sSlice("one", remote("10.1.2.2")))
	e := &env{t: t, fake: v, agent: ag, sport: 50000}
	e.check(external, protoTCP, "198.51.100.10:80", reaches(true, "10.1.1.2:8080", "10.1.2.2:8080"))
	e.check(external, protoTCP, "192.168.16.1:30088", reaches(true, "10.1.2.2:8080"))
	e.check(localPod, protoTCP, "10.96.0.22:80", dropped)
	if v.Dump() == before {
		t.Fatal("services changed nothing in VPP")
	}

	ag.proc.DeleteService("default", "web")
	ag.proc.DeleteService("default", "empty")
	ag.proc.DeleteService("default", "one")
	after := v.Dump()
	if after != before {
		t.Fatalf("VPP state after deleting every service differs from before adding them\n--- before\n%s--- after\n%s", before, after)
	}
	for _, s := range []string{"vppsvc:", "acl", "default/", "10.96.", "198.51.100.", "203.0.113.", "30087", "30088"} {
		if strings.Contains(after, s) {
			t.Fatalf("%q left in VPP after delete:\n%s", s, after)
		}
	}
}

func TestTraceAgentRestartChangesNothing(t *testing.T) {
	c := cluster{
		services: []*corev1.Service{
			k8sService("web", "10.96.0.10", loadBalancer(30089, "198.51.100.10"), func(s *corev1.Service) {
				s.Spec.LoadBalancerSourceRanges = []string{"100.64.1.0/24"}
				s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
			}),
			k8sService("one", "10.96.0.11", nodePortType(30090), etpLocal),
			k8sService("empty", "10.96.0.22"),
		},
		slices: []*discoveryv1.EndpointSlice{
			k8sSlice("web", local("10.1.1.2"), remote("10.1.2.2"), remote("10.1.2.3")),
			k8sSlice("one", local("10.1.1.3")),
		},
	}
	e := newEnv(t, c)
	tr := e.check(external, protoTCP, "198.51.100.10:80", reaches(true, "10.1.1.2:8080", "10.1.2.2:8080", "10.1.2.3:8080"))
	before := e.fake.Dump()

	// The agent restarts; VPP keeps running.
	e.agent.stop()
	e.fake.ResetCalls()
	ag := startAgent(t, e.fake, false)
	ag.proc.Resync(c.snapshot())
	// Let the reconciler settle: it may still be processing events.
	time.Sleep(100 * time.Millisecond)
	t.Logf("VPP calls during the restart: %v", e.fake.Calls())
	for msg, n := range e.fake.Calls() {
		if !isReadOnly(msg) {
			t.Errorf("restart sent %d %s", n, msg)
		}
	}
	if after := e.fake.Dump(); after != before {
		t.Fatalf("VPP state changed across the agent restart\n--- before\n%s--- after\n%s", before, after)
	}
	// The open connection survives.
	data := e.fake.Trace(fakevpp.Packet{Ingress: external.ingress, Protocol: protoTCP, Src: tr.In.Src, Dst: tr.In.Dst, TCPFlags: 0x10})
	if data.Verdict != fakevpp.Forward || data.Out.Dst != tr.Out.Dst {
		t.Fatalf("open connection after restart: %s to %s, was %s", data.Verdict, data.Out.Dst, tr.Out.Dst)
	}
}

func TestTraceAffinityEndpointRemoval(t *testing.T) {
	sticky := func(s *corev1.Service) {
		s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
		s.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr(int32(600))}}
	}
	addrs := []string{"10.1.2.2", "10.1.2.3", "10.1.2.4"}
	slice := func(skip netip.Addr) *discoveryv1.EndpointSlice {
		var eps []discoveryv1.Endpoint
		for _, a := range addrs {
			if a != skip.String() {
				eps = append(eps, remote(a))
			}
		}
		return k8sSlice("sticky", eps...)
	}
	e := newEnv(t, cluster{services: []*corev1.Service{k8sService("sticky", "10.96.0.25", sticky)}, slices: []*discoveryv1.EndpointSlice{slice(netip.Addr{})}})
	pinned := e.check(external, protoTCP, "10.96.0.25:80", reaches(false, "10.1.2.2:8080", "10.1.2.3:8080", "10.1.2.4:8080")).Out.Dst
	e.check(external, protoTCP, "10.96.0.25:80", reaches(false, pinned.String()))

	// The pinned endpoint goes away: the client is balanced again over the
	// endpoints that remain, and pinned to its new pick.
	e.agent.proc.UpdateEndpointSlice(slice(pinned.Addr()))
	var rest []string
	for _, a := range addrs {
		if a != pinned.Addr().String() {
			rest = append(rest, a+":8080")
		}
	}
	again := e.check(external, protoTCP, "10.96.0.25:80", reaches(false, rest...)).Out.Dst
	e.check(external, protoTCP, "10.96.0.25:80", reaches(false, again.String()))
}

// TestTraceEgressSNAT runs with an overlay: with the uplink an output-feature
// interface, a service flow that would enter and leave through it (an
// external client reaching a backend on another node through the uplink) is
// translated a second time on the way out (VPP's
// nat44_ed_not_translate_output_feature translates what arrived on an
// output-feature interface) and its reply is lost, so egress SNAT needs the
// other nodes' pods behind another interface.
func TestTraceEgressSNAT(t *testing.T) {
	cfg := testConfig()
	cfg.EgressSNAT = nat44.EgressSNAT{Enabled: true, Interface: "uplink0", Address: nodeIP,
		IdentityPorts: []nat44.PortProtocol{{Port: 4789, Protocol: "udp"}}}
	v := newFakeWith(true)
	ag := startAgentWith(t, v, true, cfg, "uplink0", "host0", "vxlan0")
	ag.proc.Resync(cluster{
		services: []*corev1.Service{k8sService("np", "10.96.0.13", nodePortType(30080))},
		slices:   []*discoveryv1.EndpointSlice{k8sSlice("np", local("10.1.1.2"), remote("10.1.2.2"))},
	}.snapshot())
	e := &env{t: t, fake: v, agent: ag, sport: 40000}

	// Pod egress to the internet leaves with the node's address ...
	tr := e.trace(localPod, protoUDP, "8.8.8.8:53")
	if tr.Verdict != fakevpp.Forward || tr.Egress != "uplink0" || !tr.SNAT || tr.Out.Src.Addr() != nodeIP || !tr.ReplyOK {
		t.Fatalf("pod egress: %s via %s from %s snat=%t replyOK=%t\n%s", tr.Verdict, tr.Egress, tr.Out.Src, tr.SNAT, tr.ReplyOK, strings.Join(tr.Steps, "\n"))
	}
	// ... traffic to other nodes' pods does not.
	tr = e.trace(localPod, protoTCP, "10.1.2.7:22")
	if tr.Verdict != fakevpp.Forward || tr.Egress != "vxlan0" || tr.SNAT || !tr.ReplyOK {
		t.Fatalf("pod to remote pod: %s via %s from %s snat=%t\n%s", tr.Verdict, tr.Egress, tr.Out.Src, tr.SNAT, strings.Join(tr.Steps, "\n"))
	}
	// Services still work, also through the output-feature uplink.
	overlayPod := client{"remote pod (overlay)", "vxlan0", remotePod.addr}
	for _, cl := range []client{localPod, theNode, overlayPod, external} {
		e.check(cl, protoTCP, "192.168.16.1:30080", reaches(true, "10.1.1.2:8080", "10.1.2.2:8080"))
		e.check(cl, protoTCP, "10.96.0.13:80", reaches(false, "10.1.1.2:8080", "10.1.2.2:8080"))
	}
}

// isReadOnly reports whether a VPP message only reads state (dumps, gets,
// show, event subscriptions, version and compatibility checks).
func isReadOnly(msg string) bool {
	for _, s := range []string{"_dump", "_get", "show_", "want_", "control_ping", "get_", "_details", "memclnt_", "sockclnt_", "api_versions", "feature_is_enabled"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
