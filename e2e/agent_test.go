package e2e

// The agent under test is the one `vppsvc run` builds (package agent:
// processor → nat44 + ipv6 renderers → VPP layer → govpp driver), with the
// Kubernetes side fed by k8swatch over a real client to the real API server.

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"go.fd.io/govpp/adapter"
	"go.fd.io/govpp/core"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/vppsvc/vppsvc/agent"
	"github.com/vppsvc/vppsvc/fakevpp"
	"github.com/vppsvc/vppsvc/processor"
	"github.com/vppsvc/vppsvc/processor/k8swatch"
	"github.com/vppsvc/vppsvc/vppcfg/engine"
	"github.com/vppsvc/vppsvc/vppcfg/govppdriver"
)

func init() {
	// govpp probes connections every second by default; keep test
	// connections cheap and quiet.
	core.HealthCheckProbeInterval = 50 * time.Millisecond
	core.HealthCheckReplyTimeout = 200 * time.Millisecond
	core.SetLogger(discardLogger())
}

func discardLogger() *logrus.Logger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}

// Address plan of node-1, the node whose agent runs (node-2 only hosts
// remote endpoints). Same plan as the renderers' trace tests.
//
//	uplink0  192.168.16.1/24, fd00:16::1/64  node-1's InternalIPs; remote pods,
//	                                         external clients, external and
//	                                         LoadBalancer IPs are routed here
//	host0    172.30.1.1/24, fd00:30::1/64    the node's host stack (172.30.1.2)
//	tap<N>   (no address)                    local pod <N>: 10.1.1.<N>, fd00:1:1::<N>
//	10.1.2.0/24, fd00:1:2::/64               pods on node-2
const (
	thisNode  = "node-1"
	otherNode = "node-2"
)

var (
	nodeIPv4      = netip.MustParseAddr("192.168.16.1")
	nodeIPv6      = netip.MustParseAddr("fd00:16::1")
	otherNodeIPv4 = netip.MustParseAddr("192.168.16.2")
	otherNodeIPv6 = netip.MustParseAddr("fd00:16::2")
	// localPods are the pods of node-1 (pod-<N>, interface tap<N>).
	localPods = []int{2, 3, 4, 9}
)

func localPodIPv4(n int) netip.Addr { return netip.MustParseAddr(fmt.Sprintf("10.1.1.%d", n)) }
func localPodIPv6(n int) netip.Addr { return netip.MustParseAddr(fmt.Sprintf("fd00:1:1::%d", n)) }

// newFakeVPP is node-1's VPP: interfaces and routes of its startup
// configuration.
func newFakeVPP() *fakevpp.VPP {
	v := fakevpp.New(fakevpp.WithSeed(1))
	v.AddInterface("uplink0", netip.PrefixFrom(nodeIPv4, 24), netip.PrefixFrom(nodeIPv6, 64))
	v.AddInterface("host0", netip.MustParsePrefix("172.30.1.1/24"), netip.MustParsePrefix("fd00:30::1/64"))
	for _, n := range localPods {
		tap := fmt.Sprintf("tap%d", n)
		v.AddInterface(tap)
		v.SetUnnumbered(tap, "host0") // as a CNI does: VPP drops what arrives on an interface without IP
		v.AddRoute(netip.PrefixFrom(localPodIPv4(n), 32), tap)
		v.AddRoute(netip.PrefixFrom(localPodIPv6(n), 128), tap)
	}
	v.AddRoute(netip.MustParsePrefix("10.1.2.0/24"), "uplink0")
	v.AddRoute(netip.MustParsePrefix("fd00:1:2::/64"), "uplink0")
	v.AddRoute(netip.MustParsePrefix("0.0.0.0/0"), "uplink0")
	v.AddRoute(netip.MustParsePrefix("::/0"), "uplink0")
	return v
}

// podInterface is the CNI's answer for node-1's pods: pod-<N> is on tap<N>.
func podInterface(pod *corev1.Pod) (string, bool) {
	var n int
	if pod.Namespace != podNamespace {
		return "", false
	}
	if _, err := fmt.Sscanf(pod.Name, "pod-%d", &n); err != nil {
		return "", false
	}
	return fmt.Sprintf("tap%d", n), true
}

// testAgent is one node agent run: the whole pipeline over a fake VPP.
type testAgent struct {
	t    *testing.T
	fake *fakevpp.VPP
	ag   *agent.Agent
	proc *processor.Processor
	rec  *engine.Reconciler
	logs *logCapture

	cancel   context.CancelFunc
	wg       sync.WaitGroup
	watchErr chan error
	stopped  bool
}

// startAgent runs an agent for node-1 against fake over conn (fake itself
// for the first agent of a VPP, fake.NewAdapter() for a later one, as a
// restarted agent process gets a new API connection), and waits until the
// VPP layer compared VPP with the desired state. waitFlows and problem tell
// when the watcher's first Resync is applied.
func startAgent(t *testing.T, fake *fakevpp.VPP, conn adapter.VppAPI) *testAgent {
	t.Helper()
	logs := newLogCapture()
	log := logs.logger
	cfg := agent.DefaultConfig([]netip.Addr{nodeIPv4, nodeIPv6})
	ag, err := agent.New(agent.Options{
		NodeName: thisNode, FrontendInterfaces: []string{"uplink0", "host0"}, Config: cfg,
		VPP: conn, Log: log, RetryMin: time.Millisecond, RetryMax: 20 * time.Millisecond,
		Driver: govppdriver.Options{ReconnectInterval: 20 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	// A client of its own, as the agent process has.
	client, err := kubernetes.NewForConfig(cluster.Config)
	if err != nil {
		ag.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	a := &testAgent{t: t, fake: fake, ag: ag, proc: ag.Processor, rec: ag.Reconciler, logs: logs,
		cancel: cancel, watchErr: make(chan error, 1)}
	// ctx runs the agent until Stop; the wait for its first sync is bounded apart.
	started := make(chan error, 1)
	go func() { started <- ag.Start(ctx) }()
	select {
	case err := <-started:
		if err != nil {
			a.Stop()
			t.Fatalf("VPP layer: %v", err)
		}
	case <-time.After(20 * time.Second):
		a.Stop()
		t.Fatal("the VPP layer did not sync with the fake VPP within 20s")
	}
	// As in `vppsvc run`: the watcher starts once the VPP layer is up.
	w := k8swatch.New(client, a.proc, k8swatch.Options{NodeName: thisNode, PodInterface: podInterface, Logger: log})
	a.wg.Add(1)
	go func() { defer a.wg.Done(); a.watchErr <- w.Run(ctx) }()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("agent log (warnings and errors):\n%s", logs.String())
		}
		a.Stop()
	})
	return a
}

// Stop ends the agent and disconnects it from VPP; VPP keeps its
// configuration, as after an agent process exits.
func (a *testAgent) Stop() {
	if a.stopped {
		return
	}
	a.stopped = true
	a.cancel()
	a.wg.Wait()
	a.ag.Close()
}

// problem reports why the agent has not converged yet, or "" when every
// desired item is applied, no renderer waits for a retry and the watcher
// handed over its first Resync.
func (a *testAgent) problem() string {
	if ps := a.proc.Stats(); ps.Resyncs == 0 {
		return "the watcher has not handed over its first Resync"
	} else if ps.DirtyRenderers > 0 {
		return fmt.Sprintf("%d renderers wait for a retried resync", ps.DirtyRenderers)
	}
	st := a.rec.Stats()
	if st.Failed > 0 || st.Pending > 0 {
		var bad []string
		for _, s := range a.rec.Statuses() {
			if s.Err != nil {
				bad = append(bad, s.String())
			}
		}
		return fmt.Sprintf("VPP layer: %d failed, %d pending: %s", st.Failed, st.Pending, strings.Join(bad, "; "))
	}
	select {
	case err := <-a.watchErr:
		a.watchErr <- err
		return fmt.Sprintf("the watcher stopped: %v", err)
	default:
	}
	return ""
}

// eventually polls cond (every 10ms, up to 30s) until it returns "" (met);
// otherwise it fails the test with the last reason.
func eventually(t *testing.T, what string, cond func() string) {
	t.Helper()
	eventuallyWithin(t, 30*time.Second, what, cond)
}

func eventuallyWithin(t *testing.T, limit time.Duration, what string, cond func() string) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		why := cond()
		if why == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached within %s: %s", what, limit, why)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// logCapture records the agent's warnings and errors.
type logCapture struct {
	logger *logrus.Logger
	mu     sync.Mutex
	lines  []string
}

func newLogCapture() *logCapture {
	c := &logCapture{logger: discardLogger()}
	c.logger.AddHook(c)
	return c
}

func (c *logCapture) Levels() []logrus.Level {
	return []logrus.Level{logrus.PanicLevel, logrus.FatalLevel, logrus.ErrorLevel, logrus.WarnLevel}
}

func (c *logCapture) Fire(e *logrus.Entry) error {
	line, err := e.String()
	if err != nil {
		line = e.Message
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lines = append(c.lines, strings.TrimSpace(line))
	return nil
}

// matching returns the captured lines that contain every one of subs.
func (c *logCapture) matching(subs ...string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
next:
	for _, l := range c.lines {
		for _, s := range subs {
			if !strings.Contains(l, s) {
				continue next
			}
		}
		out = append(out, l)
	}
	return out
}

func (c *logCapture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.lines, "\n")
}
