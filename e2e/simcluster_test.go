package e2e

// The cluster-scale simulation (make sim-cluster, docs/scale.md): N vppsvc
// agents and N kube-proxy informer sets against one API server, each with
// a connection of its own whose bytes are counted, under endpoint churn and
// kubelet-like Node status updates. It measures what one more node costs
// the API server and what each agent receives, next to kube-proxy's.

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	proxyapis "k8s.io/kubernetes/pkg/proxy/apis"
	proxyconfig "k8s.io/kubernetes/pkg/proxy/config"

	vppsvc "github.com/vppsvc/vppsvc"
	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/processor"
	"github.com/vppsvc/vppsvc/processor/k8swatch"
	"github.com/vppsvc/vppsvc/renderer/ipv6"
	"github.com/vppsvc/vppsvc/renderer/nat44"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// simConfig is the simulation's size; every figure has an environment
// variable (simConfigFromEnv).
type simConfig struct {
	agents    int           // VPPSVC_SIM_AGENTS: vppsvc agents, and as many kube-proxy sets
	services  int           // VPPSVC_SIM_SERVICES
	endpoints int           // VPPSVC_SIM_ENDPOINTS, spread evenly over the services
	churn     int           // VPPSVC_SIM_CHURN: endpoint changes per second, cluster-wide
	duration  time.Duration // VPPSVC_SIM_DURATION: how long the churn is measured
	baseline  time.Duration // VPPSVC_SIM_BASELINE: churn with no watcher, for the API server's own cost
	nodeEvery time.Duration // VPPSVC_SIM_NODE_PERIOD: each Node's status update period (kubelet: 10 s)
}

func simConfigFromEnv(t *testing.T) simConfig {
	num := func(name string, def int) int {
		v := os.Getenv(name)
		if v == "" {
			return def
		}
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			t.Fatalf("%s=%q: want a positive integer", name, v)
		}
		return n
	}
	dur := func(name string, def time.Duration) time.Duration {
		v := os.Getenv(name)
		if v == "" {
			return def
		}
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			t.Fatalf("%s=%q: want a positive duration", name, v)
		}
		return d
	}
	return simConfig{
		agents:    num("VPPSVC_SIM_AGENTS", 200),
		services:  num("VPPSVC_SIM_SERVICES", 1000),
		endpoints: num("VPPSVC_SIM_ENDPOINTS", 10000),
		churn:     num("VPPSVC_SIM_CHURN", 20),
		duration:  dur("VPPSVC_SIM_DURATION", 60*time.Second),
		baseline:  dur("VPPSVC_SIM_BASELINE", 10*time.Second),
		nodeEvery: dur("VPPSVC_SIM_NODE_PERIOD", 10*time.Second),
	}
}

func TestSimCluster(t *testing.T) {
	if os.Getenv("VPPSVC_SIM") != "1" {
		t.Skip("the cluster-scale simulation runs with VPPSVC_SIM=1 (make sim-cluster)")
	}
	cfg := simConfigFromEnv(t)
	begin := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := newNamespace(t)
	t.Logf("simulation: %d agents + %d kube-proxy sets, %d services, %d endpoints, %d endpoint changes/s for %s, Node status every %s",
		cfg.agents, cfg.agents, cfg.services, cfg.endpoints, cfg.churn, cfg.duration, cfg.nodeEvery)

	nodes := createSimNodes(t, ctx, cfg.agents)
	w := createSimServices(t, ctx, ns, cfg)
	t.Logf("cluster written in %s", time.Since(begin).Round(time.Millisecond))

	// The API server on its own: the same churn with no watcher but the
	// harness's.
	heapAlone := heapInUse()
	cpu0 := processCPU()
	w.churn(t, ctx, cfg.churn, cfg.baseline, nil)
	cpuAlone := (processCPU() - cpu0).Seconds() / cfg.baseline.Seconds()

	// Every node's vppsvc agent and kube-proxy informers, each on a
	// connection of its own.
	probes := &probeBook{agents: cfg.agents, bySvc: map[model.ServiceID][]*probe{}}
	syncStart := time.Now()
	agents := make([]*simAgent, cfg.agents)
	proxies := make([]*simProxy, cfg.agents)
	// In batches, as a DaemonSet rolls out: hundreds of simultaneous
	// lists overrun the API server's in-flight limit and back off for
	// minutes.
	const batch = 25
	for i := range cfg.agents {
		agents[i] = startSimAgent(t, ctx, i, simNodeName(i), probes, "")
		proxies[i] = startSimProxy(t, ctx, simNodeName(i))
		if i%batch == batch-1 || i == cfg.agents-1 {
			waitSimSynced(t, agents[:i+1], proxies[:i+1])
		}
	}
	// For comparison, one agent whose client speaks JSON.
	jsonAgent := startSimAgent(t, ctx, -1, simNodeName(0), nil, "application/json")
	all := append(slices.Clone(agents), jsonAgent)
	waitSimSynced(t, all, proxies)
	syncTime := time.Since(syncStart)
	heapAll := heapInUse()
	t.Logf("%d agents and %d kube-proxy sets synced in %s", len(all), len(proxies), syncTime.Round(time.Millisecond))

	// The measured phase: endpoint churn and Node status updates.
	before := make([]simCounts, len(all))
	for i, a := range all {
		before[i] = a.counts()
	}
	kpBefore := make([]simCounts, len(proxies))
	for i, p := range proxies {
		kpBefore[i] = p.counts()
	}
	cpu1 := processCPU()
	nodeCtx, stopNodes := context.WithCancel(ctx)
	var nodeWG sync.WaitGroup
	nodeWG.Add(1)
	go func() { defer nodeWG.Done(); nodes.heartbeat(nodeCtx, cfg.nodeEvery) }()
	changes := w.churn(t, ctx, cfg.churn, cfg.duration, probes)
	stopNodes()
	nodeWG.Wait()
	cpuAll := (processCPU() - cpu1).Seconds() / cfg.duration.Seconds()
	// Let the last writes arrive everywhere.
	eventuallyWithin(t, 2*time.Minute, "every probe rendered by every agent", probes.missing)
	time.Sleep(2 * time.Second) // Node events still in flight

	// Figures.
	per1k := func(n int64) float64 { return float64(n) * 1000 / float64(changes) }
	var vs, kp, js simFigures
	for i, a := range agents {
		d := a.counts().minus(before[i])
		vs.add(per1k(d.events), per1k(d.bytes), cacheBytes(a.w.Stores()), float64(d.bytes))
		// Node events of another node would exceed this node's own updates.
		if own := nodes.updatesOf(i); d.nodeEvents != own {
			t.Errorf("agent %s: %d Node events for %d status updates of its own Node: another node's updates reached it", simNodeName(i), d.nodeEvents, own)
		}
	}
	d := jsonAgent.counts().minus(before[len(agents)])
	js.add(per1k(d.events), per1k(d.bytes), cacheBytes(jsonAgent.w.Stores()), float64(d.bytes))
	for i, p := range proxies {
		d := p.counts().minus(kpBefore[i])
		kp.add(per1k(d.events), per1k(d.bytes), cacheBytes(p.stores), float64(d.bytes))
	}
	lat, all99 := probes.latencies()

	var b strings.Builder
	fmt.Fprintf(&b, "\ncluster: %d nodes, %d services, %d endpoints; %d endpoint changes in %s (%d/s); %d Node status updates (every %s per node)\n",
		cfg.agents, cfg.services, cfg.endpoints, changes, cfg.duration, cfg.churn, nodes.total(), cfg.nodeEvery)
	fmt.Fprintf(&b, "| per agent (mean over %d) | vppsvc | kube-proxy | ratio | vppsvc over JSON (1 agent) |\n|---|---|---|---|---|\n", cfg.agents)
	row := func(name string, v, k, j float64, unit string) {
		fmt.Fprintf(&b, "| %s | %s | %s | %.2f | %s |\n", name, fmtNum(v, unit), fmtNum(k, unit), v/k, fmtNum(j, unit))
	}
	row("events per 1,000 endpoint changes", vs.mean(0), kp.mean(0), js.mean(0), "")
	row("bytes received per 1,000 endpoint changes", vs.mean(1), kp.mean(1), js.mean(1), "B")
	row("informer cache (protobuf size of the objects)", vs.mean(2), kp.mean(2), js.mean(2), "B")
	fmt.Fprintf(&b, "\nEndpointSlice write → rendered (nat44 commit), %d writes × %d agents: per agent p50 %s, p99 %s, max %s; until every agent: p50 %s, p99 %s, max %s\n",
		len(probes.list), cfg.agents, lat[0], lat[1], lat[2], all99[0], all99[1], all99[2])
	fmt.Fprintf(&b, "test process (API server + etcd + writer, then + all informer sets and agents): CPU %.2f cores alone, %.2f cores with %d agents + %d kube-proxy sets; heap in use %s alone, %s with them\n",
		cpuAlone, cpuAll, len(all), len(proxies), fmtNum(float64(heapAlone), "B"), fmtNum(float64(heapAll), "B"))
	fmt.Fprintf(&b, "initial sync of every agent and kube-proxy set: %s; whole simulation: %s\n", syncTime.Round(time.Millisecond), time.Since(begin).Round(time.Second))
	t.Log(b.String())

	// The targets.
	if r := vs.mean(1) / kp.mean(1); r > 1.1 {
		t.Errorf("vppsvc receives %.2fx kube-proxy's bytes per endpoint change (target ≤ 1.1x)", r)
	}
	if r := vs.mean(2) / kp.mean(2); r > 1.1 {
		t.Errorf("vppsvc's informer cache is %.2fx kube-proxy's (target ≤ 1.1x)", r)
	}
}

// waitSimSynced waits until every agent has had its first Resync and
// every kube-proxy set has synced.
func waitSimSynced(t *testing.T, agents []*simAgent, proxies []*simProxy) {
	t.Helper()
	eventuallyWithin(t, 5*time.Minute, "every agent and kube-proxy set synced", func() string {
		for i, a := range agents {
			if a.proc.Stats().Resyncs == 0 {
				return fmt.Sprintf("agent %d has not had its first Resync", i)
			}
		}
		for i, p := range proxies {
			if !p.synced() {
				return fmt.Sprintf("kube-proxy set %d has not synced", i)
			}
		}
		return ""
	})
}

// simNodeName is the name of the i-th simulated node.
func simNodeName(i int) string { return fmt.Sprintf("sim-node-%d", i) }

// simNodeIPv4 is the i-th node's InternalIP.
func simNodeIPv4(i int) netip.Addr {
	return netip.AddrFrom4([4]byte{172, 20, byte(i / 250), byte(i%250 + 1)})
}

// simNodes are the simulated Nodes, as the test last wrote them.
type simNodes struct {
	cs      kubernetes.Interface
	mu      sync.Mutex
	nodes   []*corev1.Node
	updates []int64
}

// createSimNodes writes n Nodes with a status of a real node's size: the
// conditions, capacity, system info and image list a kubelet reports.
func createSimNodes(t *testing.T, ctx context.Context, n int) *simNodes {
	t.Helper()
	s := &simNodes{cs: cluster.Client, nodes: make([]*corev1.Node, n), updates: make([]int64, n)}
	parallel(t, n, func(i int) error {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: simNodeName(i), Labels: map[string]string{
			corev1.LabelHostname: simNodeName(i), corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64",
			corev1.LabelTopologyZone: fmt.Sprintf("zone-%d", i%3), corev1.LabelInstanceTypeStable: "n2-standard-8",
		}}}
		created, err := s.cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		created.Status = simNodeStatus(i, time.Now())
		created, err = s.cs.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
		s.nodes[i] = created
		return err
	})
	t.Cleanup(func() {
		for i := range n {
			_ = cluster.Client.CoreV1().Nodes().Delete(context.Background(), simNodeName(i), metav1.DeleteOptions{})
		}
	})
	return s
}

func simNodeStatus(i int, now time.Time) corev1.NodeStatus {
	ts := metav1.NewTime(now)
	st := corev1.NodeStatus{
		Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: simNodeIPv4(i).String()},
			{Type: corev1.NodeHostName, Address: simNodeName(i)},
		},
		Capacity: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi"),
			corev1.ResourcePods: resource.MustParse("110"), corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
		},
		NodeInfo: corev1.NodeSystemInfo{MachineID: fmt.Sprintf("%032x", i), SystemUUID: fmt.Sprintf("%032x", i+1),
			BootID: fmt.Sprintf("%032x", i+2), KernelVersion: "6.8.0-45-generic", OSImage: "Ubuntu 24.04.1 LTS",
			ContainerRuntimeVersion: "containerd://1.7.22", KubeletVersion: "v1.34.2", OperatingSystem: "linux", Architecture: "amd64"},
	}
	st.Allocatable = st.Capacity
	for _, c := range []corev1.NodeConditionType{corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure, corev1.NodeReady} {
		status, reason := corev1.ConditionFalse, "KubeletHasSufficient"+string(c)
		if c == corev1.NodeReady {
			status, reason = corev1.ConditionTrue, "KubeletReady"
		}
		st.Conditions = append(st.Conditions, corev1.NodeCondition{Type: c, Status: status, LastHeartbeatTime: ts,
			LastTransitionTime: ts, Reason: reason, Message: "kubelet reports " + strings.ToLower(reason)})
	}
	for k := range 30 {
		st.Images = append(st.Images, corev1.ContainerImage{
			Names:     []string{fmt.Sprintf("registry.example.com/team-%d/app@sha256:%064x", k, k), fmt.Sprintf("registry.example.com/team-%d/app:v1.%d", k, k)},
			SizeBytes: int64(10_000_000 + k),
		})
	}
	return st
}

// heartbeat rewrites each Node's status (new heartbeat times) every period,
// spread evenly, as kubelets do, until ctx ends.
func (s *simNodes) heartbeat(ctx context.Context, period time.Duration) {
	var wg sync.WaitGroup
	for g := range min(simWorkers, len(s.nodes)) {
		wg.Add(1)
		go func() { defer wg.Done(); s.heartbeatOf(ctx, period, g) }()
	}
	wg.Wait()
}

// heartbeatOf updates the nodes whose index is g modulo simWorkers.
func (s *simNodes) heartbeatOf(ctx context.Context, period time.Duration, g int) {
	var mine []int
	for i := g; i < len(s.nodes); i += simWorkers {
		mine = append(mine, i)
	}
	tick := time.NewTicker(period / time.Duration(len(mine)))
	defer tick.Stop()
	for j := 0; ; j = (j + 1) % len(mine) {
		i := mine[j]
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		s.mu.Lock()
		n := s.nodes[i].DeepCopy()
		s.mu.Unlock()
		n.Status = simNodeStatus(i, time.Now())
		// Not cancelled with ctx: a write that happened is always counted.
		updated, err := s.cs.CoreV1().Nodes().UpdateStatus(context.WithoutCancel(ctx), n, metav1.UpdateOptions{})
		if err != nil {
			continue // a conflict or the end of the run: the next round retries
		}
		s.mu.Lock()
		s.nodes[i] = updated
		s.updates[i]++
		s.mu.Unlock()
	}
}

func (s *simNodes) updatesOf(i int) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.updates[i]
}

func (s *simNodes) total() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for _, u := range s.updates {
		n += u
	}
	return n
}

// simWriter owns the simulated EndpointSlices (one per service, as many
// endpoints each) and changes them.
type simWriter struct {
	ns      string
	svcs    []model.ServiceID
	slices  []*discoveryv1.EndpointSlice
	nextIP  uint32
	nodes   int
	per     int // endpoints per slice
	written int
}

// podIP is the n-th pod IP: 10.128.0.0/9, never a node's address.
func podIP(n uint32) string {
	ip := netip.AddrFrom4([4]byte{10, 128 | byte(n>>16&0x7f), byte(n >> 8), byte(n)})
	return ip.String()
}

func createSimServices(t *testing.T, ctx context.Context, ns string, cfg simConfig) *simWriter {
	t.Helper()
	per := max(cfg.endpoints/cfg.services, 1)
	w := &simWriter{ns: ns, svcs: make([]model.ServiceID, cfg.services), slices: make([]*discoveryv1.EndpointSlice, cfg.services),
		nextIP: uint32(cfg.services * per), nodes: cfg.agents, per: per}
	// Deleted in parallel before the harness's own cleanup, which deletes
	// one by one within 30 s.
	t.Cleanup(func() {
		parallel(t, cfg.services, func(i int) error {
			err := cluster.Client.CoreV1().Services(ns).Delete(context.Background(), fmt.Sprintf("svc-%d", i), metav1.DeleteOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		})
	})
	parallel(t, cfg.services, func(i int) error {
		name := fmt.Sprintf("svc-%d", i)
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": name}},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": name}, Ports: []corev1.ServicePort{
				{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(8080)}}}}
		if _, err := cluster.Client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			return err
		}
		sl := &discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-abcde", Namespace: ns, Labels: map[string]string{
				discoveryv1.LabelServiceName: name, discoveryv1.LabelManagedBy: "endpointslice-controller.k8s.io"}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Ports:       []discoveryv1.EndpointPort{{Name: ptr("http"), Protocol: ptr(corev1.ProtocolTCP), Port: ptr(int32(8080))}},
		}
		for k := range per {
			sl.Endpoints = append(sl.Endpoints, w.endpoint(uint32(i*per+k)))
		}
		created, err := cluster.Client.DiscoveryV1().EndpointSlices(ns).Create(ctx, sl, metav1.CreateOptions{})
		w.svcs[i] = model.ServiceID{Namespace: ns, Name: name}
		w.slices[i] = created
		return err
	})
	return w
}

// endpoint is the n-th pod: ready, on node n mod nodes, with its target
// reference, as the EndpointSlice controller writes it.
func (w *simWriter) endpoint(n uint32) discoveryv1.Endpoint {
	return discoveryv1.Endpoint{
		Addresses:  []string{podIP(n)},
		Conditions: discoveryv1.EndpointConditions{Ready: ptr(true), Serving: ptr(true), Terminating: ptr(false)},
		NodeName:   ptr(simNodeName(int(n) % w.nodes)),
		TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: w.ns, Name: fmt.Sprintf("pod-%d", n)},
	}
}

// churn replaces one endpoint per write (a pod replaced by a new one with
// a new IP), rate writes per second for d, services in turn; each write is
// a probe when probes is not nil. It returns the number of writes.
//
// simWorkers writers share the work, each owning the slices of its
// residue, so that the rate does not hang on one write's latency.
func (w *simWriter) churn(t *testing.T, ctx context.Context, rate int, d time.Duration, probes *probeBook) int {
	t.Helper()
	type change struct {
		i, k int
		ep   discoveryv1.Endpoint
	}
	var done atomic.Int64
	var wg sync.WaitGroup
	queues := make([]chan change, simWorkers)
	for q := range queues {
		queues[q] = make(chan change, rate)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range queues[q] {
				sl := w.slices[c.i].DeepCopy()
				sl.Endpoints[c.k] = c.ep
				if probes != nil { // timed from the write, not from the queue
					probes.add(w.svcs[c.i], netip.MustParseAddr(c.ep.Addresses[0]))
				}
				updated, err := cluster.Client.DiscoveryV1().EndpointSlices(w.ns).Update(ctx, sl, metav1.UpdateOptions{})
				if err != nil {
					t.Errorf("churn: %v", err)
					continue
				}
				w.slices[c.i] = updated
				done.Add(1)
			}
		}()
	}
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	for end := time.Now().Add(d); time.Now().Before(end); {
		<-tick.C
		i := w.written % len(w.slices)
		c := change{i: i, k: (w.written / len(w.slices)) % w.per, ep: w.endpoint(w.nextIP)}
		w.nextIP++
		w.written++
		queues[i%simWorkers] <- c
	}
	for _, q := range queues {
		close(q)
	}
	wg.Wait()
	return int(done.Load())
}

// simWorkers is how many goroutines write the churn and the Node updates.
const simWorkers = 8

// parallel runs f(0..n-1) on 8 workers and fails the test on the first error.
func parallel(t *testing.T, n int, f func(i int) error) {
	t.Helper()
	var next atomic.Int64
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					errs <- nil
					return
				}
				if err := f(i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// simRestConfig is a client configuration with a transport, hence a
// connection, of its own (a Dial function makes client-go's transport
// cache skip it) that counts the bytes of every response body into n.
// contentType "" keeps client-go's default, as `vppsvc run` does (its
// generated clients then prefer protobuf for built-in types).
func simRestConfig(n *atomic.Int64, contentType string) *rest.Config {
	c := rest.CopyConfig(cluster.Config)
	c.Timeout = 0 // as in-cluster configurations: watches stay open
	c.Dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	c.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return countingTransport{rt: rt, n: n} }
	if contentType != "" {
		c.ContentType = contentType
		c.AcceptContentTypes = contentType
	}
	return c
}

type countingTransport struct {
	rt http.RoundTripper
	n  *atomic.Int64
}

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.rt.RoundTrip(r)
	if resp != nil && resp.Body != nil {
		resp.Body = countingBody{ReadCloser: resp.Body, n: c.n}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// simCounts are one informer set's cumulative counters.
type simCounts struct{ events, nodeEvents, bytes int64 }

func (c simCounts) minus(o simCounts) simCounts {
	return simCounts{c.events - o.events, c.nodeEvents - o.nodeEvents, c.bytes - o.bytes}
}

// simAgent is one node's vppsvc: the processor and both renderers over
// in-memory VPP clients, fed by k8swatch.
type simAgent struct {
	proc  *processor.Processor
	w     *k8swatch.Watcher
	bytes atomic.Int64
}

func startSimAgent(t *testing.T, ctx context.Context, idx int, node string, probes *probeBook, contentType string) *simAgent {
	t.Helper()
	log := discardLogger()
	a := &simAgent{proc: processor.New(processor.Config{NodeName: node, FrontendInterfaces: []string{"uplink0"}, Logger: log})}
	cfg4 := nat44.DefaultConfig()
	cfg4.TwiceNATAddress = simNodeIPv4(max(idx, 0))
	cfg4.ServiceCIDRs = []netip.Prefix{netip.MustParsePrefix(serviceCIDRv4)}
	r4, err := nat44.New(newMemVPP(nat44.Name), cfg4, log)
	if err != nil {
		t.Fatal(err)
	}
	cfg6 := ipv6.DefaultConfig()
	cfg6.SNATAddress = netip.MustParseAddr("fd00:20::1")
	cfg6.ServiceCIDRs = []netip.Prefix{netip.MustParsePrefix(serviceCIDRv6)}
	r6, err := ipv6.New(newMemVPP(ipv6.Name), cfg6, log)
	if err != nil {
		t.Fatal(err)
	}
	var r vppsvc.ServiceRendererAPI = r4
	if probes != nil {
		r = probeRenderer{ServiceRendererAPI: r4, agent: idx, book: probes}
	}
	a.proc.RegisterRenderer(nat44.Name, r)
	a.proc.RegisterRenderer(ipv6.Name, r6)
	go a.proc.Run(ctx)
	client, err := kubernetes.NewForConfig(simRestConfig(&a.bytes, contentType))
	if err != nil {
		t.Fatal(err)
	}
	a.w = k8swatch.New(client, a.proc, k8swatch.Options{NodeName: node, Logger: log})
	go func() {
		if err := a.w.Run(ctx); err != nil && ctx.Err() == nil {
			t.Errorf("agent %s: %v", node, err)
		}
	}()
	return a
}

func (a *simAgent) counts() simCounts {
	st := a.proc.Stats()
	var c simCounts
	for _, n := range st.Events {
		c.events += int64(n)
	}
	c.nodeEvents = int64(st.Events[processor.KindNode])
	c.bytes = a.bytes.Load()
	return c
}

// memVPP is an in-memory vppcfg.Client: it keeps the desired items of one
// owner and applies a commit at once, as a VPP layer over a VPP that
// answers instantly. Nothing is validated: the conformance suites do that.
type memVPP struct {
	owner string
	mu    sync.Mutex
	items map[vppcfg.Key]vppcfg.Item
}

func newMemVPP(owner string) *memVPP {
	return &memVPP{owner: owner, items: map[vppcfg.Key]vppcfg.Item{}}
}

func (m *memVPP) Owner() string         { return m.owner }
func (m *memVPP) Txn() vppcfg.Txn       { return &memTxn{m: m} }
func (m *memVPP) ResyncTxn() vppcfg.Txn { return &memTxn{m: m, resync: true} }

type memTxn struct {
	m      *memVPP
	resync bool
	puts   []vppcfg.Item
	dels   []vppcfg.Key
}

func (x *memTxn) Put(items ...vppcfg.Item) vppcfg.Txn { x.puts = append(x.puts, items...); return x }
func (x *memTxn) Delete(keys ...vppcfg.Key) vppcfg.Txn {
	x.dels = append(x.dels, keys...)
	return x
}

func (x *memTxn) Commit(context.Context) error {
	x.m.mu.Lock()
	defer x.m.mu.Unlock()
	if x.resync {
		x.m.items = make(map[vppcfg.Key]vppcfg.Item, len(x.puts))
	}
	for _, k := range x.dels {
		delete(x.m.items, k)
	}
	for _, it := range x.puts {
		x.m.items[it.Key()] = it
	}
	return nil
}

// probeRenderer tells the probe book when its renderer has committed a
// service carrying a probed endpoint.
type probeRenderer struct {
	vppsvc.ServiceRendererAPI
	agent int
	book  *probeBook
}

func (r probeRenderer) UpdateService(old, s *model.ContivService) error {
	err := r.ServiceRendererAPI.UpdateService(old, s)
	if err == nil {
		r.book.see(r.agent, s)
	}
	return err
}

// probeBook records, per EndpointSlice write, when each agent rendered it.
type probeBook struct {
	agents int
	mu     sync.RWMutex
	bySvc  map[model.ServiceID][]*probe
	list   []*probe
}

type probe struct {
	ip       netip.Addr
	written  time.Time
	rendered []atomic.Int64 // nanoseconds after written, per agent; 0 until then
	left     atomic.Int64
}

func (b *probeBook) add(id model.ServiceID, ip netip.Addr) {
	p := &probe{ip: ip, written: time.Now(), rendered: make([]atomic.Int64, b.agents)}
	p.left.Store(int64(b.agents))
	b.mu.Lock()
	b.bySvc[id] = append(b.bySvc[id], p)
	b.list = append(b.list, p)
	b.mu.Unlock()
}

func (b *probeBook) see(agent int, s *model.ContivService) {
	b.mu.RLock()
	ps := b.bySvc[s.ID]
	b.mu.RUnlock()
	for _, p := range ps {
		if p.rendered[agent].Load() != 0 || !hasBackend(s, p.ip) {
			continue
		}
		if p.rendered[agent].CompareAndSwap(0, max(int64(time.Since(p.written)), 1)) {
			p.left.Add(-1)
		}
	}
}

func hasBackend(s *model.ContivService, ip netip.Addr) bool {
	for _, port := range s.Ports {
		for _, b := range port.Backends {
			if b.IP == ip {
				return true
			}
		}
	}
	return false
}

// missing says how many probes some agent has not rendered yet.
func (b *probeBook) missing() string {
	b.mu.RLock()
	defer b.mu.RUnlock()
	n := 0
	for _, p := range b.list {
		if p.left.Load() > 0 {
			n++
		}
	}
	if n > 0 {
		return fmt.Sprintf("%d of %d writes not rendered by every agent", n, len(b.list))
	}
	return ""
}

// latencies returns p50, p99 and max of every (write, agent) latency and of
// each write's slowest agent.
func (b *probeBook) latencies() (perAgent, everyAgent [3]time.Duration) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	var all, worst []time.Duration
	for _, p := range b.list {
		var w time.Duration
		for i := range p.rendered {
			d := time.Duration(p.rendered[i].Load())
			all = append(all, d)
			w = max(w, d)
		}
		worst = append(worst, w)
	}
	return percentiles(all), percentiles(worst)
}

func percentiles(ds []time.Duration) [3]time.Duration {
	if len(ds) == 0 {
		return [3]time.Duration{}
	}
	slices.Sort(ds)
	at := func(q float64) time.Duration {
		return ds[min(int(q*float64(len(ds))), len(ds)-1)].Round(time.Millisecond)
	}
	return [3]time.Duration{at(0.50), at(0.99), ds[len(ds)-1].Round(time.Millisecond)}
}

// simProxy is one node's kube-proxy informer set, wired as cmd/kube-proxy
// wires it: Services (label selectors for service-proxy-name and headless,
// field selector clusterIP != None), EndpointSlices and ServiceCIDRs
// (label selectors), and this node's Node (field selector), each behind
// kube-proxy's own config type, with a handler that counts.
type simProxy struct {
	bytes   atomic.Int64
	events  atomic.Int64
	nodeEvs atomic.Int64
	stores  map[string]cache.Store
	syncs   []cache.InformerSynced
}

func startSimProxy(t *testing.T, ctx context.Context, node string) *simProxy {
	t.Helper()
	p := &simProxy{}
	// kube-proxy's default clientConnection.contentType.
	client, err := kubernetes.NewForConfig(simRestConfig(&p.bytes, "application/vnd.kubernetes.protobuf"))
	if err != nil {
		t.Fatal(err)
	}
	noProxyName, err := labels.NewRequirement(proxyapis.LabelServiceProxyName, selection.DoesNotExist, nil)
	if err != nil {
		t.Fatal(err)
	}
	noHeadless, err := labels.NewRequirement(corev1.IsHeadlessService, selection.DoesNotExist, nil)
	if err != nil {
		t.Fatal(err)
	}
	sel := labels.NewSelector().Add(*noProxyName, *noHeadless).String()
	const period = 15 * time.Minute // kube-proxy's default configSyncPeriod
	factory := informers.NewSharedInformerFactoryWithOptions(client, period, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = sel
	}))
	svcFactory := informers.NewSharedInformerFactoryWithOptions(client, period, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = sel
		o.FieldSelector = fields.OneTermNotEqualSelector("spec.clusterIP", corev1.ClusterIPNone).String()
	}))
	nodeFactory := informers.NewSharedInformerFactoryWithOptions(client, period, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector(metav1.ObjectNameField, node).String()
	}))
	svcs := svcFactory.Core().V1().Services()
	eps := factory.Discovery().V1().EndpointSlices()
	cidrs := factory.Networking().V1().ServiceCIDRs()
	nodes := nodeFactory.Core().V1().Nodes()

	h := proxyCounter{p}
	sc := proxyconfig.NewServiceConfig(ctx, svcs, period)
	sc.RegisterEventHandler(h)
	go sc.Run(ctx.Done())
	ec := proxyconfig.NewEndpointSliceConfig(ctx, eps, period)
	ec.RegisterEventHandler(h)
	go ec.Run(ctx.Done())
	cc := proxyconfig.NewServiceCIDRConfig(ctx, cidrs, period)
	cc.RegisterEventHandler(h)
	go cc.Run(ctx.Done())
	nc := proxyconfig.NewNodeConfig(ctx, nodes, period)
	nc.RegisterEventHandler(h)
	go nc.Run(ctx.Done())
	for _, f := range []informers.SharedInformerFactory{factory, svcFactory, nodeFactory} {
		f.Start(ctx.Done())
	}
	p.stores = map[string]cache.Store{"services": svcs.Informer().GetStore(), "endpointslices": eps.Informer().GetStore(),
		"servicecidrs": cidrs.Informer().GetStore(), "nodes": nodes.Informer().GetStore()}
	p.syncs = []cache.InformerSynced{svcs.Informer().HasSynced, eps.Informer().HasSynced, cidrs.Informer().HasSynced, nodes.Informer().HasSynced}
	return p
}

func (p *simProxy) synced() bool {
	for _, s := range p.syncs {
		if !s() {
			return false
		}
	}
	return true
}

func (p *simProxy) counts() simCounts {
	return simCounts{events: p.events.Load(), nodeEvents: p.nodeEvs.Load(), bytes: p.bytes.Load()}
}

// proxyCounter is kube-proxy's handler side: it counts what a proxier
// would be handed.
type proxyCounter struct{ p *simProxy }

func (c proxyCounter) OnServiceAdd(*corev1.Service)                  { c.p.events.Add(1) }
func (c proxyCounter) OnServiceUpdate(_, _ *corev1.Service)          { c.p.events.Add(1) }
func (c proxyCounter) OnServiceDelete(*corev1.Service)               { c.p.events.Add(1) }
func (c proxyCounter) OnServiceSynced()                              {}
func (c proxyCounter) OnEndpointSliceAdd(*discoveryv1.EndpointSlice) { c.p.events.Add(1) }
func (c proxyCounter) OnEndpointSliceUpdate(_, _ *discoveryv1.EndpointSlice) {
	c.p.events.Add(1)
}
func (c proxyCounter) OnEndpointSliceDelete(*discoveryv1.EndpointSlice) { c.p.events.Add(1) }
func (c proxyCounter) OnEndpointSlicesSynced()                          {}
func (c proxyCounter) OnServiceCIDRsChanged([]string)                   { c.p.events.Add(1) }
func (c proxyCounter) OnNodeChange(*corev1.Node)                        { c.p.events.Add(1); c.p.nodeEvs.Add(1) }
func (c proxyCounter) OnNodeDelete(*corev1.Node)                        { c.p.events.Add(1); c.p.nodeEvs.Add(1) }
func (c proxyCounter) OnNodeSynced()                                    {}

// cacheBytes is the protobuf size of every object the stores hold: the
// same yardstick for both sides (the Go heap they take is a few times
// more, alike for both).
func cacheBytes(stores map[string]cache.Store) float64 {
	var n int
	for _, s := range stores {
		for _, obj := range s.List() {
			if m, ok := obj.(interface{ Size() int }); ok {
				n += m.Size()
			}
		}
	}
	return float64(n)
}

// simFigures collects per-agent figures: events and bytes per 1,000
// endpoint changes, cache bytes, bytes in the phase.
type simFigures struct {
	sums [4]float64
	n    int
}

func (f *simFigures) add(v ...float64) {
	for i, x := range v {
		f.sums[i] += x
	}
	f.n++
}

func (f *simFigures) mean(i int) float64 { return f.sums[i] / float64(max(f.n, 1)) }

func fmtNum(v float64, unit string) string {
	switch {
	case unit == "B" && v >= 1<<30:
		return fmt.Sprintf("%.2f GiB", v/(1<<30))
	case unit == "B" && v >= 1<<20:
		return fmt.Sprintf("%.2f MiB", v/(1<<20))
	case unit == "B" && v >= 1<<10:
		return fmt.Sprintf("%.1f KiB", v/(1<<10))
	case unit == "B":
		return fmt.Sprintf("%.0f B", v)
	}
	return fmt.Sprintf("%.0f", v)
}

// processCPU is the CPU time (user + system) the test process used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// heapInUse is the Go heap in use after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}
