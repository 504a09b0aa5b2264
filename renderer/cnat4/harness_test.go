package cnat4_test

// The harness of the packet traces (trace_test.go), over the shared one of
// renderer/internal/tracetest. The scenarios are those of the IPv6
// renderer's traces (renderer/ipv6), on the IPv4 half of the same node.
//
// Address plan. One node, node-1, of a two-node dual-stack cluster
// (tracetest.DualStackTopology):
//
//	uplink0   192.168.16.1/24, fd00:16::1/64   node-1's InternalIPs (node-2: 192.168.16.2,
//	                                           fd00:16::2); also the IPv4 SNAT address.
//	                                           Remote pods, external clients, external IPs
//	                                           and LoadBalancer IPs are routed here (0.0.0.0/0,
//	                                           10.1.2.0/24, ::/0, fd00:1:2::/64).
//	host0     172.30.1.1/24, fd00:30::1/64     VPP's side of the host interface; the node's
//	                                           host stack sends from 172.30.1.2 (fd00:30::2).
//	tap<N>    (no address)                     local pod 10.1.1.<N> (fd00:1:1::<N>), routes
//	                                           /32 and /128 via tap<N>
//	10.1.2.0/24, fd00:1:2::/64                 pods on node-2
//	10.96.0.0/16 (fd00:96::/112)               ClusterIPs
//	203.0.113.0/24                             spec.externalIPs
//	198.51.100.0/24                            LoadBalancer ingress IPs
//	100.64.0.0/16                              external clients (100.64.1.0/24 is an allowed
//	                                           source range, 100.64.2.0/24 not)
//
// Clients used by every scenario: a local pod 10.1.1.9 (tap9, serves
// nothing), the node (host0), a remote pod 10.1.2.9 and an external client
// 100.64.1.5 (both on uplink0).

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
	"github.com/vppsvc/vppsvc/renderer/cnat"
	"github.com/vppsvc/vppsvc/renderer/cnat4"
	"github.com/vppsvc/vppsvc/renderer/internal/cnattrace"
	"github.com/vppsvc/vppsvc/renderer/internal/tracetest"
	"github.com/vppsvc/vppsvc/renderer/ipv6"
)

var (
	// The plan's clients the IPv4 traces of this package use
	// (cnattrace.Face.WithPlanClients).
	external, outsider, podClient = ipv4Face.External, ipv4Face.Outsider, ipv4Face.PodClient

	ip = netip.MustParseAddr
)

// newNode returns node-1 (tracetest.DualStackTopology) on the tests' data
// plane: fakevpp, or the real VPP of dataplane.SocketEnv.
func newNode(tb testing.TB) dataplane.Node {
	return tracetest.DualStackTopology().Build(tb, dataplane.ForTest(tb, 1))
}

// testConfig is the configuration of the plan (cnattrace.Face.PlanConfig).
func testConfig() cnat4.Config { return ipv4Face.PlanConfig() }

// agentOptions choose the renderers of an agent.
type agentOptions struct {
	cfg  cnat4.Config
	ipv6 *ipv6.Config // also register the IPv6 renderer (dual stack)
}

// startAgent connects a new agent to node (see agenttest.StartOn); every
// Resync keeps the plan's nodes and local pods.
func startAgent(tb testing.TB, node dataplane.Node, opts agentOptions) *agenttest.Control {
	tb.Helper()
	run := agenttest.StartOn(tb, node.Adapter(), vppagent.Options{
		NodeName: tracetest.ThisNode, FrontendInterfaces: []string{"uplink0", "host0"},
		Config: agenttest.ConfigCNAT4(&opts.cfg, opts.ipv6), Log: tracetest.QuietLogger(),
	})
	return &agenttest.Control{Run: run, Base: processor.Snapshot{
		Nodes: []*corev1.Node{
			tracetest.Node(tracetest.ThisNode, tracetest.NodeIP4, tracetest.NodeIP6),
			tracetest.Node(tracetest.OtherNode, tracetest.OtherNodeIP4, tracetest.OtherNodeIP6),
		},
		LocalPods: agenttest.LocalPods(tracetest.LocalPods, func(n int) []netip.Addr {
			return []netip.Addr{netip.MustParseAddr(fmt.Sprintf("10.1.1.%d", n)), netip.MustParseAddr(fmt.Sprintf("fd00:1:1::%d", n))}
		}),
	}}
}

// k8sSlice is an IPv4 slice of svc with port "http" 8080 and the endpoints.
func k8sSlice(svc string, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	return tracetest.Slice(svc, discoveryv1.AddressTypeIPv4, eps...)
}

// ipv4Face is this harness as the shared scenarios of
// renderer/internal/cnattrace take it.
var ipv4Face = faceWith(agentOptions{})

// faceWith is the face whose agents also get opts' other renderers.
func faceWith(opts agentOptions) *cnattrace.Face {
	return (&cnattrace.Face{
		Name: cnat4.Name, IPv4: true,
		NodeIP:  tracetest.NodeIP4,
		NewNode: newNode,
		StartAgent: func(tb testing.TB, node dataplane.Node, cfg cnat.Config) cnattrace.Agent {
			opts.cfg = cfg
			return startAgent(tb, node, opts)
		},
		Slice: k8sSlice,
		EnabledFeatures: func(t *testing.T, node dataplane.Node) []string {
			return agenttest.EnabledFeatures(t, node, tracetest.QuietLogger())
		},
	}).WithPlanClients()
}
