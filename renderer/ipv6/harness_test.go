package ipv6_test

// The harness of the packet traces (trace_test.go) and of the end-to-end
// benchmarks (bench_test.go), over the shared one of renderer/internal/tracetest.
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
	"net/netip"
	"sync"
	"testing"

	"go.fd.io/govpp/binapi/cnat"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip_types"
	"go.fd.io/govpp/core"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	vppagent "github.com/vppsvc/vppsvc/agent"
	"github.com/vppsvc/vppsvc/dataplane"
	"github.com/vppsvc/vppsvc/fakevpp"
	"github.com/vppsvc/vppsvc/internal/agenttest"
	"github.com/vppsvc/vppsvc/processor"
	rcnat "github.com/vppsvc/vppsvc/renderer/cnat"
	"github.com/vppsvc/vppsvc/renderer/internal/cnattrace"
	"github.com/vppsvc/vppsvc/renderer/internal/tracetest"
	"github.com/vppsvc/vppsvc/renderer/ipv6"
	"github.com/vppsvc/vppsvc/renderer/nat44"
)

var (
	// The plan's clients the IPv6 traces of this file use
	// (cnattrace.Face.WithPlanClients).
	localPod, external, outsider = ipv6Face.LocalPod, ipv6Face.External, ipv6Face.Outsider
)

// localPods are the pods of node-1 the fake has a tap for.
var localPods = tracetest.LocalPods

// newNode returns node-1 (tracetest.DualStackTopology) on the tests' data
// plane: fakevpp, or the real VPP of dataplane.SocketEnv.
func newNode(tb testing.TB) dataplane.Node {
	return tracetest.DualStackTopology().Build(tb, dataplane.ForTest(tb, 1))
}

// newFakeNode is node-1 on fakevpp whatever the environment: the
// benchmarks' data plane.
func newFakeNode(tb testing.TB) *dataplane.Fake {
	f := dataplane.NewFake(1)
	tracetest.DualStackTopology().Build(tb, f)
	return f
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
	tr := v.Trace(fakevpp.Packet{Ingress: "eth0", Protocol: tracetest.TCP,
		Src: netip.MustParseAddrPort("[fd00:99::5]:1000"), Dst: netip.MustParseAddrPort("[fd00:96::1]:80")})
	if tr.Verdict != fakevpp.Forward || tr.Out.Dst != netip.MustParseAddrPort("[fd00:99::2]:8080") {
		return fmt.Sprintf("fakevpp answers CnatTranslationUpdate but Trace does not translate on cnat's VIP path "+
			"(ip6-cnat-tx): a packet to the VIP gave %s to %s (%s)", tr.Verdict, tr.Out.Dst, tr.Reason)
	}
	return ""
}

// agent is one run of the control plane over a fake VPP: processor, the
// IPv6 renderer (and optionally the NAT44 renderer) and the VPP layer.
type agent struct {
	*agenttest.Run
	proc *processor.Processor
}

// testConfig is the configuration of the plan (cnattrace.Face.PlanConfig).
func testConfig() ipv6.Config { return ipv6.Config(ipv6Face.PlanConfig()) }

// agentOptions choose the renderers of an agent.
type agentOptions struct {
	cfg   ipv6.Config
	nat44 bool // also register the NAT44 renderer (dual stack)
}

// startAgent connects a new agent to node (see agenttest.StartOn).
func startAgent(tb testing.TB, node dataplane.Node, opts agentOptions) *agent {
	tb.Helper()
	var cfg4 *nat44.Config
	if opts.nat44 {
		c := nat44.DefaultConfig()
		c.TwiceNATAddress = tracetest.NodeIP4
		cfg4 = &c
	}
	run := agenttest.StartOn(tb, node.Adapter(), vppagent.Options{
		NodeName: tracetest.ThisNode, FrontendInterfaces: []string{"uplink0", "host0"},
		Config: agenttest.Config(cfg4, &opts.cfg), Log: tracetest.QuietLogger(),
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
		Nodes: []*corev1.Node{
			tracetest.Node(tracetest.ThisNode, tracetest.NodeIP6, tracetest.NodeIP4),
			tracetest.Node(tracetest.OtherNode, tracetest.OtherNodeIP6, tracetest.OtherNodeIP4),
		},
	}
	s.LocalPods = agenttest.LocalPods(localPods, func(n int) []netip.Addr {
		return []netip.Addr{netip.MustParseAddr(fmt.Sprintf("fd00:1:1::%d", n)), netip.MustParseAddr(fmt.Sprintf("10.1.1.%d", n))}
	})
	return s
}

// k8sSlice is an IPv6 slice of svc with port "http" 8080 and the endpoints.
func k8sSlice(svc string, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	return tracetest.Slice(svc, discoveryv1.AddressTypeIPv6, eps...)
}

// ipv6Face is this harness as the shared scenarios of
// renderer/internal/cnattrace take it.
var ipv6Face = faceWith(agentOptions{})

// faceWith is the face whose agents also get opts' other renderers.
func faceWith(opts agentOptions) *cnattrace.Face {
	return (&cnattrace.Face{
		Name:    ipv6.Name,
		NodeIP:  tracetest.NodeIP6,
		NewNode: newNode,
		StartAgent: func(tb testing.TB, node dataplane.Node, cfg rcnat.Config) cnattrace.Agent {
			opts.cfg = ipv6.Config(cfg)
			ag := startAgent(tb, node, opts)
			return &agenttest.Control{Run: ag.Run, Base: cluster{}.snapshot()}
		},
		Slice: k8sSlice,
		EnabledFeatures: func(t *testing.T, node dataplane.Node) []string {
			return agenttest.EnabledFeatures(t, node, tracetest.QuietLogger())
		},
		RequireFake: requireFakeCNAT,
	}).WithPlanClients()
}
