package realvpp

import (
	"fmt"
	"net/netip"
	"os"
	"slices"
	"testing"
	"time"

	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip_types"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/binapi/nat_types"
	"go.fd.io/govpp/core"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vppsvc/vppsvc/dataplane"
	rv "github.com/vppsvc/vppsvc/realvpp"
)

// size is a generated cluster: services with endpoints each; cidr adds a
// ServiceCIDR object for the ClusterIPs' range (172.30.0.0/16), so one drop
// route serves every ClusterIP instead of one route each.
type size struct {
	services, endpoints int
	cidr                bool
}

func (s size) String() string {
	out := fmt.Sprintf("services=%d/endpoints=%d", s.services, s.endpoints)
	if s.cidr {
		out += "/service-cidr"
	}
	return out
}

// coldSizes are the states of the scale targets (docs/performance.md): 5,000 services × 10
// endpoints and 50,000 × 1 (LB mappings, one local each beside the placeholder).
var coldSizes = []size{{services: 5000, endpoints: 10}, {services: 50000, endpoints: 1}}

// serviceCIDR is the generated cluster's ClusterIP range as the API
// serves it.
func serviceCIDR() *networkingv1.ServiceCIDR {
	return &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: "kubernetes"},
		Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"172.30.0.0/16"}}}
}

// coldSync programs the generated cluster of sz into an empty real VPP
// through a new agent (uplink0 and host0 as frontends) and returns the
// agent, the wall time from Processor.Resync to convergence, the VPP
// calls it sent (writes, reads), the main heap's growth in bytes and the
// recording of the writes (those of the agent's start apart).
func coldSync(b *testing.B, n *rv.Node, fam family, sz size) (a *runningAgent, took time.Duration, writes, reads int, heap float64, rec recording) {
	b.Helper()
	r := newRecorder(n.Adapter())
	a = startAgentOn(b, r, fam, 0, "uplink0", "host0")
	snap := snapshot(sz.services, sz.endpoints, false, false)
	if sz.cidr {
		snap.ServiceCIDRs = append(snap.ServiceCIDRs, serviceCIDR())
	}
	heap0 := heapUsed(b, n)
	n.ResetCalls()
	// Room for the sync's writes (two a service at most, about 100 bytes
	// each), so that recording them costs the timed sync no allocation.
	r.reserve(2*sz.services+16, 128)
	r.mark()
	cpu0, vppCPU0 := processCPU(), vppCPU(b, n)
	start := time.Now()
	a.Processor.Resync(snap)
	a.converge(b)
	end := time.Now()
	took = end.Sub(start)
	b.Logf("%s: CPU during the sync: the product %s, VPP %s", sz, (processCPU() - cpu0).Round(time.Millisecond), (vppCPU(b, n) - vppCPU0).Round(10*time.Millisecond))
	writes, reads = callCounts(n.Calls())
	rec = r.split()
	if len(rec.sync) > 0 {
		b.Logf("%s: first write %s after Resync, writes for %s, converged %s after the last write",
			sz, rec.first.Sub(start).Round(time.Millisecond), rec.last.Sub(rec.first).Round(time.Millisecond), end.Sub(rec.last).Round(time.Millisecond))
	}
	return a, took, writes, reads, heapUsed(b, n) - heap0, rec
}

// BenchmarkRealColdSync is the first Processor.Resync of a generated
// cluster (internal/benchmarks' kube-proxy-shaped one) into an empty real
// VPP, through the product's agent, timed until the agent has converged
// (every item applied), without and with a ServiceCIDR object. It reports
// the wall time per sync (ns/op), services/s, the state-changing VPP calls
// per sync (vpp-writes/op) and per second (vpp-calls/s), and VPP's
// main-heap growth per service (vpp-heap-B/service, "show memory
// main-heap" used before and after).
//
// Then, with the restart command set, VPP's own ceiling for the same
// writes (ceiling_test.go): ceiling-calls/s through a bare govpp stream,
// wire-calls/s through govpp's socket adapter alone, held-calls/s through
// vppsock a window a write (each the best of ceilingDepths, each into a
// freshly started VPP), ceiling-ns/op the time VPP alone needs for the sync
// (the fastest client's), and x-ceiling the product's time over it (1 = VPP
// is the limit). The log line also gives the CPU the product and VPP used
// during the sync, and the held replay's.
//
// Last, for the NAT44 renderer, the floor (floor_test.go): the same
// mappings built straight from the objects, with no state, written as the
// held replay writes; floor-ns/op its time, floor-x-ceiling its time over
// the ceiling (the least factor any control plane could reach here) and
// x-floor the product's time over it (what the product's state costs).
// The NAT44 renderer's syncs are named by size alone, the cnat IPv4
// renderer's "cnat4/<size>" (-bench 'RealColdSync/cnat4/').
// Run with -benchtime=1x: each iteration re-creates the node.
func BenchmarkRealColdSync(b *testing.B) {
	for _, fam := range []family{ipv4, cnat4} {
		for _, base := range coldSizes {
			for _, cidr := range []bool{false, true} {
				sz := base
				sz.cidr = cidr
				name := sz.String()
				if fam != ipv4 {
					name = fam.String() + "/" + name
				}
				b.Run(name, func(b *testing.B) { benchColdSync(b, fam, sz) })
			}
		}
	}
}

// A held replay keeps VPP's API busy from its first request to its last:
// VPP's CPU during one is nearly its time (0.89–0.95 here), and a third
// of it with poll-sleep-usec 100. Below minCeilingBusy the benchmark says
// so; VPP's CPU is read in 10 ms ticks, so replays shorter than
// minBusyCheck are not judged.
const (
	minCeilingBusy = 0.6
	minBusyCheck   = 100 * time.Millisecond
)

func benchColdSync(b *testing.B, fam family, sz size) {
	skipLarge(b, sz.services)
	n := openNode(b)
	var took time.Duration
	var writes, reads int
	var heap float64
	var rec recording
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		switch {
		case i > 0:
			if err := n.Reset(); err != nil {
				b.Fatal(err)
			}
		case os.Getenv(dataplane.RestartEnv) != "":
			// The ceiling replays the recording into freshly started VPPs,
			// which number the interfaces from the start: so must the VPP
			// it is recorded on. One used before (deleted interfaces, an
			// earlier test's topology) numbers them otherwise, and the
			// replayed interface features failed with "Invalid
			// sw_if_index".
			freshNode(b, n)
		}
		buildNode(b, n, false)
		var d time.Duration
		var a *runningAgent
		a, d, writes, reads, heap, rec = coldSync(b, n, fam, sz)
		took += d
		a.stop()
	}
	// The timer stayed stopped: report the measured syncs alone.
	perSync := took / time.Duration(b.N)
	b.ReportMetric(float64(perSync.Nanoseconds()), "ns/op")
	b.ReportMetric(float64(sz.services)/perSync.Seconds(), "services/s")
	b.ReportMetric(float64(writes), "vpp-writes/op")
	b.ReportMetric(float64(reads), "vpp-reads/op")
	product := float64(writes) / perSync.Seconds()
	b.ReportMetric(product, "vpp-calls/s")
	b.ReportMetric(heap/float64(sz.services), "vpp-heap-B/service")
	if len(rec.sync) != writes {
		b.Errorf("recorded %d writes, counted %d", len(rec.sync), writes)
	}
	c, ok := measureCeiling(b, n, rec)
	if !ok {
		return
	}
	calls := float64(len(rec.sync))
	b.ReportMetric(calls/c.stream.Seconds(), "ceiling-calls/s")
	b.ReportMetric(calls/c.wire.Seconds(), "wire-calls/s")
	b.ReportMetric(calls/c.held.Seconds(), "held-calls/s")
	b.ReportMetric(float64(c.best().Nanoseconds()), "ceiling-ns/op")
	b.ReportMetric(float64(perSync)/float64(c.best()), "x-ceiling")
	b.Logf("%s: product %s (%.0f calls/s); VPP's ceiling %s through a govpp stream (depth %d), %s on the wire (depth %d), %s on the wire a window a write (depth %d): %.2fx the best",
		sz, perSync.Round(time.Millisecond), product, c.stream.Round(time.Millisecond), c.streamDepth, c.wire.Round(time.Millisecond), c.wireDep,
		c.held.Round(time.Millisecond), c.heldDep, float64(perSync)/float64(c.best()))
	b.Logf("%s: the held replay's CPU: the client %s, VPP %s", sz, c.heldCPU.Round(time.Millisecond), c.heldVPP.Round(10*time.Millisecond))
	busy := float64(c.heldVPP) / float64(c.held)
	b.ReportMetric(busy, "ceiling-vpp-busy")
	if c.held >= minBusyCheck && busy < minCeilingBusy {
		b.Logf("%s: WARNING: VPP was busy %.0f%% of its own ceiling's replay: a VPP that sleeps on every turn (unix poll-sleep-usec, docs/real-vpp.md) or a busy machine makes the ceiling slower, and every ratio to it better than it is", sz, 100*busy)
	}
	f, ok := measureFloor(b, n, fam, sz, rec)
	if !ok {
		return
	}
	b.ReportMetric(float64(f.took.Nanoseconds()), "floor-ns/op")
	b.ReportMetric(float64(f.took)/float64(c.best()), "floor-x-ceiling")
	b.ReportMetric(float64(perSync)/float64(f.took), "x-floor")
	b.Logf("%s: the floor (no state, no diff) %s (depth %d, pipelined %v), %.2fx VPP's ceiling; its CPU: the client %s, VPP %s; the product is %.2fx the floor",
		sz, f.took.Round(time.Millisecond), f.depth, f.pipelined, float64(f.took)/float64(c.best()), f.cpu.Round(time.Millisecond), f.vpp.Round(10*time.Millisecond), float64(perSync)/float64(f.took))
}

// BenchmarkRealAgentRestart is an agent restart over a real VPP programmed
// by a cold sync of the generated cluster: a new agent connects, dumps VPP,
// is given the same cluster and converges. It reports the time from
// agent.New to convergence (ns/op) and the VPP calls the new agent sent:
// vpp-writes/op must be 0 (the benchmark fails otherwise), vpp-reads/op
// are its dumps.
func BenchmarkRealAgentRestart(b *testing.B) {
	for _, sz := range coldSizes {
		b.Run(sz.String(), func(b *testing.B) {
			skipLarge(b, sz.services)
			n := openNode(b)
			buildNode(b, n, false)
			a, _, _, _, _, _ := coldSync(b, n, ipv4, sz)
			a.stop()
			snap := snapshot(sz.services, sz.endpoints, false, false)
			var took time.Duration
			var writes, reads int
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				n.ResetCalls()
				start := time.Now()
				a := startAgent(b, n, ipv4, 0, "uplink0", "host0")
				a.Processor.Resync(snap)
				a.converge(b)
				took += time.Since(start)
				calls := n.Calls()
				writes, reads = callCounts(calls)
				if writes != 0 {
					b.Errorf("the restarted agent changed VPP: %s", writeCalls(calls))
				}
				a.stop()
			}
			b.ReportMetric(float64(took.Nanoseconds())/float64(b.N), "ns/op")
			b.ReportMetric(float64(writes), "vpp-writes/op")
			b.ReportMetric(float64(reads), "vpp-reads/op")
		})
	}
}

// mappingShapeCount is how many mappings BenchmarkRealMappingShape adds.
const mappingShapeCount = 10000

// BenchmarkRealMappingShape measures what NAT44-ED's mapping shapes cost
// VPP to add, per item, one request at a time over the binary API (the
// round trip included), 10,000 of them, each out2in-only with
// self-twice-NAT as for a ClusterIP: a plain static mapping (what vppsvc
// rendered for a service with one backend before it used an LB mapping),
// an LB mapping with 2 locals (two backends), and the LB mapping of one
// backend and the placeholder local (0.0.0.0, the frontend's port,
// probability 0: what vppsvc renders for one backend now), with 2, 10 and
// 100 NAT44 outside interfaces (uplink, host and pod taps, as the renderer
// sets them). It reports the mean µs per add, the mean and the median of
// the first and last thousand and their ratios (last1k/first1k: 1 is flat,
// the target is at most 1.2 at 100 interfaces; the median's ratio is the
// one a busy machine does not move), and the main heap's growth per
// mapping.
// The static mapping is not measured at 100 interfaces: its add walks a
// vector of mappings × interfaces once per interface (quadratic in the
// interfaces), hours for 10,000.
func BenchmarkRealMappingShape(b *testing.B) {
	for _, outside := range []int{2, 10, 100} {
		for _, shape := range []string{"static", "lb", "lb1"} {
			if shape == "static" && outside > 10 {
				continue
			}
			b.Run(fmt.Sprintf("shape=%s/outside=%d", shape, outside), func(b *testing.B) {
				n := openNode(b)
				for i := 0; i < b.N; i++ {
					if i > 0 {
						if err := n.Reset(); err != nil {
							b.Fatal(err)
						}
					}
					buildNode(b, n, false)
					benchMappingShape(b, n, shape, outside)
				}
			})
		}
	}
}

func benchMappingShape(b *testing.B, n *rv.Node, shape string, outside int) {
	conn, err := core.Connect(n.Adapter())
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Disconnect()
	ch, err := conn.NewAPIChannel()
	if err != nil {
		b.Fatal(err)
	}
	defer ch.Close()
	call := func(req, reply api.Message) {
		if err := ch.SendRequest(req).ReceiveReply(reply); err != nil {
			b.Fatalf("%s: %v", req.GetMessageName(), err)
		}
	}
	call(&nat44_ed.Nat44EdPluginEnableDisable{Enable: true}, &nat44_ed.Nat44EdPluginEnableDisableReply{})
	call(&nat44_ed.Nat44ForwardingEnableDisable{Enable: true}, &nat44_ed.Nat44ForwardingEnableDisableReply{})
	ifs := []string{"uplink0", "host0"}
	for i := 2; i < outside; i++ {
		name := fmt.Sprintf("tap%d", 100+i)
		if err := n.AddInterface(name); err != nil {
			b.Fatal(err)
		}
		if err := n.SetUnnumbered(name, "host0"); err != nil {
			b.Fatal(err)
		}
		ifs = append(ifs, name)
	}
	for _, name := range ifs {
		sw, _ := n.InterfaceIndex(name)
		call(&nat44_ed.Nat44InterfaceAddDelFeature{IsAdd: true, SwIfIndex: interface_types.InterfaceIndex(sw)},
			&nat44_ed.Nat44InterfaceAddDelFeatureReply{})
	}
	flags := nat_types.NAT_IS_OUT2IN_ONLY | nat_types.NAT_IS_SELF_TWICE_NAT
	ip4 := func(a netip.Addr) ip_types.IP4Address { return ip_types.IP4Address(a.As4()) }
	heap0 := heapUsed(b, n)
	const chunk = 1000
	var first, last, total time.Duration
	var firsts, lasts []time.Duration
	b.ResetTimer()
	for i := 0; i < mappingShapeCount; i++ {
		ext := offsetAddr(netip.MustParseAddr("172.30.0.0"), i+1)
		start := time.Now()
		if shape == "static" {
			call(&nat44_ed.Nat44AddDelStaticMappingV2{IsAdd: true, Flags: flags,
				LocalIPAddress: ip4(offsetAddr(netip.MustParseAddr("10.0.0.0"), i+1)), ExternalIPAddress: ip4(ext),
				Protocol: 6, LocalPort: 80, ExternalPort: 80, ExternalSwIfIndex: ^interface_types.InterfaceIndex(0),
				PoolIPAddress: ip4(nodeIP), Tag: fmt.Sprint("default/svc", i)},
				&nat44_ed.Nat44AddDelStaticMappingV2Reply{})
		} else {
			locals := []nat44_ed.Nat44LbAddrPort{
				{Addr: ip4(offsetAddr(netip.MustParseAddr("10.0.0.0"), 2*i+1)), Port: 80, Probability: 1},
				{Addr: ip4(offsetAddr(netip.MustParseAddr("10.0.0.0"), 2*i+2)), Port: 80, Probability: 1},
			}
			if shape == "lb1" {
				locals[1] = nat44_ed.Nat44LbAddrPort{Port: 80} // the placeholder: 0.0.0.0, probability 0
			}
			call(&nat44_ed.Nat44AddDelLbStaticMapping{IsAdd: true, Flags: flags, ExternalAddr: ip4(ext), ExternalPort: 80,
				Protocol: 6, Tag: fmt.Sprint("default/svc", i), Locals: locals},
				&nat44_ed.Nat44AddDelLbStaticMappingReply{})
		}
		d := time.Since(start)
		total += d
		if i < chunk {
			first += d
			firsts = append(firsts, d)
		}
		if i >= mappingShapeCount-chunk {
			last += d
			lasts = append(lasts, d)
		}
	}
	b.StopTimer()
	heap := heapUsed(b, n) - heap0
	fib, _ := n.CLI("show ip fib summary")
	b.Logf("%s, %d outside interfaces: %d mappings in %s; ip4 FIB after:\n%s", shape, outside, mappingShapeCount, total, fib)
	b.ReportMetric(float64(total.Microseconds())/mappingShapeCount, "µs/add")
	b.ReportMetric(float64(first.Microseconds())/chunk, "µs/add-first1k")
	b.ReportMetric(float64(last.Microseconds())/chunk, "µs/add-last1k")
	b.ReportMetric(float64(last)/float64(first), "last1k/first1k")
	// Medians: one add is one round trip, and on a shared machine a few of
	// them wait for a core; the median is what VPP's add costs.
	slices.Sort(firsts)
	slices.Sort(lasts)
	b.ReportMetric(float64(firsts[chunk/2].Nanoseconds())/1e3, "µs/add-first1k-median")
	b.ReportMetric(float64(lasts[chunk/2].Nanoseconds())/1e3, "µs/add-last1k-median")
	b.ReportMetric(float64(lasts[chunk/2])/float64(firsts[chunk/2]), "last1k/first1k-median")
	b.ReportMetric(heap/mappingShapeCount, "vpp-heap-B/mapping")
}

// offsetAddr is the IPv4 address off addresses after base.
func offsetAddr(base netip.Addr, off int) netip.Addr {
	a := base.As4()
	v := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3]) + uint32(off)
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}
