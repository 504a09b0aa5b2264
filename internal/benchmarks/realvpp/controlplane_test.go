package realvpp

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip_types"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/binapi/nat_types"
	"go.fd.io/govpp/core"

	rv "github.com/vppsvc/vppsvc/realvpp"
)

// size is a generated cluster: services with endpoints each.
type size struct{ services, endpoints int }

func (s size) String() string {
	return fmt.Sprintf("services=%d/endpoints=%d", s.services, s.endpoints)
}

// coldSizes are the states of the scale targets (docs/performance.md): 5,000 services × 10
// endpoints and 50,000 × 1 (LB mappings, one local each beside the placeholder).
var coldSizes = []size{{5000, 10}, {50000, 1}}

// coldSync programs the generated cluster of sz into an empty real VPP
// through a new agent (uplink0 and host0 as frontends) and returns the
// agent, the wall time from Processor.Resync to convergence, the VPP
// calls it sent (writes, reads) and the main heap's growth in bytes.
func coldSync(b *testing.B, n *rv.Node, sz size) (a *runningAgent, took time.Duration, writes, reads int, heap float64) {
	b.Helper()
	a = startAgent(b, n, ipv4, 0, "uplink0", "host0")
	snap := snapshot(sz.services, sz.endpoints, false, false)
	heap0 := heapUsed(b, n)
	n.ResetCalls()
	start := time.Now()
	a.Processor.Resync(snap)
	a.converge(b)
	took = time.Since(start)
	writes, reads = callCounts(n.Calls())
	return a, took, writes, reads, heapUsed(b, n) - heap0
}

// BenchmarkRealColdSync is the first Processor.Resync of a generated
// cluster (internal/benchmarks' kube-proxy-shaped one) into an empty real
// VPP, through the product's agent, timed until the agent has converged
// (every item applied). It reports the wall time per sync (ns/op),
// services/s, the state-changing VPP calls per sync (vpp-writes/op) and per
// second (vpp-calls/s), and VPP's main-heap growth per service
// (vpp-heap-B/service, "show memory main-heap" used before and after).
// Run with -benchtime=1x: each iteration re-creates the node.
func BenchmarkRealColdSync(b *testing.B) {
	for _, sz := range coldSizes {
		b.Run(sz.String(), func(b *testing.B) {
			skipLarge(b, sz.services)
			n := openNode(b)
			var took time.Duration
			var writes, reads int
			var heap float64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				if i > 0 {
					if err := n.Reset(); err != nil {
						b.Fatal(err)
					}
				}
				buildNode(b, n, false)
				var d time.Duration
				var a *runningAgent
				a, d, writes, reads, heap = coldSync(b, n, sz)
				took += d
				a.stop()
			}
			// The timer stayed stopped: report the measured syncs alone.
			b.ReportMetric(float64(took.Nanoseconds())/float64(b.N), "ns/op")
			b.ReportMetric(float64(sz.services)*float64(b.N)/took.Seconds(), "services/s")
			b.ReportMetric(float64(writes), "vpp-writes/op")
			b.ReportMetric(float64(reads), "vpp-reads/op")
			b.ReportMetric(float64(writes)*float64(b.N)/took.Seconds(), "vpp-calls/s")
			b.ReportMetric(heap/float64(sz.services), "vpp-heap-B/service")
		})
	}
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
			a, _, _, _, _ := coldSync(b, n, sz)
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

// BenchmarkRealMappingShape measures what each of NAT44-ED's two mapping
// shapes costs VPP to add, per item, one request at a time over the binary
// API (the round trip included): a plain static mapping (what vppsvc
// renders for a service with one backend) and an LB static mapping with 2
// locals (two or more backends), both out2in-only with self-twice-NAT as
// for a ClusterIP, 10,000 of them, with 2 and with 10 NAT44 outside
// interfaces. It reports the mean µs per add, the mean of the first and
// last thousand (growth with the number of mappings), and the main heap's
// growth per mapping.
func BenchmarkRealMappingShape(b *testing.B) {
	for _, outside := range []int{2, 10} {
		for _, shape := range []string{"static", "lb"} {
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
			call(&nat44_ed.Nat44AddDelLbStaticMapping{IsAdd: true, Flags: flags, ExternalAddr: ip4(ext), ExternalPort: 80,
				Protocol: 6, Tag: fmt.Sprint("default/svc", i), Locals: []nat44_ed.Nat44LbAddrPort{
					{Addr: ip4(offsetAddr(netip.MustParseAddr("10.0.0.0"), 2*i+1)), Port: 80, Probability: 1},
					{Addr: ip4(offsetAddr(netip.MustParseAddr("10.0.0.0"), 2*i+2)), Port: 80, Probability: 1},
				}},
				&nat44_ed.Nat44AddDelLbStaticMappingReply{})
		}
		d := time.Since(start)
		total += d
		if i < chunk {
			first += d
		}
		if i >= mappingShapeCount-chunk {
			last += d
		}
	}
	b.StopTimer()
	heap := heapUsed(b, n) - heap0
	fib, _ := n.CLI("show ip fib summary")
	b.Logf("%s, %d outside interfaces: %d mappings in %s; ip4 FIB after:\n%s", shape, outside, mappingShapeCount, total, fib)
	b.ReportMetric(float64(total.Microseconds())/mappingShapeCount, "µs/add")
	b.ReportMetric(float64(first.Microseconds())/chunk, "µs/add-first1k")
	b.ReportMetric(float64(last.Microseconds())/chunk, "µs/add-last1k")
	b.ReportMetric(heap/mappingShapeCount, "vpp-heap-B/mapping")
}

// offsetAddr is the IPv4 address off addresses after base.
func offsetAddr(base netip.Addr, off int) netip.Addr {
	a := base.As4()
	v := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3]) + uint32(off)
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}
