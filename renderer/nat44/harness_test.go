package nat44_test

// The harness of the packet traces (trace_test.go) and of the end-to-end
// benchmarks (bench_test.go), over the shared one of renderer/internal/tracetest.
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
	"fmt"
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	vppagent "github.com/vppsvc/vppsvc/agent"
	"github.com/vppsvc/vppsvc/dataplane"
	"github.com/vppsvc/vppsvc/internal/agenttest"
	"github.com/vppsvc/vppsvc/processor"
	"github.com/vppsvc/vppsvc/renderer/internal/tracetest"
	"github.com/vppsvc/vppsvc/renderer/nat44"
)

const (
	thisNode  = tracetest.ThisNode
	otherNode = tracetest.OtherNode
	protoTCP  = tracetest.TCP
	protoUDP  = tracetest.UDP
)

type client = tracetest.Client

var (
	localPod    = client{Name: "local pod", Ingress: "tap9", Addr: netip.MustParseAddr("10.1.1.9")}
	theNode     = client{Name: "node", Ingress: "host0", Addr: netip.MustParseAddr("172.30.1.2")}
	remotePod   = client{Name: "remote pod", Ingress: "uplink0", Addr: netip.MustParseAddr("10.1.2.9")}
	external    = client{Name: "external client", Ingress: "uplink0", Addr: netip.MustParseAddr("100.64.1.5")}
	denied      = client{Name: "external client outside the source ranges", Ingress: "uplink0", Addr: netip.MustParseAddr("100.64.2.5")}
	allClients  = []client{localPod, theNode, remotePod, external}
	nodeIP      = netip.MustParseAddr("192.168.16.1")
	otherNodeIP = netip.MustParseAddr("192.168.16.2")
)

// podClient is a local pod as a client (pod <N> at 10.1.1.<N> on tap<N>).
func podClient(n int) client {
	return client{Name: fmt.Sprintf("pod %d", n), Ingress: fmt.Sprintf("tap%d", n), Addr: netip.MustParseAddr(fmt.Sprintf("10.1.1.%d", n))}
}

// newNode returns node-1 (see the address plan) on the tests' data plane:
// fakevpp, or the real VPP of dataplane.SocketEnv. Interfaces and routes
// exist before the first connection (VPP's startup configuration).
func newNode(tb testing.TB) dataplane.Node { return newNodeWith(tb, false) }

// newNodeWith optionally adds an overlay: the pods of node-2 are then
// reached through vxlan0 (an overlay interface, 10.255.0.1/24) instead of
// uplink0, as with a VXLAN overlay whose encapsulated traffic leaves by the
// uplink unseen by NAT44.
func newNodeWith(tb testing.TB, overlay bool) dataplane.Node {
	return topology(overlay).Build(tb, dataplane.ForTest(tb, 1))
}

// newFakeNode is node-1 on fakevpp whatever the environment: the
// benchmarks' data plane.
func newFakeNode(tb testing.TB) *dataplane.Fake {
	f := dataplane.NewFake(1)
	topology(false).Build(tb, f)
	return f
}

// topology is node-1 as the address plan describes it.
func topology(overlay bool) dataplane.Topology {
	t := dataplane.Topology{Interfaces: []dataplane.Interface{
		{Name: "uplink0", Addrs: []netip.Prefix{netip.MustParsePrefix("192.168.16.1/24")}},
		{Name: "host0", Addrs: []netip.Prefix{netip.MustParsePrefix("172.30.1.1/24")}},
	}}.Then(tracetest.PodTaps(true, false))
	remotePods := "uplink0"
	if overlay {
		t.Interfaces = append(t.Interfaces, dataplane.Interface{Name: "vxlan0", Addrs: []netip.Prefix{netip.MustParsePrefix("10.255.0.1/24")}})
		remotePods = "vxlan0"
	}
	t.Routes = append(t.Routes,
		dataplane.Route{Dst: netip.MustParsePrefix("10.1.2.0/24"), Interface: remotePods},
		dataplane.Route{Dst: netip.MustParsePrefix("0.0.0.0/0"), Interface: "uplink0"})
	t.Neighbours = append(t.Neighbours, dataplane.Neighbour{Interface: "uplink0", Addr: otherNodeIP})
	return t
}

// agent is one run of the product's agent over a VPP: processor, this
// renderer and the VPP layer.
type agent struct {
	*agenttest.Run
	proc *processor.Processor
}

func testConfig() nat44.Config {
	cfg := nat44.DefaultConfig()
	cfg.TwiceNATAddress = nodeIP
	cfg.NodeSources = []netip.Prefix{netip.PrefixFrom(theNode.Addr, 32)}
	return cfg
}

// startAgent connects a new agent to node (see agenttest.StartOn).
func startAgent(t testing.TB, node dataplane.Node) *agent {
	t.Helper()
	return startAgentWith(t, node, testConfig(), "uplink0", "host0")
}

func startAgentWith(t testing.TB, node dataplane.Node, cfg nat44.Config, frontendIfs ...string) *agent {
	t.Helper()
	run := agenttest.StartOn(t, node.Adapter(), vppagent.Options{
		NodeName: thisNode, FrontendInterfaces: frontendIfs,
		Config: agenttest.Config(&cfg, nil), Log: tracetest.QuietLogger(),
	})
	return &agent{Run: run, proc: run.Agent.Processor}
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
		Nodes:          []*corev1.Node{tracetest.Node(thisNode, nodeIP), tracetest.Node(otherNode, otherNodeIP)},
	}
	for _, n := range tracetest.LocalPods {
		s.LocalPods = append(s.LocalPods, processor.LocalPod{
			ID:        processor.PodID{Namespace: "default", Name: fmt.Sprintf("pod-%d", n)},
			IPs:       []netip.Addr{netip.MustParseAddr(fmt.Sprintf("10.1.1.%d", n))},
			Interface: fmt.Sprintf("tap%d", n),
		})
	}
	return s
}

// env is a node programmed by an agent from a cluster state; flows that
// are source-NATed must come from the twice-NAT address.
type env struct {
	*tracetest.Env
	agent *agent
}

func newEnv(t *testing.T, c cluster) *env {
	t.Helper()
	return newEnvWith(t, testConfig(), c)
}

func newEnvWith(t *testing.T, cfg nat44.Config, c cluster) *env {
	t.Helper()
	v := newNode(t)
	ag := startAgentWith(t, v, cfg, "uplink0", "host0")
	ag.proc.Resync(c.snapshot())
	return &env{Env: tracetest.NewEnv(t, v, nodeIP, 40000), agent: ag}
}

// Short names for the shared builders and expectations.
var (
	k8sService   = tracetest.Service
	nodePortType = tracetest.NodePort
	loadBalancer = tracetest.LoadBalancer
	etpLocal     = tracetest.ETPLocal
	externalIPs  = tracetest.ExternalIPs
	itpLocal     = tracetest.ITPLocal
	local        = tracetest.Local
	remote       = tracetest.Remote
	endpoint     = tracetest.Endpoint
	terminating  = tracetest.Terminating
	dropped      = tracetest.Dropped
)

// k8sSlice is an IPv4 slice of svc with port "http" 8080 and the endpoints.
func k8sSlice(svc string, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	return tracetest.Slice(svc, discoveryv1.AddressTypeIPv4, eps...)
}

// reaches expects a flow to one of endpoints, every flow twice-NATed when
// snat is set.
func reaches(snat bool, endpoints ...string) tracetest.Expect {
	x := tracetest.Reaches(endpoints...)
	if snat {
		x = x.SNATAll()
	}
	return x
}
