package realvpp

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"go.fd.io/govpp/adapter"
	"go.fd.io/govpp/core"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vppsvc/vppsvc/agent"
	"github.com/vppsvc/vppsvc/dataplane"
	"github.com/vppsvc/vppsvc/internal/benchmarks"
	"github.com/vppsvc/vppsvc/processor"
	rv "github.com/vppsvc/vppsvc/realvpp"
)

// The harness: a realvpp.Node (the scratch VPP of dataplane.SocketEnv)
// built as node-1 of a two-node cluster, and the product's agent (package
// agent: processor → renderers → VPP layer → govpp driver) connected to it
// through the node's counting adapter.
//
//	uplink0  192.168.16.1/24, fd00:16::1/64  node-1's IP; default routes, remote pods
//	host0    192.168.17.1/24, fd00:30::1/64  the host interface (outside the ClusterIPs
//	                                         172.30.0.0/16 of the generated cluster)
//	tap9     unnumbered to host0             local pod 10.1.1.9 / fd00:1:1::9, the client
//	                                         of the per-packet benchmarks

var (
	nodeIP   = netip.MustParseAddr("192.168.16.1")
	nodeIP6  = netip.MustParseAddr("fd00:16::1")
	podIP    = netip.MustParseAddr("10.1.1.9")
	podIP6   = netip.MustParseAddr("fd00:1:1::9")
	otherIP  = "192.168.16.2"
	podIface = "tap9"
)

func init() {
	core.HealthCheckProbeInterval = time.Second
	core.SetLogger(quiet())
}

// quiet is the agents' logger: discarded, unless VPPSVC_BENCH_LOG names a
// level (e.g. info) to log at, to stderr.
func quiet() *logrus.Logger {
	l := logrus.New()
	if lvl, err := logrus.ParseLevel(os.Getenv("VPPSVC_BENCH_LOG")); err == nil {
		l.SetLevel(lvl)
		return l
	}
	l.SetOutput(io.Discard)
	return l
}

// openNode opens the real VPP of dataplane.SocketEnv, reset, or skips the
// benchmark when the variable is unset. The node is reset again when the
// benchmark ends; with dataplane.RestartEnv set, VPP is restarted instead
// (faster than deleting 50,000 mappings, and the next benchmark starts
// with a fresh main heap).
func openNode(b testing.TB) *rv.Node {
	b.Helper()
	socket := os.Getenv(dataplane.SocketEnv)
	if socket == "" {
		b.Skipf("needs a real VPP 25.10: set %s to a scratch VPP's API socket (docs/real-vpp.md)", dataplane.SocketEnv)
	}
	n, err := rv.Open(socket, rv.Options{RestartCommand: os.Getenv(dataplane.RestartEnv)})
	if err != nil {
		b.Fatalf("%s=%s: %v", dataplane.SocketEnv, socket, err)
	}
	b.Cleanup(func() {
		if os.Getenv(dataplane.RestartEnv) != "" {
			if err := n.Restart(); err != nil {
				b.Errorf("restarting the real VPP: %v", err)
			}
		}
		if err := n.Close(); err != nil {
			b.Errorf("resetting the real VPP: %v", err)
		}
	})
	return n
}

// buildNode creates the harness topology in n: both families on uplink0
// and host0, the pod tap when withPod is set, and the routes.
func buildNode(b testing.TB, n *rv.Node, withPod bool) {
	b.Helper()
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	p := netip.MustParsePrefix
	must(n.AddInterface("uplink0", p("192.168.16.1/24"), p("fd00:16::1/64")))
	must(n.AddInterface("host0", p("192.168.17.1/24"), p("fd00:30::1/64")))
	if withPod {
		must(n.AddInterface(podIface))
		must(n.SetUnnumbered(podIface, "host0"))
		must(n.AddRoute(netip.PrefixFrom(podIP, 32), podIface))
		must(n.AddRoute(netip.PrefixFrom(podIP6, 128), podIface))
	}
	must(n.AddRoute(p("0.0.0.0/0"), "uplink0"))
	must(n.AddRoute(p("::/0"), "uplink0"))
}

// family selects the renderer an agent runs.
type family int

const (
	ipv4  family = iota // IPv4 on the NAT44 renderer
	ipv6                // IPv6 on the IPv6 (cnat) renderer
	cnat4               // IPv4 on the cnat IPv4 renderer
)

func (f family) String() string {
	switch f {
	case ipv6:
		return "ipv6"
	case cnat4:
		return "cnat4"
	}
	return "ipv4"
}

// runningAgent is the product's agent started over a node.
type runningAgent struct {
	*agent.Agent
	cancel func()
}

// startAgent wires and starts the product's agent over n (one family's
// renderer; sessions, when not zero, is the NAT44 session limit) and waits for its VPP layer's first sync with VPP.
func startAgent(b testing.TB, n *rv.Node, fam family, sessions uint32, frontends ...string) *runningAgent {
	b.Helper()
	return startAgentOn(b, n.Adapter(), fam, sessions, frontends...)
}

// startAgentOn is startAgent over a given client connection to the node's
// VPP (a recording adapter around the node's).
func startAgentOn(b testing.TB, vpp adapter.VppAPI, fam family, sessions uint32, frontends ...string) *runningAgent {
	b.Helper()
	cfg := agent.DefaultConfig([]netip.Addr{nodeIP, nodeIP6})
	cfg.DisableIPv4, cfg.DisableIPv6 = fam == ipv6, fam != ipv6
	if fam == cnat4 {
		cfg.SelectIPv4Renderer(agent.IPv4RendererCNAT)
	}
	cfg.NAT44.SessionLimit = sessions
	a, err := agent.New(agent.Options{
		NodeName: benchmarks.NodeName, FrontendInterfaces: frontends, Config: cfg,
		VPP: vpp, Log: quiet(), RetryMin: time.Millisecond, RetryMax: 50 * time.Millisecond,
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := a.Start(ctx); err != nil {
		cancel()
		b.Fatal(err)
	}
	return &runningAgent{Agent: a, cancel: cancel}
}

// stop stops the agent and disconnects it; VPP keeps its configuration.
func (a *runningAgent) stop() {
	a.cancel()
	<-a.LayerDone()
	a.Close()
}

// converge waits until VPP holds everything the agent was given.
func (a *runningAgent) converge(b testing.TB) {
	b.Helper()
	if err := a.WaitConverged(context.Background(), 30*time.Minute); err != nil {
		b.Fatal(err)
	}
}

// snapshot is the generated cluster (internal/benchmarks: service i is
// 172.30.x.y:80 with eps endpoints 10.x.y.z:80) on node-1 and node-2;
// with remote set, the endpoints run on node-2 (reached through uplink0),
// otherwise on node-1 as in the fake's benchmarks. withPod adds the local
// pod on tap9.
func snapshot(services, eps int, remote, withPod bool) processor.Snapshot {
	svcs, slices := benchmarks.Cluster(services, eps)
	if remote {
		other := "node-2"
		for _, s := range slices {
			for i := range s.Endpoints {
				s.Endpoints[i].NodeName = &other
			}
		}
	}
	s := processor.Snapshot{Services: svcs, EndpointSlices: slices,
		Nodes: []*corev1.Node{k8sNode(benchmarks.NodeName, nodeIP.String(), nodeIP6.String()), k8sNode("node-2", otherIP, "fd00:16::2")}}
	if withPod {
		s.LocalPods = []processor.LocalPod{{ID: processor.PodID{Namespace: "default", Name: "client"},
			IPs: []netip.Addr{podIP, podIP6}, Interface: podIface}}
	}
	return s
}

func k8sNode(name string, ips ...string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for _, ip := range ips {
		n.Status.Addresses = append(n.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: ip})
	}
	return n
}

// ipv6Cluster is services IPv6 ClusterIP services fd00:96::<i+1> port 80,
// each with eps endpoints fd00:1:2::<…> on node-2.
func ipv6Cluster(services, eps int) ([]*corev1.Service, []*discoveryv1.EndpointSlice) {
	svcs := make([]*corev1.Service, services)
	slices := make([]*discoveryv1.EndpointSlice, services)
	for i := range services {
		s := benchmarks.Service(i)
		ip := ipv6ClusterIP(i).String()
		s.Spec.ClusterIP, s.Spec.ClusterIPs = ip, []string{ip}
		s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol}
		sl := benchmarks.EndpointSlice(i, eps, 0)
		sl.AddressType = discoveryv1.AddressTypeIPv6
		other := "node-2"
		for j := range sl.Endpoints {
			sl.Endpoints[j].Addresses = []string{netip.AddrFrom16([16]byte{0xfd, 0, 0, 1, 0, 2, 14: byte((i*eps + j + 1) >> 8), 15: byte(i*eps + j + 1)}).String()}
			sl.Endpoints[j].NodeName = &other
		}
		svcs[i], slices[i] = s, sl
	}
	return svcs, slices
}

func ipv6ClusterIP(i int) netip.Addr {
	return netip.AddrFrom16([16]byte{0xfd, 0, 0, 0x96, 14: byte((i + 1) >> 8), 15: byte(i + 1)})
}

// isReadOnly reports whether a VPP message only reads state (the local
// equivalent of renderer/internal/tracetest.IsReadOnly, which this package
// may not import).
func isReadOnly(msg string) bool {
	for _, s := range []string{"_dump", "_get", "show_", "want_", "control_ping", "get_", "_details", "memclnt_", "sockclnt_", "api_versions", "feature_is_enabled", "cli_inband"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// callCounts splits a node's call counts into writes and reads.
func callCounts(calls map[string]int) (writes, reads int) {
	for msg, c := range calls {
		if isReadOnly(msg) {
			reads += c
		} else {
			writes += c
		}
	}
	return writes, reads
}

// writeCalls lists the state-changing calls, for a failure message.
func writeCalls(calls map[string]int) string {
	var out []string
	for msg, c := range calls {
		if !isReadOnly(msg) {
			out = append(out, fmt.Sprintf("%s×%d", msg, c))
		}
	}
	return strings.Join(out, ", ")
}

// heapUsed is the "used" figure of VPP's main heap ("show memory
// main-heap"), in bytes.
func heapUsed(b testing.TB, n *rv.Node) float64 {
	b.Helper()
	out, err := n.CLI("show memory main-heap")
	if err != nil {
		b.Fatal(err)
	}
	v, err := parseHeapUsed(out)
	if err != nil {
		b.Fatal(err)
	}
	return v
}

var heapUsedRE = regexp.MustCompile(`used:\s*([0-9.]+)([kKMGT]?)`)

// parseHeapUsed reads the first "used: 36.74M" of "show memory".
func parseHeapUsed(out string) (float64, error) {
	m := heapUsedRE.FindStringSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("no \"used:\" in %q", out)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, err
	}
	switch m[2] {
	case "k", "K":
		v *= 1 << 10
	case "M":
		v *= 1 << 20
	case "G":
		v *= 1 << 30
	case "T":
		v *= 1 << 40
	}
	return v, nil
}

// skipLarge skips 50,000-service states under -short.
func skipLarge(b testing.TB, services int) {
	if testing.Short() && services >= 50000 {
		b.Skip("50,000-service state skipped in -short mode")
	}
}

// processCPU is the CPU time this process (the test and its agent) used so
// far.
var processCPU = benchmarks.ProcessCPU
