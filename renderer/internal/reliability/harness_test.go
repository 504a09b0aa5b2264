// Package reliability_test holds the end-to-end reliability tests
// (docs/reliability.md): Kubernetes objects go through the processor, both
// renderers (NAT44 for IPv4, cnat for IPv6), the VPP layer and govpp into a
// fake VPP with faults and restarts, and the fake's Dump — every object VPP
// holds, independent of indexes and creation order — is compared with the
// dump a fresh agent produces from one Resync of the same objects on a fresh
// fake. Equal dumps mean no missing, duplicate or leaked object: ACLs by tag,
// NAT44 mappings with their locals, cnat translations with their paths.
//
// It lives under renderer/ to reuse the wiring of renderer/internal/tracetest
// (an internal package). Every randomised test prints its seed on failure.
package reliability_test

import (
	"bytes"
	"fmt"
	"maps"
	"net/netip"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vppagent "github.com/vppsvc/vppsvc/agent"
	"github.com/vppsvc/vppsvc/fakevpp"
	"github.com/vppsvc/vppsvc/internal/agenttest"
	"github.com/vppsvc/vppsvc/processor"
	"github.com/vppsvc/vppsvc/renderer/internal/tracetest"
	"github.com/vppsvc/vppsvc/renderer/ipv6"
	"github.com/vppsvc/vppsvc/renderer/nat44"
	"github.com/vppsvc/vppsvc/vppcfg/engine"
)

// Address plan (as renderer/ipv6's traces, dual stack): node-1 is
// 192.168.16.1 and fd00:16::1 on uplink0, node-2 .2 / ::2; local pods
// 10.1.1.<N> and fd00:1:1::<N> on tap<N>; remote pods 10.1.2.0/24 and
// fd00:1:2::/64; ClusterIPs 10.96.0.0/16 and fd00:96::/112; LoadBalancer
// ingress 198.51.100.0/24 and 2001:db8:1b::/64.
var (
	nodeIP4, otherNodeIP4 = netip.MustParseAddr("192.168.16.1"), netip.MustParseAddr("192.168.16.2")
	nodeIP6, otherNodeIP6 = netip.MustParseAddr("fd00:16::1"), netip.MustParseAddr("fd00:16::2")
	localPods             = tracetest.LocalPods
)

// seqLog, with VPPSVC_SEQ_LOG=<file>, collects the debug logs of every
// agent of the current property sequence (reset per sequence); a failing
// wait writes it to the file. A failure that needs load to show is then
// debuggable without logging thousands of passing sequences.
var seqLog = func() *lockedBuffer {
	if os.Getenv("VPPSVC_SEQ_LOG") == "" {
		return nil
	}
	b := &lockedBuffer{}
	tracetest.DebugOutput = b
	return b
}()

// lockedBuffer is a buffer several loggers write to.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func resetSeqLog() {
	if seqLog != nil {
		seqLog.mu.Lock()
		seqLog.buf.Reset()
		seqLog.mu.Unlock()
	}
}

func saveSeqLog(tb testing.TB) {
	if seqLog != nil {
		seqLog.mu.Lock()
		defer seqLog.mu.Unlock()
		if err := os.WriteFile(os.Getenv("VPPSVC_SEQ_LOG"), seqLog.buf.Bytes(), 0o644); err != nil {
			tb.Log(err)
		}
	}
}

// convergeTimeout bounds every wait for convergence.
const convergeTimeout = 20 * time.Second

// newFake returns node-1's fake VPP (tracetest.NewDualStackNode).
func newFake(seed int64) *fakevpp.VPP { return tracetest.NewDualStackNode(seed) }

// agent is one run of the product's agent: processor (with its retry
// loop), the IPv6 and NAT44 renderers, reconciler and govpp driver.
type agent struct {
	*agenttest.Run
	proc *processor.Processor
}

// startAgent connects a new agent to v (first: over v itself, the first
// connection a fake sees; otherwise over a new client connection).
func startAgent(tb testing.TB, v *fakevpp.VPP, first bool) *agent {
	tb.Helper()
	cfg6 := ipv6.DefaultConfig()
	cfg6.SNATAddress = nodeIP6
	cfg4 := nat44.DefaultConfig()
	cfg4.TwiceNATAddress = nodeIP4
	run := agenttest.Start(tb, v, first, vppagent.Options{
		NodeName: tracetest.ThisNode, FrontendInterfaces: []string{"uplink0", "host0"},
		Config: agenttest.Config(&cfg4, &cfg6), Log: tracetest.QuietLogger(),
	})
	return &agent{Run: run, proc: run.Agent.Processor}
}

// scope is a testing.TB whose Cleanup functions run when the scope ends
// rather than when the test does. A property test runs thousands of
// sequences in one test; every agent registers its stop with Cleanup (and
// tracetest its layer's), and a cleanup keeps what it stops reachable, so
// with the test's own Cleanup every sequence's agents, fakes and their
// state would stay in memory until the test ends (the kernel once killed
// the 10,000-sequence run at 24 GB). Everything else goes to the
// test.
type scope struct {
	testing.TB
	mu       sync.Mutex
	cleanups []func()
}

// Cleanup registers f to run when the scope ends.
func (s *scope) Cleanup(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cleanups = append(s.cleanups, f)
}

// end runs the cleanups, last registered first, and forgets them.
func (s *scope) end() {
	for {
		s.mu.Lock()
		n := len(s.cleanups)
		if n == 0 {
			s.mu.Unlock()
			return
		}
		f := s.cleanups[n-1]
		s.cleanups = s.cleanups[:n-1]
		s.mu.Unlock()
		f()
	}
}

// inScope runs f with a scope of tb and ends the scope when f returns,
// also when f fails the test (t.Fatal) or panics: what f starts is stopped
// and released then, not when the test ends.
func inScope(tb testing.TB, f func(tb testing.TB)) {
	tb.Helper()
	s := &scope{TB: tb}
	defer s.end()
	f(s)
}

// stop stops the agent; VPP keeps its state. Stopping twice is harmless.
func (a *agent) stop() { a.Run.Stop() }

// converged reports whether every renderer is clean and every desired item
// is applied.
func (a *agent) converged() bool {
	if a.proc.Stats().DirtyRenderers != 0 {
		return false
	}
	s := a.Rec.Stats()
	return s.Synced && s.Pending == 0 && s.Failed == 0 && s.Applied == s.Desired
}

// waitFor polls cond until it holds or timeout passes.
func waitFor(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(2 * time.Millisecond)
	}
	return true
}

// waitDump waits until a is converged and v's dump is want; it fails the
// test with the difference (and what) otherwise.
func waitDump(tb testing.TB, a *agent, v *fakevpp.VPP, want, what string) {
	tb.Helper()
	w := dumpEntries(want)
	if waitFor(convergeTimeout, func() bool { return a.converged() && maps.Equal(dumpEntries(v.Dump()), w) }) {
		return
	}
	saveSeqLog(tb)
	tb.Fatalf("%s: VPP does not converge to the desired state (converged=%t, %d dirty renderers)\nnot applied: %s\n%s",
		what, a.converged(), a.proc.Stats().DirtyRenderers, notApplied(a), dumpDiff(v.Dump(), want))
}

// sharedTag matches the tag of an ACL both renderers desire (a shared
// item): it names whichever owner created it first.
var sharedTag = regexp.MustCompile(`vppsvc:(nat44|ipv6):vppsvc-permit-all`)

// normalise makes a dump independent of which owner created a shared item.
func normalise(dump string) string {
	return sharedTag.ReplaceAllString(dump, "vppsvc:(shared):vppsvc-permit-all")
}

// notApplied lists the statuses of the items that are not applied.
func notApplied(a *agent) string {
	var out []string
	for _, s := range a.Rec.Statuses() {
		if s.State != engine.StateApplied {
			out = append(out, s.String()+fmt.Sprintf(" since %s", time.Since(s.Since).Round(time.Millisecond)))
		}
	}
	return strings.Join(out, "; ")
}

// dumpEntries counts the entries of a dump (an entry with its continuation
// lines, prefixed by its section), shared items' tags normalised: equal
// counts mean VPP holds the same objects.
func dumpEntries(d string) map[string]int {
	d = normalise(d)
	m, sec, cur := map[string]int{}, "", ""
	var locals []string
	flush := func() {
		if cur != "" {
			slices.Sort(locals)
			m[sec+" "+strings.Join(append([]string{cur}, locals...), " | ")]++
		}
		cur, locals = "", nil
	}
	for _, l := range strings.Split(d, "\n") {
		switch {
		case strings.HasPrefix(l, "    local "):
			// LB locals are a set; VPP lists them in the order they came.
			locals = append(locals, strings.TrimSpace(l))
		case strings.HasPrefix(l, "    "):
			cur += " | " + strings.TrimSpace(l)
		case strings.HasPrefix(l, "  "):
			flush()
			cur = strings.TrimSpace(l)
		default:
			flush()
			sec = l
			m["section "+sec]++
		}
	}
	flush()
	return m
}

// dumpDiff lists the entries only one of two dumps has.
func dumpDiff(got, want string) string {
	g, w := dumpEntries(got), dumpEntries(want)
	var out []string
	for l, n := range g {
		if n > w[l] {
			out = append(out, fmt.Sprintf("+ %s (×%d)", l, n-w[l]))
		}
	}
	for l, n := range w {
		if n > g[l] {
			out = append(out, fmt.Sprintf("- %s (×%d)", l, n-g[l]))
		}
	}
	slices.Sort(out)
	if len(out) == 0 {
		return "(dumps equal)"
	}
	return "+ only in VPP, - only in the desired state:\n" + strings.Join(out, "\n")
}

// reference is the dump a fresh agent on a fresh fake makes from one Resync
// of snap (after prepare, when given, programmed the fresh fake). The agent
// and the fake are released on return.
func reference(tb testing.TB, snap processor.Snapshot, prepare func(*fakevpp.VPP)) (dump string) {
	tb.Helper()
	inScope(tb, func(tb testing.TB) {
		tb.Helper()
		v := newFake(1)
		if prepare != nil {
			prepare(v)
		}
		a := startAgent(tb, v, prepare == nil)
		a.proc.Resync(snap)
		if !waitFor(convergeTimeout, a.converged) {
			tb.Fatalf("reference agent does not converge: %+v", a.Rec.Stats())
		}
		tracetest.AssertNoViolations(tb, v)
		dump = v.Dump()
	})
	return dump
}

// cluster is the Kubernetes state of a test, by name.
type cluster struct {
	services map[string]*corev1.Service
	slices   map[string]*discoveryv1.EndpointSlice
	nodes    map[string]*corev1.Node
	pods     map[string]processor.LocalPod
}

func newCluster() *cluster {
	c := &cluster{services: map[string]*corev1.Service{}, slices: map[string]*discoveryv1.EndpointSlice{},
		nodes: map[string]*corev1.Node{}, pods: map[string]processor.LocalPod{}}
	c.nodes[tracetest.ThisNode] = tracetest.Node(tracetest.ThisNode, nodeIP6, nodeIP4)
	c.nodes[tracetest.OtherNode] = tracetest.Node(tracetest.OtherNode, otherNodeIP6, otherNodeIP4)
	for _, n := range localPods {
		p := localPod(n)
		c.pods[p.ID.Name] = p
	}
	return c
}

func localPod(n int) processor.LocalPod {
	return processor.LocalPod{
		ID:        processor.PodID{Namespace: "default", Name: fmt.Sprintf("pod-%d", n)},
		IPs:       []netip.Addr{netip.MustParseAddr(fmt.Sprintf("fd00:1:1::%d", n)), netip.MustParseAddr(fmt.Sprintf("10.1.1.%d", n))},
		Interface: fmt.Sprintf("tap%d", n),
	}
}

func sortedValues[V any](m map[string]V) []V {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]V, len(keys))
	for i, k := range keys {
		out[i] = m[k]
	}
	return out
}

func (c *cluster) snapshot() processor.Snapshot {
	return processor.Snapshot{Services: sortedValues(c.services), EndpointSlices: sortedValues(c.slices),
		Nodes: sortedValues(c.nodes), LocalPods: sortedValues(c.pods)}
}

func (c *cluster) addService(s *corev1.Service)          { c.services[s.Name] = s }
func (c *cluster) addSlice(s *discoveryv1.EndpointSlice) { c.slices[s.Name] = s }
func sliceName(svc string, fam discoveryv1.AddressType) string {
	return svc + "-" + strings.ToLower(string(fam))
}

// service i of a bulk cluster: ClusterIP (IPv4, IPv6 or dual stack by i),
// every fifth a NodePort and every seventh a LoadBalancer (every other one
// with source ranges); two ports.
func bulkService(i int) *corev1.Service {
	v4 := fmt.Sprintf("10.96.%d.%d", i/250, 1+i%250)
	v6 := fmt.Sprintf("fd00:96::%x", i+1)
	var ips []string
	var fams []corev1.IPFamily
	switch i % 3 {
	case 0:
		ips, fams = []string{v4}, []corev1.IPFamily{corev1.IPv4Protocol}
	case 1:
		ips, fams = []string{v6}, []corev1.IPFamily{corev1.IPv6Protocol}
	default:
		ips, fams = []string{v4, v6}, []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}
	}
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("svc-%d", i)},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: ips[0], ClusterIPs: ips, IPFamilies: fams,
			Ports: []corev1.ServicePort{
				{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80},
				{Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53},
			}},
	}
	switch {
	case i%7 == 3:
		s.Spec.Type = corev1.ServiceTypeLoadBalancer
		s.Spec.Ports[0].NodePort = int32(30000 + i%2700)
		s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: fmt.Sprintf("198.51.100.%d", 1+i%250)}}
		if i%2 == 1 { // filtered: the renderers program ACLs
			s.Spec.LoadBalancerSourceRanges = []string{"100.64.1.0/24", "2001:db8:c:1::/64"}
		}
	case i%5 == 2:
		s.Spec.Type = corev1.ServiceTypeNodePort
		s.Spec.Ports[0].NodePort = int32(30000 + i%2700)
	}
	return s
}

// bulkSlices are the slices of bulkService(i): per family, 1–3 endpoints
// mixing local pods and pods of node-2.
func bulkSlices(i int) []*discoveryv1.EndpointSlice {
	var out []*discoveryv1.EndpointSlice
	for _, fam := range []discoveryv1.AddressType{discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6} {
		if (fam == discoveryv1.AddressTypeIPv4 && i%3 == 1) || (fam == discoveryv1.AddressTypeIPv6 && i%3 == 0) {
			continue
		}
		var eps []discoveryv1.Endpoint
		for j := range 1 + i%3 {
			eps = append(eps, endpointOf(fam, (i+j)%12))
		}
		out = append(out, slice(fmt.Sprintf("svc-%d", i), fam, eps...))
	}
	return out
}

// endpointOf is pod n of a family: n < 4 the local pods, else a pod of node-2.
func endpointOf(fam discoveryv1.AddressType, n int) discoveryv1.Endpoint {
	if n < len(localPods) {
		if fam == discoveryv1.AddressTypeIPv6 {
			return tracetest.Local(fmt.Sprintf("fd00:1:1::%d", localPods[n]))
		}
		return tracetest.Local(fmt.Sprintf("10.1.1.%d", localPods[n]))
	}
	if fam == discoveryv1.AddressTypeIPv6 {
		return tracetest.Remote(fmt.Sprintf("fd00:1:2::%x", n))
	}
	return tracetest.Remote(fmt.Sprintf("10.1.2.%d", n))
}

// slice is the slice of svc for a family with ports "http" 8080/TCP and
// "dns" 5353/UDP.
func slice(svc string, fam discoveryv1.AddressType, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	s := tracetest.Slice(svc, fam, eps...)
	s.Name = sliceName(svc, fam)
	s.Ports = append(s.Ports, discoveryv1.EndpointPort{Name: tracetest.Ptr("dns"), Protocol: tracetest.Ptr(corev1.ProtocolUDP), Port: tracetest.Ptr(int32(5353))})
	return s
}

// bulkCluster is a cluster of n bulk services with their slices.
func bulkCluster(n int) *cluster {
	c := newCluster()
	for i := range n {
		c.addService(bulkService(i))
		for _, s := range bulkSlices(i) {
			c.addSlice(s)
		}
	}
	return c
}

// sizes picks the short-mode or long-mode size.
func sizes(short, long int) int {
	if testing.Short() {
		return short
	}
	return long
}
