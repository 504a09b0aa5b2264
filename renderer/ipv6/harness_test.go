package ipv6_test

// The harness of the packet traces (trace_test.go) and of the cold-sync
// benchmark (bench_test.go): Kubernetes objects go through the processor,
// the renderers, the VPP layer (store, reconciler, govpp driver) and the fake
// VPP, and packets are then traced through the fake's data plane.
//
// Address plan. One node, node-1, of a two-node dual-stack cluster:
//
//	uplink0   fd00:16::1/64, 192.168.16.1/24   node-1's InternalIPs (node-2: fd00:16::2,
//	                                           192.168.16.2); also the IPv6 SNAT address.
//	                                           Remote pods, external clients, external IPs
//	                                           and LoadBalancer IPs are routed here (::/0,
//	                                           fd00:1:2::/64, 0.0.0.0/0, 10.1.2.0/24).
//	host0     fd00:30::1/64, 172.30.1.1/24     VPP's side of the host interface; the node's
//	                                           host stack sends from fd00:30::2 (172.30.1.2).
//	tap<N>    (no address)                     local pod fd00:1:1::<N> (10.1.1.<N>), routes
//	                                           /128 and /32 via tap<N>
//	fd00:1:2::/64, 10.1.2.0/24                 pods on node-2
//	fd00:96::/112 (10.96.0.0/16)               ClusterIPs
//	2001:db8:e::/64                            spec.externalIPs
//	2001:db8:1b::/64                           LoadBalancer ingress IPs
//	2001:db8:c::/48                            external clients (2001:db8:c:1::/64 is an
//	                                           allowed source range, 2001:db8:c:2::/64 not)
//
// Clients used by every scenario: a local pod fd00:1:1::9 (tap9, serves
// nothing), the node (host0), a remote pod fd00:1:2::9 and an external
// client 2001:db8:c:1::5 (both on uplink0).

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
	"go.fd.io/govpp/binapi/cnat"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip_types"
	"go.fd.io/govpp/core"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vppsvc/vppsvc/fakevpp"
	"github.com/vppsvc/vppsvc/processor"
	"github.com/vppsvc/vppsvc/renderer/ipv6"
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
	localPod   = client{"local pod", "tap9", netip.MustParseAddr("fd00:1:1::9")}
	theNode    = client{"node", "host0", netip.MustParseAddr("fd00:30::2")}
	remotePod  = client{"remote pod", "uplink0", netip.MustParseAddr("fd00:1:2::9")}
	external   = client{"external client", "uplink0", netip.MustParseAddr("2001:db8:c:1::5")}
	outsider   = client{"external client outside the source ranges", "uplink0", netip.MustParseAddr("2001:db8:c:2::5")}
	allClients = []client{localPod, theNode, remotePod, external}

	nodeIP6, otherNodeIP6 = netip.MustParseAddr("fd00:16::1"), netip.MustParseAddr("fd00:16::2")
	nodeIP4, otherNodeIP4 = netip.MustParseAddr("192.168.16.1"), netip.MustParseAddr("192.168.16.2")
)

// podClient is local pod <N> as a client.
func podClient(n int) client {
	return client{fmt.Sprintf("pod %d", n), fmt.Sprintf("tap%d", n), netip.MustParseAddr(fmt.Sprintf("fd00:1:1::%d", n))}
}

// localPods are the pods of node-1 the fake has a tap for.
var localPods = []int{2, 3, 4, 9}

// newFake returns the fake VPP of node-1, interfaces and routes created
// before the first connection (VPP's startup configuration).
func newFake() *fakevpp.VPP {
	v := fakevpp.New(fakevpp.WithSeed(1))
	v.AddInterface("uplink0", netip.MustParsePrefix("fd00:16::1/64"), netip.MustParsePrefix("192.168.16.1/24"))
	v.AddInterface("host0", netip.MustParsePrefix("fd00:30::1/64"), netip.MustParsePrefix("172.30.1.1/24"))
	for _, n := range localPods {
		tap := fmt.Sprintf("tap%d", n)
		v.AddInterface(tap)
		v.AddRoute(netip.MustParsePrefix(fmt.Sprintf("fd00:1:1::%d/128", n)), tap)
		v.AddRoute(netip.MustParsePrefix(fmt.Sprintf("10.1.1.%d/32", n)), tap)
	}
	for _, p := range []string{"fd00:1:2::/64", "::/0", "10.1.2.0/24", "0.0.0.0/0"} {
		v.AddRoute(netip.MustParsePrefix(p), "uplink0")
	}
	return v
}

// cnatProbe remembers, for the whole test binary, what the fake VPP lacks
// to run these tests ("" once it has everything).
var cnatProbe struct {
	once    sync.Once
	missing string
}

// requireFakeCNAT skips the test while fakevpp cannot run it: its cnat
// emulation (fakevpp/internal/cnat) must answer CnatTranslationUpdate and
// translate packets on the VIP path.
func requireFakeCNAT(tb testing.TB) {
	tb.Helper()
	cnatProbe.once.Do(func() { cnatProbe.missing = probeFakeCNAT() })
	if cnatProbe.missing != "" {
		tb.Skip(cnatProbe.missing)
	}
}

// probeFakeCNAT programs one translation into a scratch fake VPP and traces
// one packet through it; it returns what is missing, or "".
func probeFakeCNAT() string {
	v := fakevpp.New()
	v.AddInterface("eth0", netip.MustParsePrefix("fd00:99::1/64"))
	conn, err := core.Connect(v)
	if err != nil {
		return "fakevpp: govpp cannot connect: " + err.Error()
	}
	defer conn.Disconnect()
	ep := func(s string, port uint16) cnat.CnatEndpoint {
		a, _ := ip_types.ParseAddress(s)
		return cnat.CnatEndpoint{Addr: a, SwIfIndex: ^interface_types.InterfaceIndex(0), IfAf: ip_types.ADDRESS_IP6, Port: port}
	}
	_, err = cnat.NewServiceClient(conn).CnatTranslationUpdate(context.Background(), &cnat.CnatTranslationUpdate{
		Translation: cnat.CnatTranslation{
			Vip: ep("fd00:96::1", 80), ID: ^uint32(0), IPProto: ip_types.IP_API_PROTO_TCP,
			Paths: []cnat.CnatEndpointTuple{{SrcEp: ep("::", 0), DstEp: ep("fd00:99::2", 8080)}},
		},
	})
	if err != nil {
		return fmt.Sprintf("fakevpp does not serve cnat yet: CnatTranslationUpdate answered %v "+
			"(fakevpp/internal/cnat is not wired into fakevpp's core)", err)
	}
	tr := v.Trace(fakevpp.Packet{Ingress: "eth0", Protocol: protoTCP,
		Src: netip.MustParseAddrPort("[fd00:99::5]:1000"), Dst: netip.MustParseAddrPort("[fd00:96::1]:80")})
	if tr.Verdict != fakevpp.Forward || tr.Out.Dst != netip.MustParseAddrPort("[fd00:99::2]:8080") {
		return fmt.Sprintf("fakevpp answers CnatTranslationUpdate but Trace does not translate on cnat's VIP path "+
			"(ip6-cnat-tx): a packet to the VIP gave %s to %s (%s)", tr.Verdict, tr.Out.Dst, tr.Reason)
	}
	return ""
}

// agent is one run of the control plane over a fake VPP: processor, the
// IPv6 renderer (and optionally the NAT44 renderer), reconciler and driver.
type agent struct {
	proc   *processor.Processor
	rec    *vppcfg.Reconciler
	drv    *govppdriver.Driver
	cancel context.CancelFunc
	done   chan struct{}
}

func testConfig() ipv6.Config {
	cfg := ipv6.DefaultConfig()
	cfg.SNATAddress = nodeIP6
	return cfg
}

// agentOptions choose the renderers of an agent.
type agentOptions struct {
	cfg   ipv6.Config
	nat44 bool // also register the NAT44 renderer (dual stack)
}

// startAgent connects a new agent to v (first: over v itself, otherwise
// over a new client connection) and waits for the reconciler's first sync.
func startAgent(tb testing.TB, v *fakevpp.VPP, first bool, opts agentOptions) *agent {
	tb.Helper()
	log := quietLogger()
	var a = v.NewAdapter()
	if first {
		a = v
	}
	drv, err := govppdriver.Connect(a, govppdriver.Options{Logger: log, ReconnectInterval: 20 * time.Millisecond})
	if err != nil {
		tb.Fatal(err)
	}
	rec := vppcfg.NewReconciler(drv, vppcfg.Options{Logger: log, RetryMin: time.Millisecond, RetryMax: 20 * time.Millisecond})
	r, err := ipv6.New(rec.Client(ipv6.Name), opts.cfg, log)
	if err != nil {
		tb.Fatal(err)
	}
	proc := processor.New(processor.Config{NodeName: thisNode, FrontendInterfaces: []string{"uplink0", "host0"}, Logger: log})
	proc.RegisterRenderer(ipv6.Name, r)
	if opts.nat44 {
		cfg4 := nat44.DefaultConfig()
		cfg4.TwiceNATAddress = nodeIP4
		r4, err := nat44.New(rec.Client(nat44.Name), cfg4, log)
		if err != nil {
			tb.Fatal(err)
		}
		proc.RegisterRenderer(nat44.Name, r4)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ag := &agent{proc: proc, rec: rec, drv: drv, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(ag.done)
		if err := rec.Start(ctx); err != nil {
			tb.Errorf("reconciler: %v", err)
		}
	}()
	select {
	case <-rec.Synced():
	case <-time.After(10 * time.Second):
		tb.Fatal("reconciler did not sync")
	}
	tb.Cleanup(ag.stop)
	return ag
}

func (a *agent) stop() {
	select {
	case <-a.done:
		return
	default:
	}
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
		Nodes: []*corev1.Node{
			k8sNode(thisNode, nodeIP6, nodeIP4),
			k8sNode(otherNode, otherNodeIP6, otherNodeIP4),
		},
	}
	for _, n := range localPods {
		s.LocalPods = append(s.LocalPods, processor.LocalPod{
			ID: processor.PodID{Namespace: "default", Name: fmt.Sprintf("pod-%d", n)},
			IPs: []netip.Addr{
				netip.MustParseAddr(fmt.Sprintf("fd00:1:1::%d", n)),
				netip.MustParseAddr(fmt.Sprintf("10.1.1.%d", n)),
			},
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
	return newEnvWith(t, agentOptions{cfg: testConfig()}, c)
}

func newEnvWith(t *testing.T, opts agentOptions, c cluster) *env {
	t.Helper()
	requireFakeCNAT(t)
	v := newFake()
	ag := startAgent(t, v, true, opts)
	ag.proc.Resync(c.snapshot())
	t.Cleanup(func() { assertNoViolations(t, v) })
	return &env{t: t, fake: v, agent: ag, sport: 40000}
}

// assertNoViolations fails when the fake VPP saw a request or packet that
// would crash or misbehave in VPP (an empty path list, SwIfIndex 0 for a
// literal endpoint, a mixed-family path, …).
func assertNoViolations(tb testing.TB, v *fakevpp.VPP) {
	tb.Helper()
	for _, viol := range v.Violations() {
		tb.Errorf("fake VPP violation: %s: %s", viol.Message, viol.Detail)
	}
}

// trace sends the first packet (TCP SYN, or UDP) of a new flow from cl to
// dst, from a source port no earlier flow of the env used.
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
	// snatted are the endpoints whose flows must arrive from the SNAT
	// address; flows to the other endpoints keep the client address.
	snatted []string
}

var dropped = expect{verdict: fakevpp.Drop}

// reaches expects a flow to one of endpoints, keeping the client address.
func reaches(endpoints ...string) expect {
	return expect{verdict: fakevpp.Forward, endpoints: endpoints}
}

// snatTo expects the flows to eps to be source-NATed.
func (x expect) snatTo(eps ...string) expect { x.snatted = eps; return x }

// snatAll expects every flow to be source-NATed.
func (x expect) snatAll() expect { x.snatted = x.endpoints; return x }

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
	snat := slices.Contains(want.snatted, tr.Out.Dst.String())
	if tr.SNAT != snat {
		fail("SNAT %t (source %s), want %t", tr.SNAT, tr.Out.Src, snat)
	}
	if snat && tr.Out.Src.Addr() != nodeIP6 {
		fail("source NATed to %s, want the SNAT address %s", tr.Out.Src.Addr(), nodeIP6)
	}
	if !tr.ReplyOK {
		fail("the reply does not come back from %s", dst)
	}
	return tr
}

// Kubernetes object builders.

func ptr[T any](v T) *T { return &v }

// k8sService is an IPv6 ClusterIP service with TCP port "http" 80 → target
// "http".
func k8sService(name, clusterIP string, mutate ...func(*corev1.Service)) *corev1.Service {
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: corev1.ServiceSpec{
			Type:       corev1.ServiceTypeClusterIP,
			ClusterIP:  clusterIP,
			ClusterIPs: []string{clusterIP},
			IPFamilies: []corev1.IPFamily{corev1.IPv6Protocol},
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

func externalIPs(ips ...string) func(*corev1.Service) {
	return func(s *corev1.Service) { s.Spec.ExternalIPs = ips }
}

func etpLocal(s *corev1.Service) {
	s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
}

func itpLocal(s *corev1.Service) {
	s.Spec.InternalTrafficPolicy = ptr(corev1.ServiceInternalTrafficPolicyLocal)
}

func clientIPAffinity(s *corev1.Service) {
	s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
	s.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr(int32(600))}}
}

// k8sSlice is an IPv6 slice of svc with port "http" 8080 and the endpoints.
func k8sSlice(svc string, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "default", Name: svc + "-v6", Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: discoveryv1.AddressTypeIPv6,
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

func k8sNode(name string, ips ...netip.Addr) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for _, ip := range ips {
		n.Status.Addresses = append(n.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: ip.String()})
	}
	return n
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

// vppWrites counts the calls that change VPP state.
func vppWrites(v *fakevpp.VPP) int {
	n := 0
	for msg, c := range v.Calls() {
		if !isReadOnly(msg) {
			n += c
		}
	}
	return n
}
