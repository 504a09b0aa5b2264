package cnattrace

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/vppsvc/vppsvc/dataplane"
	"github.com/vppsvc/vppsvc/renderer/cnat"
	"github.com/vppsvc/vppsvc/renderer/internal/tracetest"
)

// Cluster is the Kubernetes state of a scenario.
type Cluster struct {
	Services []*corev1.Service
	Slices   []*discoveryv1.EndpointSlice
}

// Agent is one run of the control plane over a VPP, as a face's test
// package adapts it (processor and agenttest.Run).
type Agent interface {
	// Resync replaces the processor's state with services and slices
	// (plus the nodes and local pods of the face's plan).
	Resync(services []*corev1.Service, slices []*discoveryv1.EndpointSlice)
	UpdateService(*corev1.Service)
	UpdateEndpointSlice(*discoveryv1.EndpointSlice)
	DeleteService(namespace, name string)
	Stop()
	// Resyncs is the VPP layer's count of full resyncs so far.
	Resyncs() uint64
	// WaitReapplied waits until a resync after the first since ones has
	// applied everything, or fails the test after within.
	WaitReapplied(tb testing.TB, since uint64, within time.Duration)
	// WaitSettled waits until the VPP layer holds every desired item and
	// has removed every stale one, or fails the test.
	WaitSettled(tb testing.TB)
}

// Face is what the scenarios need of one family's test harness.
type Face struct {
	// Name is the renderer's name (the prefix of its ACLs).
	Name string
	// IPv4 selects the IPv4 plan for A; false is the IPv6 plan.
	IPv4 bool
	// Clients of every scenario (see the faces' harness_test.go).
	LocalPod, TheNode, RemotePod, External, Outsider tracetest.Client
	// PodClient is local pod <N> as a client.
	PodClient func(n int) tracetest.Client
	// NodeIP is this node's address of the family, also the SNAT address.
	NodeIP netip.Addr
	// Config is the renderer configuration of the scenarios; nil is
	// PlanConfig.
	Config func() cnat.Config
	// NewNode returns node-1 on the tests' data plane.
	NewNode func(tb testing.TB) dataplane.Node
	// StartAgent connects a new agent with cfg to node.
	StartAgent func(tb testing.TB, node dataplane.Node, cfg cnat.Config) Agent
	// Slice is a slice of the family of svc with port "http" 8080.
	Slice func(svc string, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice
	// EnabledFeatures lists the interface features read back from node.
	EnabledFeatures func(t *testing.T, node dataplane.Node) []string
	// RequireFake, if set, skips a test the data plane cannot run.
	RequireFake func(tb testing.TB)
}

// WithPlanClients sets f's clients to the plan's (see the faces'
// harness_test.go) in f's family, and returns f.
func (f *Face) WithPlanClients() *Face {
	c := func(name, ingress, addr string) tracetest.Client {
		return tracetest.Client{Name: name, Ingress: ingress, Addr: netip.MustParseAddr(f.A(addr))}
	}
	f.LocalPod = c("local pod", "tap9", "fd00:1:1::9")
	f.TheNode = c("node", "host0", "fd00:30::2")
	f.RemotePod = c("remote pod", "uplink0", "fd00:1:2::9")
	f.External = c("external client", "uplink0", "2001:db8:c:1::5")
	f.Outsider = c("external client outside the source ranges", "uplink0", "2001:db8:c:2::5")
	f.PodClient = func(n int) tracetest.Client {
		return c(fmt.Sprintf("pod %d", n), fmt.Sprintf("tap%d", n), fmt.Sprintf("fd00:1:1::%d", n))
	}
	return f
}

// PlanConfig is cnat.DefaultConfig with the plan's SNAT address (NodeIP),
// node sources (the host interface's client) and local clients (this
// node's pods) in f's family.
func (f *Face) PlanConfig() cnat.Config {
	cfg := cnat.DefaultConfig()
	cfg.SNATAddress = f.NodeIP
	host := netip.MustParseAddr(f.A("fd00:30::2"))
	cfg.NodeSources = []netip.Prefix{netip.PrefixFrom(host, host.BitLen())}
	cfg.LocalClients = []netip.Prefix{netip.MustParsePrefix(f.A("fd00:1:1::/64"))}
	return cfg
}

func (f *Face) config() cnat.Config {
	if f.Config == nil {
		return f.PlanConfig()
	}
	return f.Config()
}

// AllClients are the clients every scenario checks.
func (f *Face) AllClients() []tracetest.Client {
	return []tracetest.Client{f.LocalPod, f.TheNode, f.RemotePod, f.External}
}

// IP is "ip6" or "ip4", as VPP's node and arc names spell the family.
func (f *Face) IP() string {
	if f.IPv4 {
		return "ip4"
	}
	return "ip6"
}

// Env is a node programmed by an agent from a cluster state.
type Env struct {
	*tracetest.Env
	Agent Agent
	f     *Face
}

// NewEnv is NewEnvWith the plan's configuration.
func (f *Face) NewEnv(t *testing.T, c Cluster) *Env {
	t.Helper()
	return f.NewEnvWith(t, f.config(), c)
}

// NewEnvWith starts an agent with cfg on a new node and resyncs it to c.
func (f *Face) NewEnvWith(t *testing.T, cfg cnat.Config, c Cluster) *Env {
	t.Helper()
	f.requireFake(t)
	v := f.NewNode(t)
	ag := f.StartAgent(t, v, cfg)
	c.resync(ag)
	return &Env{Env: tracetest.NewEnv(t, v, f.NodeIP, 40000), Agent: ag, f: f}
}

func (f *Face) requireFake(tb testing.TB) {
	tb.Helper()
	if f.RequireFake != nil {
		f.RequireFake(tb)
	}
}

// resync makes c the agent's whole state.
func (c Cluster) resync(ag Agent) { ag.Resync(c.Services, c.Slices) }

// forEachClient runs check for every client of AllClients as a subtest.
func (e *Env) forEachClient(t *testing.T, check func(cl tracetest.Client)) {
	e.ForEachClient(t, e.f.AllClients(), check)
}

// ipv4Plan maps the IPv6 plan's prefixes of host addresses to the IPv4
// plan's: the host part (the IPv6 address's last group, decimal digits in
// every scenario) is kept.
var ipv4Plan = []struct{ v6, v4 string }{
	{"fd00:96::", "10.96.0."},        // ClusterIPs
	{"fd00:1:1::", "10.1.1."},        // local pods
	{"fd00:1:2::", "10.1.2."},        // pods on node-2
	{"fd00:16::", "192.168.16."},     // node IPs
	{"fd00:30::", "172.30.1."},       // the node's side of the host interface
	{"2001:db8:1b::", "198.51.100."}, // LoadBalancer ingress IPs
	{"2001:db8:e::", "203.0.113."},   // external IPs
	{"2001:db8:c:1::", "100.64.1."},  // allowed external clients
	{"2001:db8:c:2::", "100.64.2."},  // external clients outside the ranges
}

// ipv4Prefixes maps the IPv6 plan's prefixes to the IPv4 plan's; the
// IPv4 range an IPv6 scenario lists (another family's, ignored) becomes
// the IPv6 one.
var ipv4Prefixes = map[string]string{
	"2001:db8:c:1::/64": "100.64.1.0/24",
	"fd00:16::/64":      "192.168.16.0/24",
	"fd00:96::/108":     "10.96.0.0/16",
	"fd00:1:1::/64":     "10.1.1.0/24",
	"100.64.1.0/24":     "2001:db8:c:1::/64",
}

// A maps s, an address, a "[address]:port" or a prefix of the IPv6 plan,
// to the face's family. It panics on what is outside the plan: a
// scenario's typo, not a run-time input.
func (f *Face) A(s string) string {
	if !f.IPv4 {
		return s
	}
	if p, ok := ipv4Prefixes[s]; ok {
		return p
	}
	if strings.HasPrefix(s, "[") {
		a, port, ok := strings.Cut(s[1:], "]:")
		if !ok {
			panic(fmt.Sprintf("cnattrace: %q is no [address]:port", s))
		}
		return f.A(a) + ":" + port
	}
	for _, m := range ipv4Plan {
		if host, ok := strings.CutPrefix(s, m.v6); ok {
			if n, err := strconv.ParseUint(host, 10, 8); err == nil && n > 0 {
				return m.v4 + host
			}
		}
	}
	panic(fmt.Sprintf("cnattrace: %q is outside the IPv6 plan", s))
}
