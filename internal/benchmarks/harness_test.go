package benchmarks

import (
	"context"
	"io"
	"net/netip"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"go.fd.io/govpp/core"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vppsvc/vppsvc/fakevpp"
	"github.com/vppsvc/vppsvc/internal/pipeline"
	"github.com/vppsvc/vppsvc/processor"
	"github.com/vppsvc/vppsvc/renderer/cnat4"
	"github.com/vppsvc/vppsvc/renderer/nat44"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
	"github.com/vppsvc/vppsvc/vppcfg/engine"
	"github.com/vppsvc/vppsvc/vppcfg/govppdriver"
)

// The harness is one agent — the processor, the NAT44 renderer and the VPP
// layer, wired by internal/pipeline as agent.New wires them — over either
// the fake VPP through govpp (end to end) or an instant driver (the control
// plane alone), which agent.New cannot take.

var nodeIP = netip.MustParseAddr("192.168.16.1")

func init() {
	// govpp's health probe and log would otherwise run in every benchmark.
	core.HealthCheckProbeInterval = time.Second
	core.SetLogger(quiet())
}

func quiet() *logrus.Logger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}

// newFake returns the fake VPP of NodeName: the uplink holding the node's
// IP and the host interface, addressed outside the generated ClusterIPs
// (172.30.0.0/16) and endpoints (10.0.0.0/8).
func newFake() *fakevpp.VPP {
	v := fakevpp.New(fakevpp.WithSeed(1))
	v.AddInterface("uplink0", netip.MustParsePrefix("192.168.16.1/24"))
	v.AddInterface("host0", netip.MustParsePrefix("192.168.17.1/24"))
	v.AddRoute(netip.MustParsePrefix("0.0.0.0/0"), "uplink0")
	return v
}

// agent is one control plane; stop stops its VPP layer (the processor,
// renderer and reconciler keep their state).
type agent struct {
	proc *processor.Processor
	rec  *engine.Reconciler
	drv  driverapi.Driver
	stop func()
}

// startAgent starts an agent over drv and waits for its VPP layer's first
// sync. The caller stops it: a cleanup would keep every cold sync's fake
// VPP alive until the benchmark ends and skew the heap figures.
func startAgent(b testing.TB, drv driverapi.Driver) *agent {
	return startAgentWith(b, drv, false)
}

// startAgentWith is startAgent with the cnat IPv4 renderer instead of
// NAT44's when useCNAT is set.
func startAgentWith(b testing.TB, drv driverapi.Driver, useCNAT bool) *agent {
	b.Helper()
	pc := pipeline.Config{
		NodeName: NodeName, FrontendInterfaces: []string{"uplink0", "host0"},
		Log: quiet(), RetryMin: time.Millisecond, RetryMax: 20 * time.Millisecond,
	}
	if useCNAT {
		cfg := cnat4.DefaultConfig()
		cfg.SNATAddress = nodeIP
		cfg.ServiceCIDRs = benchServiceCIDRs(b)
		pc.CNAT4 = &cfg
	} else {
		cfg := nat44.DefaultConfig()
		cfg.TwiceNATAddress = nodeIP
		cfg.ServiceCIDRs = benchServiceCIDRs(b)
		pc.NAT44 = &cfg
	}
	p, err := pipeline.New(drv, pc)
	if err != nil {
		b.Fatal(err)
	}
	proc, rec := p.Processor, p.Reconciler
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := rec.Start(ctx); err != nil {
			b.Errorf("reconciler: %v", err)
		}
	}()
	select {
	case <-rec.Synced():
	case <-time.After(30 * time.Second):
		b.Fatal("reconciler did not sync")
	}
	var once sync.Once
	ag := &agent{proc: proc, rec: rec, drv: drv, stop: func() {
		once.Do(func() {
			cancel()
			<-done
			if c, ok := drv.(interface{ Close() }); ok {
				c.Close()
			}
		})
	}}
	return ag
}

// startFakeAgent starts an agent over a new fake VPP through govpp.
func startFakeAgent(b testing.TB) (*agent, *fakevpp.VPP) {
	b.Helper()
	return startFakeAgentWith(b, false)
}

// startFakeAgentWith is startFakeAgent with the cnat IPv4 renderer when
// useCNAT is set.
func startFakeAgentWith(b testing.TB, useCNAT bool) (*agent, *fakevpp.VPP) {
	b.Helper()
	v := newFake()
	drv, err := govppdriver.Connect(v, govppdriver.Options{Logger: quiet(), ReconnectInterval: 20 * time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	return startAgentWith(b, drv, useCNAT), v
}

// calls is the number of VPP requests the agent's driver has sent.
func (a *agent) calls() uint64 {
	var n uint64
	for _, s := range a.drv.CallStats() {
		n += s.Calls
	}
	return n
}

// snapshot is the processor's view of a generated cluster of n services
// with eps endpoints each, on a two-node cluster.
func snapshot(n, eps int) processor.Snapshot {
	svcs, slices := Cluster(n, eps)
	return processor.Snapshot{
		Services:       svcs,
		EndpointSlices: slices,
		Nodes: []*corev1.Node{
			node(NodeName, "192.168.16.1"), node("node-2", "192.168.16.2"),
		},
	}
}

func node(name, ip string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status:     corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}},
	}
}

// instantDriver is a VPP that applies every op at once and keeps nothing:
// with it, a benchmark's time is the control plane's alone (processor,
// renderer, reconciler), without govpp's codec and the fake's emulation.
type instantDriver struct {
	mu     sync.Mutex
	calls  uint64
	handle uint32
	events chan driverapi.Event
}

func newInstantDriver() *instantDriver {
	return &instantDriver{events: make(chan driverapi.Event)}
}

var instantIfs = map[string]uint32{"uplink0": 1, "host0": 2}

func (d *instantDriver) Interfaces(context.Context) (map[string]uint32, error) {
	return instantIfs, nil
}

func (d *instantDriver) Dump(context.Context) (*driverapi.State, error) {
	return &driverapi.State{Interfaces: instantIfs}, nil
}

func (d *instantDriver) Apply(_ context.Context, ops []driverapi.Op) []driverapi.OpResult {
	d.mu.Lock()
	defer d.mu.Unlock()
	res := make([]driverapi.OpResult, len(ops))
	for i, op := range ops {
		d.calls++
		switch op.Type {
		case driverapi.OpCreate:
			d.handle++
			res[i].Handle = d.handle
		case driverapi.OpUpdate:
			res[i].Handle = op.Handle
		}
	}
	return res
}

func (d *instantDriver) Events() <-chan driverapi.Event { return d.events }

func (d *instantDriver) CallStats() []driverapi.CallStat {
	d.mu.Lock()
	defer d.mu.Unlock()
	return []driverapi.CallStat{{Msg: "op", Calls: d.calls}}
}

// serviceCIDREnv names the variable benchServiceCIDRs reads.
const serviceCIDREnv = "VPPSVC_BENCH_SERVICE_CIDR"

// clusterIPRange is the range the generated ClusterIPs are taken from.
var clusterIPRange = netip.PrefixFrom(clusterIPBase, 16).String()

// benchServiceCIDRs reads VPPSVC_BENCH_SERVICE_CIDR (kube-proxy's
// --service-cluster-ip-range, e.g. 172.30.0.0/16 for the generated
// ClusterIPs): with it the NAT44 renderer drops the range's free addresses
// by one route instead of one drop route per ClusterIP, which is what a
// node configured like kube-proxy pays. Unset, the benchmarks measure the
// per-ClusterIP routes.
func benchServiceCIDRs(b testing.TB) []netip.Prefix {
	v := os.Getenv(serviceCIDREnv)
	if v == "" {
		return nil
	}
	p, err := netip.ParsePrefix(v)
	if err != nil {
		b.Fatalf("VPPSVC_BENCH_SERVICE_CIDR: %v", err)
	}
	return []netip.Prefix{p.Masked()}
}
