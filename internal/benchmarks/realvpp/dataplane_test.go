package realvpp

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/vppsvc/vppsvc/fakevpp"
	"github.com/vppsvc/vppsvc/internal/benchmarks"
	rv "github.com/vppsvc/vppsvc/realvpp"
)

// flows is how many distinct TCP connections a per-packet measurement
// opens: each burst is that many packets, one stream.
const flows = 10000

// packetCase is one state of BenchmarkRealPacketCost.
type packetCase struct {
	fam family
	size
	// sessions, when not zero, is the NAT44 renderer's sessionLimit
	// (NAT44-ED's per-thread session table; VPP's default is 64,512).
	sessions uint32
	// toPods sends the flows to pods on the other node directly, not to
	// ClusterIPs: traffic that is no service's, on a node that serves
	// them (what vppsvc costs everything else).
	toPods bool
}

func (c packetCase) String() string {
	s := c.fam.String() + "/" + c.size.String()
	if c.sessions != 0 {
		s += fmt.Sprintf("/sessions=%d", c.sessions)
	}
	if c.toPods {
		s += "/pod-to-pod"
	}
	return s
}

// rounds is how many times each burst is measured; the lowest figure is
// reported (the machine is shared and a burst lasts milliseconds).
const rounds = 3

// BenchmarkRealPacketCost measures the data plane's CPU cost per packet on
// a real VPP: VPP's "show runtime" is cleared, a burst
// of 10,000 packets is sent through the packet generator from a local pod
// (tap9, 10.1.1.9 / fd00:1:1::9) to ClusterIPs, and the clocks of every
// graph node (Clocks × Vectors) are summed and divided by the packets
// sent. Per state:
//
//   - floor: the same bursts before any vppsvc configuration, plain
//     forwarding by the default route;
//   - syn: the first packet of 10,000 distinct TCP connections (SYN),
//     which creates the NAT44-ED or cnat session;
//   - est: the same 10,000 connections again (ACK), their sessions
//     existing.
//
// Each is measured three times (the floor six: SYNs and ACKs; syn and est
// in three rounds of 10,000 new connections each, other source ports) and
// the lowest reported (noise on a shared machine only adds clocks), for the whole graph (…-clk/pkt) and without the
// packet generator's own nodes, pg-input and the pg interfaces' output
// (…-clk/pkt-graph); the ratios to the floor are syn-x-floor and
// est-x-floor (whole graph). The connections spread over the services:
// flow k goes to service k mod S for S ≤ 10,000 and to service k·S/10,000
// above. Endpoints are on node-2, reached through uplink0. The pod-to-pod
// cases send the same flows to 10,000 pods of node-2 (remotePod) instead,
// with the services programmed: what vppsvc costs traffic that is no
// service's. -v logs each burst's per-node table.
func BenchmarkRealPacketCost(b *testing.B) {
	for _, c := range []packetCase{
		{fam: ipv4, size: size{services: 10, endpoints: 10}}, {fam: ipv4, size: size{services: 5000, endpoints: 10}}, {fam: ipv4, size: size{services: 50000, endpoints: 1}},
		{fam: ipv4, size: size{services: 50000, endpoints: 1}, sessions: 262144},
		{fam: ipv6, size: size{services: 10, endpoints: 10}},
		{fam: ipv4, size: size{services: 5000, endpoints: 10}, toPods: true},
		{fam: ipv6, size: size{services: 5000, endpoints: 10}, toPods: true},
		{fam: cnat4, size: size{services: 10, endpoints: 10}}, {fam: cnat4, size: size{services: 5000, endpoints: 10}},
		{fam: cnat4, size: size{services: 5000, endpoints: 10}, toPods: true},
	} {
		b.Run(c.String(), func(b *testing.B) {
			skipLarge(b, c.services)
			var r packetResult
			for i := 0; i < b.N; i++ {
				n := openNode(b)
				buildNode(b, n, true)
				r = measurePackets(b, n, c)
			}
			b.ReportMetric(r.floor.all, "floor-clk/pkt")
			b.ReportMetric(r.floor.graph, "floor-clk/pkt-graph")
			b.ReportMetric(r.syn.all, "syn-clk/pkt")
			b.ReportMetric(r.syn.graph, "syn-clk/pkt-graph")
			b.ReportMetric(r.est.all, "est-clk/pkt")
			b.ReportMetric(r.est.graph, "est-clk/pkt-graph")
			b.ReportMetric(r.syn.all/r.floor.all, "syn-x-floor")
			b.ReportMetric(r.est.all/r.floor.all, "est-x-floor")
		})
	}
}

// cost is one burst's clocks per packet: over every node, and without the
// packet generator's nodes.
type cost struct{ all, graph float64 }

type packetResult struct{ floor, syn, est cost }

// least returns the lowest of each figure of cs: on a shared machine
// noise only adds clocks (VPP's thread preempted inside a node counts the
// time away in that node's clocks).
func least(cs []cost) cost {
	l := cs[0]
	for _, c := range cs[1:] {
		l.all, l.graph = min(l.all, c.all), min(l.graph, c.graph)
	}
	return l
}

func measurePackets(b *testing.B, n *rv.Node, c packetCase) packetResult {
	b.Helper()
	var floor, syns, ests []cost
	for round := range rounds {
		syn, ack := flowPackets(c, round)
		floor = append(floor, burst(b, n, "floor syn", syn), burst(b, n, "floor ack", ack))
	}
	a := startAgent(b, n, c.fam, c.sessions, "uplink0", "host0")
	defer a.stop()
	snap := snapshot(c.services, c.endpoints, true, true)
	if c.fam == ipv6 {
		snap.Services, snap.EndpointSlices = ipv6Cluster(c.services, c.endpoints)
	}
	a.Processor.Resync(snap)
	a.converge(b)
	syn, _ := flowPackets(c, 0)
	// The state is programmed: a connection to the first flow's service
	// (another source port) must reach an endpoint, not the ClusterIP
	// itself, and its reply come back from the ClusterIP; one to a pod
	// must leave untranslated.
	probe := syn[0]
	probe.Src = netip.AddrPortFrom(probe.Src.Addr(), 65000)
	tr := n.Trace(probe)
	translated := tr.Out.Dst.Addr() != probe.Dst.Addr()
	if tr.Verdict != fakevpp.Forward || translated == c.toPods || !tr.ReplyOK {
		b.Fatalf("%s → %s: %s to %s (%s), reply ok %t\n  %s", probe.Src, probe.Dst, tr.Verdict, tr.Out.Dst, tr.Reason, tr.ReplyOK, strings.Join(tr.Steps, "\n  "))
	}
	b.Logf("probe %s → %s: to %s via %s\n  %s", probe.Src, probe.Dst, tr.Out.Dst, tr.Egress, strings.Join(tr.Steps, "\n  "))
	for round := range rounds {
		syn, ack := flowPackets(c, round)
		syns = append(syns, burst(b, n, "first packets (SYN)", syn))
		if out, err := n.CLI(sessionsCommand(c.fam)); err == nil {
			b.Logf("after the SYN burst, %s:\n%s", sessionsCommand(c.fam), firstLines(out, 8))
		}
		ests = append(ests, burst(b, n, "established (ACK)", ack))
	}
	b.Logf("clocks/packet of each burst (all nodes, without the packet generator): floor %v, syn %v, est %v", floor, syns, ests)
	return packetResult{floor: least(floor), syn: least(syns), est: least(ests)}
}

func sessionsCommand(f family) string {
	if f != ipv4 {
		return "show cnat session verbose 0"
	}
	return "show nat44 summary"
}

// flowPackets returns the SYN and the ACK of each of the flows from the
// local pod, for round (source ports differ per round).
func flowPackets(c packetCase, round int) (syn, ack []fakevpp.Packet) {
	src := podIP
	if c.fam == ipv6 {
		src = podIP6
	}
	base := 1024 + (round%6)*flows
	for k := range flows {
		svc := k % c.services
		if c.services > flows {
			svc = k * c.services / flows
		}
		dst := netip.MustParseAddr(benchmarks.Service(svc).Spec.ClusterIP)
		if c.fam == ipv6 {
			dst = ipv6ClusterIP(svc)
		}
		if c.toPods {
			dst = remotePod(c.fam, k)
		}
		p := fakevpp.Packet{Ingress: podIface, Protocol: 6,
			Src: netip.AddrPortFrom(src, uint16(base+k)), Dst: netip.AddrPortFrom(dst, 80), TCPFlags: 0x02}
		syn = append(syn, p)
		p.TCPFlags = 0x10
		ack = append(ack, p)
	}
	return syn, ack
}

// remotePod is the k-th pod of node-2 (10.2.0.0/16, fd00:2::/64), routed
// through uplink0 by the default route.
func remotePod(f family, k int) netip.Addr {
	if f == ipv6 {
		return netip.AddrFrom16([16]byte{0xfd, 0, 0, 2, 14: byte(k >> 8), 15: byte(k)})
	}
	return netip.AddrFrom4([4]byte{10, 2, byte(k >> 8), byte(k)})
}

// pgTxNodes are the pg interfaces' transmit nodes: what left VPP.
var pgTxNodes = []string{"uplink0-tx", "host0-tx", podIface + "-tx"}

// pgNode tells the packet generator's own nodes: pg-input, and the pg
// interfaces' output and tx nodes (named after the interfaces).
func pgNode(name string) bool {
	if name == "pg-input" {
		return true
	}
	for _, ifc := range []string{"uplink0", "host0", podIface} {
		if strings.HasPrefix(name, ifc+"-") {
			return true
		}
	}
	return false
}

// burst clears VPP's runtime statistics, sends pkts as one stream and
// returns the clocks per packet. It fails the benchmark when packets were
// dropped or did not all leave by an interface.
func burst(b *testing.B, n *rv.Node, what string, pkts []fakevpp.Packet) cost {
	b.Helper()
	if err := n.ClearRuntime(); err != nil {
		b.Fatal(err)
	}
	if err := n.SendBurst(pkts); err != nil {
		b.Fatal(err)
	}
	rt, err := n.Runtime()
	if err != nil {
		b.Fatal(err)
	}
	// Nodes that saw under 1 % of the burst's packets handled VPP's own
	// traffic meanwhile (IPv6 router advertisements, MLD reports): not
	// the burst's cost.
	background := func(name string) bool {
		i := slices.IndexFunc(rt, func(r rv.RuntimeNode) bool { return r.Name == name })
		return rt[i].Vectors < uint64(len(pkts)/100)
	}
	c := cost{all: rv.ClocksPerPacket(rt, len(pkts), background),
		graph: rv.ClocksPerPacket(rt, len(pkts), func(name string) bool { return background(name) || pgNode(name) })}
	var tx, drops uint64
	var lines []string
	slices.SortFunc(rt, func(x, y rv.RuntimeNode) int { return int(y.TotalClocks() - x.TotalClocks()) })
	for _, r := range rt {
		if r.Vectors == 0 {
			continue
		}
		if slices.Contains(pgTxNodes, r.Name) && !background(r.Name) {
			tx += r.Vectors
		}
		if (r.Name == "error-drop" || r.Name == "drop") && !background(r.Name) {
			drops += r.Vectors
		}
		lines = append(lines, fmt.Sprintf("  %-32s vectors %6d  vectors/call %6.1f  clocks/vector %8.1f  clocks/packet %7.1f",
			r.Name, r.Vectors, r.VectorsPerCall, r.Clocks, r.TotalClocks()/float64(len(pkts))))
	}
	b.Logf("%s: %d packets, %.0f clocks/packet (%.0f without the packet generator), %d sent out, %d dropped\n%s",
		what, len(pkts), c.all, c.graph, tx, drops, strings.Join(lines, "\n"))
	// Every packet must leave, none twice; VPP's own traffic leaving by the
	// same interfaces meanwhile (an IPv6 router advertisement or neighbor
	// solicitation on uplink0) adds a packet or two, at most the 1 % above
	// which a node counts as the burst's.
	if drops != 0 || tx < uint64(len(pkts)) || tx > uint64(len(pkts)+len(pkts)/100) {
		errs, _ := n.CLI("show errors")
		b.Fatalf("%s: %d of %d packets sent out, %d dropped:\n%s", what, tx, len(pkts), drops, errs)
	}
	return c
}

func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append(lines[:n], "…")
	}
	return strings.Join(lines, "\n")
}
