package labtest

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/vppsvc/vppsvc/e2e/lab/cpumeter"
	"github.com/vppsvc/vppsvc/e2e/lab/host"
	"github.com/vppsvc/vppsvc/e2e/lab/netexec"
	"github.com/vppsvc/vppsvc/e2e/lab/nodeagent"
	"github.com/vppsvc/vppsvc/e2e/lab/topology"
)

// side is one node kind's half of the same-run figures: a server pod on
// one node of the kind and client pods on another, so every path crosses
// two nodes of that kind and the lab's bridge between them, and nothing of
// the other kind.
type side struct {
	name           string // "vppsvc" or "kube-proxy"
	prefix         string // of its pods' and services' names
	client, server topology.Node
	srv            *corev1.Pod
	// Three clients on the client node, one per path (ClusterIP, NodePort,
	// the pod directly): one client on several paths re-uses its source
	// ports across them, and NAT44-ED's entries of closed ClusterIP
	// connections then catch direct SYNs with the same ports.
	viaSvc, viaNodePort, direct *corev1.Pod
	svc                         *corev1.Service
}

// figureSides are the lab's sides: vppsvc on the first two VPP nodes,
// kube-proxy on the first two kernel nodes, each where the lab has two.
func figureSides(nodes []topology.Node) []*side {
	var vpp, kernel []topology.Node
	for _, n := range nodes {
		if n.IsKernel() {
			kernel = append(kernel, n)
		} else {
			vpp = append(vpp, n)
		}
	}
	var out []*side
	if len(vpp) >= 2 {
		out = append(out, &side{name: "vppsvc", prefix: "v", client: vpp[0], server: vpp[1]})
	}
	if len(kernel) >= 2 {
		out = append(out, &side{name: "kube-proxy", prefix: "k", client: kernel[0], server: kernel[1]})
	}
	return out
}

func (s *side) setUp(t *testing.T, ns string) {
	t.Helper()
	s.srv = createPods(t, ns, s.prefix+"-srv", 1, s.server.Name)[0]
	cl := createPods(t, ns, s.prefix+"-cli", 3, s.client.Name)
	s.viaSvc, s.viaNodePort, s.direct = cl[0], cl[1], cl[2]
	svc := &corev1.Service{}
	svc.Name = s.prefix + "-srv"
	svc.Spec = webService("", s.prefix+"-srv").Spec
	svc.Spec.Type = corev1.ServiceTypeNodePort
	svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: "iperf", Port: 5201, TargetPort: intstr.FromInt32(5201), Protocol: corev1.ProtocolTCP})
	s.svc = createService(t, ns, svc)
}

// Addresses of the three paths for family f: the ClusterIP, the server
// node's own address with the NodePort (the client's node forwards it, the
// server's node translates it), the server pod.
func (s *side) clusterIP(f corev1.IPFamily) string { return hostPort(svcIP(s.svc, f), 80) }
func (s *side) nodePort(f corev1.IPFamily) string {
	return hostPort(nodeIP(s.server, f), s.svc.Spec.Ports[0].NodePort)
}
func (s *side) podAddr(f corev1.IPFamily) string { return hostPort(podIP(s.srv, f), httpPort) }

// podNS is the network namespace of a lab pod.
func podNS(p *corev1.Pod) string {
	n := nodeOf(p)
	return theLab.Names.PodNS(n.Index, n.PodSlot(podIP(p, corev1.IPv4Protocol)))
}

// TestFigures measures vppsvc and kube-proxy on the same traffic in one run
// (docs/performance.md "vppsvc and kube-proxy on the same traffic"): on a
// lab with two VPP nodes and two kernel nodes (make lab-figures), each kind
// carries a client pod's traffic to a server pod on another node of its
// kind, and the kinds alternate round by round. Per family: new TCP
// connections per second through a ClusterIP, a NodePort and the pod
// directly; request round trip p50/p99; one stream's throughput; the data
// plane's CPU per connection and per packet; and network programming
// latency over 100 changes per kind. A lab of one kind measures that kind
// alone (the ratios against the pod directly). Run with
// VPPSVC_LAB_FIGURES=1; figures are logged as FIGURE lines, nothing is
// asserted but that they were measured.
func TestFigures(t *testing.T) {
	if os.Getenv("VPPSVC_LAB_FIGURES") == "" {
		t.Skip("figures only with VPPSVC_LAB_FIGURES=1 (make lab-figures)")
	}
	l := needLab(t)
	sides := figureSides(l.Nodes)
	if len(sides) == 0 {
		t.Skipf("the figures need two nodes of one kind (lab: %s)", topology.FormatKinds(l.Opts.Kinds))
	}
	ns := newNamespace(t)
	for _, s := range sides {
		s.setUp(t, ns)
		t.Logf("FIGURE side %s: clients on %s, server on %s; NodePort through %s", s.name, s.client.Name, s.server.Name, s.server.Name)
	}
	t.Logf("FIGURE run start %s, load average %s; VPP I/O %s (vppnode.IO %+v)", time.Now().UTC().Format(time.RFC3339), loadAvg(), l.Opts.IO.Name, l.Opts.IO)
	for _, f := range families {
		for _, s := range sides {
			for _, c := range []struct {
				p    *corev1.Pod
				addr string
			}{{s.viaSvc, s.clusterIP(f)}, {s.viaNodePort, s.nodePort(f)}, {s.direct, s.podAddr(f)}} {
				reachAll(t, fromPod(c.p), netexec.ProtoHTTP, c.addr, []string{s.srv.Name})
			}
		}
		t.Run(famName(f)+"/connections", func(t *testing.T) { connectionFigures(t, sides, f) })
		t.Run(famName(f)+"/rtt", func(t *testing.T) { rttFigures(t, sides, f) })
		t.Run(famName(f)+"/throughput", func(t *testing.T) { throughputFigures(t, sides, f) })
		t.Run(famName(f)+"/cpu", func(t *testing.T) { cpuFigures(t, sides, f) })
		t.Run(famName(f)+"/saturation", func(t *testing.T) { saturationFigures(t, sides, f) })
		t.Run(famName(f)+"/vpp-clocks", func(t *testing.T) { clockFigures(t, sides, f) })
	}
	t.Run("programming-latency", func(t *testing.T) { programmingFigures(t, ns, sides) })
	t.Logf("FIGURE run end %s, load average %s", time.Now().UTC().Format(time.RFC3339), loadAvg())
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// median of xs (sorted in place; a NaN, a round that measured nothing, is
// left out); 0 for none.
func median(xs []float64) float64 {
	xs = slices.DeleteFunc(xs, math.IsNaN)
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	if len(xs)%2 == 1 {
		return xs[len(xs)/2]
	}
	return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
}

func spread(xs []float64) string {
	xs = slices.DeleteFunc(slices.Clone(xs), math.IsNaN)
	if len(xs) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f–%.2f", slices.Min(xs), slices.Max(xs))
}

// perSide collects one figure per side and round.
type perSide map[string][]float64

// ratios are vppsvc's figure over kube-proxy's, round by round.
func (p perSide) ratios() []float64 {
	v, k := p["vppsvc"], p["kube-proxy"]
	var out []float64
	for i := range min(len(v), len(k)) {
		if k[i] != 0 && !math.IsNaN(v[i]) && !math.IsNaN(k[i]) {
			out = append(out, v[i]/k[i])
		}
	}
	return out
}

// report logs each side's median and the median ratio.
func (p perSide) report(t *testing.T, sides []*side, fam, what, unit string) {
	t.Helper()
	var parts []string
	for _, s := range sides {
		parts = append(parts, fmt.Sprintf("%s %.4g %s (%s)", s.name, median(slices.Clone(p[s.name])), unit, spread(p[s.name])))
	}
	line := fmt.Sprintf("FIGURE %s %s: %s", fam, what, strings.Join(parts, ", "))
	if r := p.ratios(); len(r) > 0 {
		line += fmt.Sprintf("; vppsvc/kube-proxy median %.2f (%s, %d rounds)", median(slices.Clone(r)), spread(r), len(r))
	}
	t.Log(line)
}

// rounds are how many times each figure is taken per side, the sides
// alternating within each round.
const rounds = 3

func connectionFigures(t *testing.T, sides []*side, f corev1.IPFamily) {
	svc, np, direct, svcOverDirect := perSide{}, perSide{}, perSide{}, perSide{}
	for round := range rounds {
		for _, s := range sides {
			rate := func(p *corev1.Pod, addr string, d time.Duration) float64 {
				r, err := netexec.ConnRate(context.Background(), fromPod(p), addr, d, netexec.MaxConns)
				if err != nil {
					// Kept out of the figures (and said), not the end of them.
					t.Logf("round %d %s: %v", round, s.name, err)
					return math.NaN()
				}
				if r.Failures > 0 {
					t.Logf("%s %s: %d failures (%v)", s.name, addr, r.Failures, r.Errors)
				}
				return r.PerSecond
			}
			a, b, c := rate(s.viaSvc, s.clusterIP(f), 3*time.Second), rate(s.viaNodePort, s.nodePort(f), 3*time.Second), rate(s.direct, s.podAddr(f), 3*time.Second)
			svc[s.name], np[s.name], direct[s.name] = append(svc[s.name], a), append(np[s.name], b), append(direct[s.name], c)
			svcOverDirect[s.name] = append(svcOverDirect[s.name], a/c)
			t.Logf("round %d %s: ClusterIP %.0f, NodePort %.0f, pod directly %.0f conn/s", round, s.name, a, b, c)
		}
	}
	fam := famName(f)
	svc.report(t, sides, fam, "new TCP connections/s through the ClusterIP", "conn/s")
	np.report(t, sides, fam, "new TCP connections/s through the NodePort", "conn/s")
	direct.report(t, sides, fam, "new TCP connections/s to the pod directly", "conn/s")
	svcOverDirect.report(t, sides, fam, "ClusterIP / pod directly, connections/s", "")
}

func rttFigures(t *testing.T, sides []*side, f corev1.IPFamily) {
	p50, p99, d50, d99 := perSide{}, perSide{}, perSide{}, perSide{}
	for round := range rounds {
		for _, s := range sides {
			r, err := netexec.RTT(context.Background(), fromPod(s.viaSvc), s.clusterIP(f), 1000)
			if err != nil {
				t.Fatal(err)
			}
			d, err := netexec.RTT(context.Background(), fromPod(s.direct), s.podAddr(f), 1000)
			if err != nil {
				t.Fatal(err)
			}
			ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
			p50[s.name], p99[s.name] = append(p50[s.name], ms(r.P50)), append(p99[s.name], ms(r.P99))
			d50[s.name], d99[s.name] = append(d50[s.name], ms(d.P50)), append(d99[s.name], ms(d.P99))
			t.Logf("round %d %s: ClusterIP p50 %s p99 %s; directly p50 %s p99 %s", round, s.name, r.P50, r.P99, d.P50, d.P99)
		}
	}
	fam := famName(f)
	p50.report(t, sides, fam, "request round trip through the ClusterIP, p50", "ms")
	p99.report(t, sides, fam, "request round trip through the ClusterIP, p99", "ms")
	d50.report(t, sides, fam, "request round trip to the pod directly, p50", "ms")
	d99.report(t, sides, fam, "request round trip to the pod directly, p99", "ms")
}

// inNS runs commands inside a network namespace.
func inNS(ns string) netexec.CommandFunc {
	return func(ctx context.Context, name string, args ...string) *exec.Cmd {
		cmd := host.Command(ns, name, args...)
		return exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
	}
}

func throughputFigures(t *testing.T, sides []*side, f corev1.IPFamily) {
	svc, direct := perSide{}, perSide{}
	for round := range 2 {
		for _, s := range sides {
			var got [2]float64
			for i, ip := range []string{svcIP(s.svc, f).String(), podIP(s.srv, f).String()} {
				r, err := netexec.Iperf3(context.Background(), inNS(podNS(s.srv)), inNS(podNS(s.direct)), ip, 5201, 5*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				got[i] = r.ReceivedBitsPerSecond / 1e9
			}
			svc[s.name], direct[s.name] = append(svc[s.name], got[0]), append(direct[s.name], got[1])
			t.Logf("round %d %s: one stream through the ClusterIP %.2f Gbit/s, directly %.2f Gbit/s", round, s.name, got[0], got[1])
		}
	}
	fam := famName(f)
	svc.report(t, sides, fam, "one TCP stream (iperf3, 5 s) through the ClusterIP", "Gbit/s")
	direct.report(t, sides, fam, "one TCP stream (iperf3, 5 s) to the pod directly", "Gbit/s")
}

// vppPIDs are the lab's VPP processes: the data plane of a VPP node.
func vppPIDs(t *testing.T) map[int]bool {
	out := map[int]bool{}
	for _, n := range theLab.Nodes {
		if n.IsKernel() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(nodeagent.Dir(theLab.Opts.StateDir, n.Name), "vpp", "vpp.pid"))
		if err != nil {
			t.Fatalf("VPP of %s: %v", n.Name, err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatalf("VPP of %s: %v", n.Name, err)
		}
		out[pid] = true
	}
	return out
}

// podPID is the pid of a pod's netexec (its container).
func podPID(t *testing.T, p *corev1.Pod) int {
	b, err := os.ReadFile(filepath.Join(nodeagent.Dir(theLab.Opts.StateDir, p.Spec.NodeName), "pods", string(p.UID)+".pid"))
	if err != nil {
		t.Fatalf("pid of %s: %v", p.Name, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("pid of %s: %v", p.Name, err)
	}
	return pid
}

// packets are eth0's received plus sent packets in the namespace ns.
func packets(t *testing.T, ns string) uint64 {
	t.Helper()
	n, err := host.Packets(ns, "eth0")
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// cpuRun is the CPU a bounded piece of work took, three ways: the data
// plane in perf's samples; the whole machine's busy time (/proc/stat); and
// that minus the client's and the server's processes (the test binary,
// which dials, and the server pod's netexec).
type cpuRun struct {
	elapsed              time.Duration
	dataPlane, machine   time.Duration
	residual             time.Duration
	profile              cpumeter.Profile
	bad                  bool    // perf failed: no figure
	count                float64 // connections or packets
	dpPer, machPer, rPer float64 // µs per count, the baseline taken off
}

// measureCPU runs work under perf and /proc/stat and returns what it cost.
func measureCPU(t *testing.T, server *corev1.Pod, vpp map[int]bool, work func()) cpuRun {
	t.Helper()
	procs := func() time.Duration {
		var sum time.Duration
		for _, pid := range []int{os.Getpid(), podPID(t, server)} {
			d, err := cpumeter.ProcessCPU(pid)
			if err != nil {
				t.Fatal(err)
			}
			sum += d
		}
		return sum
	}
	rec, err := cpumeter.StartPerf(os.TempDir(), 499)
	if err != nil {
		t.Fatal(err)
	}
	st0, err := cpumeter.ReadStat()
	if err != nil {
		t.Fatal(err)
	}
	p0 := procs()
	start := time.Now()
	work()
	elapsed := time.Since(start)
	st1, err := cpumeter.ReadStat()
	if err != nil {
		t.Fatal(err)
	}
	p1 := procs()
	prof, err := rec.Stop(vpp)
	if err != nil {
		// A failed recording spoils this figure, not the others.
		t.Logf("perf: %v", err)
		return cpuRun{elapsed: time.Since(start), bad: true}
	}
	d := st1.Sub(st0)
	return cpuRun{elapsed: elapsed, dataPlane: prof.DataPlane(), machine: d.Busy, residual: d.Busy - (p1 - p0), profile: prof}
}

func samples(p cpumeter.Profile) string {
	return fmt.Sprintf("perf samples %d: VPP %d (%d in the kernel), softirq %d, endpoints' TCP %d", p.Samples, p.VPP, p.VPPKernel, p.Softirq, p.EndpointTCP)
}

// perUnit takes the idle baseline's rates off r over r's elapsed time and
// divides by count (in µs). A kube-proxy side's data plane is the kernel's
// network path alone: the VPPs, idle meanwhile, are not on its path.
func (r *cpuRun) perUnit(base cpuRun, count float64, kernel bool) {
	r.count = count
	if r.bad || base.bad {
		r.dpPer, r.machPer, r.rPer = math.NaN(), math.NaN(), math.NaN()
		return
	}
	if kernel {
		r.dataPlane, base.dataPlane = r.profile.SoftirqTime(), base.profile.SoftirqTime()
	}
	scale := float64(r.elapsed) / float64(base.elapsed)
	us := func(d, b time.Duration) float64 { return (float64(d) - scale*float64(b)) / 1e3 / count }
	r.dpPer, r.machPer, r.rPer = us(r.dataPlane, base.dataPlane), us(r.machine, base.machine), us(r.residual, base.residual)
}

// cpuFigures measures the CPU a connection and an established packet take
// on each side: a fixed number of new connections (each one /hostname
// request) through the ClusterIP, then a fixed number of requests over one
// connection, each under perf and /proc/stat, less an idle baseline of the
// lab taken at the start of each round.
func cpuFigures(t *testing.T, sides []*side, f corev1.IPFamily) {
	if _, err := exec.LookPath(cpumeter.PerfPath); err != nil {
		t.Skipf("perf not found: %v", err)
	}
	vpp := vppPIDs(t)
	const conns, requests = 1000, 2000
	connDP, connMach, connRes, pktDP, pktMach, pktRes := perSide{}, perSide{}, perSide{}, perSide{}, perSide{}, perSide{}
	bulkDP, bulkMB := perSide{}, perSide{}
	for round := range rounds {
		base := measureCPU(t, sides[0].srv, vpp, func() { time.Sleep(4 * time.Second) })
		t.Logf("round %d idle baseline over %s: data plane %s, machine %s, residual %s (%s)", round, base.elapsed.Round(time.Millisecond), base.dataPlane, base.machine, base.residual, samples(base.profile))
		for _, s := range sides {
			var made int
			c := measureCPU(t, s.srv, vpp, func() {
				r, err := netexec.ConnRate(context.Background(), fromPod(s.viaSvc), s.clusterIP(f), 30*time.Second, conns)
				if err != nil {
					t.Fatal(err)
				}
				made = r.Conns
			})
			c.perUnit(base, float64(made), s.server.IsKernel())
			ns := podNS(s.viaSvc)
			before := packets(t, ns)
			p := measureCPU(t, s.srv, vpp, func() {
				if _, err := netexec.RTT(context.Background(), fromPod(s.viaSvc), s.clusterIP(f), requests); err != nil {
					t.Fatal(err)
				}
			})
			p.perUnit(base, float64(packets(t, ns)-before), s.server.IsKernel())
			before = packets(t, ns)
			var bits float64
			b := measureCPU(t, s.srv, vpp, func() {
				r, err := netexec.Iperf3(context.Background(), inNS(podNS(s.srv)), inNS(ns), svcIP(s.svc, f).String(), 5201, 3*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				bits = r.ReceivedBitsPerSecond * r.Seconds
			})
			bulkPackets := float64(packets(t, ns) - before)
			b.perUnit(base, bulkPackets, s.server.IsKernel())
			perMB := b.dpPer * bulkPackets / (bits / 8 / 1e6)
			bulkDP[s.name], bulkMB[s.name] = append(bulkDP[s.name], b.dpPer), append(bulkMB[s.name], perMB)
			t.Logf("round %d %s: one stream, %.0f packets (eth0, offloads on), %.0f MB in %s: data plane %.2f µs/packet, %.1f µs/MB (%s); top: %s; the rest's top: %s",
				round, s.name, bulkPackets, bits/8/1e6, b.elapsed.Round(time.Millisecond), b.dpPer, perMB, samples(b.profile), strings.Join(b.profile.TopLeaves(8), ", "), strings.Join(b.profile.TopOther(8), ", "))
			connDP[s.name], connMach[s.name], connRes[s.name] = append(connDP[s.name], c.dpPer), append(connMach[s.name], c.machPer), append(connRes[s.name], c.rPer)
			pktDP[s.name], pktMach[s.name], pktRes[s.name] = append(pktDP[s.name], p.dpPer), append(pktMach[s.name], p.machPer), append(pktRes[s.name], p.rPer)
			t.Logf("round %d %s: %d connections in %s: data plane %.1f µs/conn (%s), machine %.1f, residual %.1f; top: %s",
				round, s.name, made, c.elapsed.Round(time.Millisecond), c.dpPer, samples(c.profile), c.machPer, c.rPer, strings.Join(c.profile.TopLeaves(8), ", "))
			t.Logf("round %d %s: %.0f packets in %s: data plane %.2f µs/packet (%s), machine %.2f, residual %.2f; top: %s",
				round, s.name, p.count, p.elapsed.Round(time.Millisecond), p.dpPer, samples(p.profile), p.machPer, p.rPer, strings.Join(p.profile.TopLeaves(8), ", "))
		}
	}
	fam := famName(f)
	connDP.report(t, sides, fam, "data-plane CPU per new connection through the ClusterIP (perf)", "µs")
	connRes.report(t, sides, fam, "CPU per new connection, machine less client and server processes (/proc)", "µs")
	connMach.report(t, sides, fam, "whole-machine CPU per new connection (/proc/stat)", "µs")
	pktDP.report(t, sides, fam, "data-plane CPU per established packet through the ClusterIP (perf)", "µs")
	pktRes.report(t, sides, fam, "CPU per established packet, machine less client and server processes (/proc)", "µs")
	pktMach.report(t, sides, fam, "whole-machine CPU per established packet (/proc/stat)", "µs")
	bulkDP.report(t, sides, fam, "data-plane CPU per packet of one bulk stream through the ClusterIP (perf; packets as the client's eth0 counts them)", "µs")
	bulkMB.report(t, sides, fam, "data-plane CPU per MB of one bulk stream through the ClusterIP (perf)", "µs")
}
