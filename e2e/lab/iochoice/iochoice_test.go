package iochoice

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/vppsvc/vppsvc/e2e/lab/cpumeter"
	"github.com/vppsvc/vppsvc/e2e/lab/host"
	"github.com/vppsvc/vppsvc/e2e/lab/netexec"
	"github.com/vppsvc/vppsvc/e2e/lab/vppnode"
)

// prefix starts every name this test creates; stateDir holds its records.
const (
	prefix   = "vsio"
	stateDir = "/run/vppsvc-iochoice"
	rounds   = 3
)

// mode is one setting measured: a path, and for VPP the rx-mode its
// interfaces are put in for the round (the polling setting shares the V2
// path: only one VPP polls at a time, and never while the others are
// measured).
type mode struct {
	name string
	p    *path
	poll bool
}

// TestIOChoices measures each VPP I/O setting and a kernel router on the
// same traffic, the settings alternating round by round: request round
// trip over one TCP connection (p50, p99), new connections per second one
// at a time, one TCP stream's throughput, and the data plane's CPU per
// connection and per established packet (perf: VPP's process, or the
// kernel's network path, less an idle baseline). One VPP, one thread, as
// in the lab; figures are logged as FIGURE lines.
func TestIOChoices(t *testing.T) {
	if os.Getenv("VPPSVC_LAB_IO_FIGURES") == "" {
		t.Skip("I/O figures only with VPPSVC_LAB_IO_FIGURES=1 (make lab-io)")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root (network namespaces, veths)")
	}
	bin := os.Getenv(vppnode.EnvBinary)
	if bin == "" {
		t.Skipf("needs %s, a VPP 25.10 bin/vpp", vppnode.EnvBinary)
	}
	for _, tool := range []string{cpumeter.PerfPath, netexec.Iperf3Path} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found: %v", tool, err)
		}
	}
	ctx := context.Background()
	log := logrus.New()
	log.SetLevel(logrus.WarnLevel)
	l, err := host.New(host.Options{Prefix: prefix, StateDir: stateDir, Log: log})
	must(t, err)
	clean := func() {
		if removed, err := l.Cleanup(); err != nil || len(removed) > 0 {
			t.Logf("cleanup removed %d objects (%v)", len(removed), err)
		}
	}
	clean()
	vpp, err := vppnode.New(vppnode.Options{Binary: bin, Dir: filepath.Join(stateDir, "vpp"), Log: log})
	must(t, err)
	_ = vpp.Kill() // one a killed run left
	must(t, vpp.Start(ctx))
	t.Cleanup(func() {
		if err := vpp.Kill(); err != nil {
			t.Error(err)
		}
		clean()
	})
	vc, err := vppnode.Connect(ctx, vpp.APISocket())
	must(t, err)
	t.Cleanup(vc.Close)
	vppPID, ok := vpp.Running()
	if !ok {
		t.Fatal("VPP is not running")
	}

	kernel := kernelPath(t, l, 0)
	v3 := vppPath(ctx, t, l, vc, 1, vppnode.IOv3)
	v2 := vppPath(ctx, t, l, vc, 2, vppnode.IOv2)
	modes := []mode{{name: "kernel", p: kernel}, {name: "v3", p: v3}, {name: "v2", p: v2}, {name: "v2-poll", p: v2, poll: true}}
	for _, p := range []*path{kernel, v3, v2} {
		p.serve(t)
		if err := netexec.WaitReady(ctx, p.dial, p.addr(), 100*time.Millisecond, 100); err != nil {
			t.Fatalf("%s: server unreachable: %v", p.name, err)
		}
	}
	setPolling := func(m mode, on bool) {
		if !m.poll {
			return
		}
		for _, a := range m.p.vppIfs {
			a.IO.Polling = on
			if _, err := vc.EnsureAfPacket(ctx, a); err != nil {
				t.Fatal(err)
			}
		}
	}

	figs := map[string]map[string][]float64{} // figure → mode → rounds
	add := func(fig, mode string, v float64) {
		if figs[fig] == nil {
			figs[fig] = map[string][]float64{}
		}
		figs[fig][mode] = append(figs[fig][mode], v)
	}
	t.Logf("FIGURE run start %s, load average %s", time.Now().UTC().Format(time.RFC3339), loadAvg())
	for round := range rounds {
		base := measure(t, vppPID, func() { time.Sleep(3 * time.Second) })
		for _, m := range modes {
			setPolling(m, true)
			rtt, err := netexec.RTT(ctx, m.p.dial, m.p.addr(), 1000)
			must(t, err)
			add("round trip p50 (µs)", m.name, float64(rtt.P50.Microseconds()))
			add("round trip p99 (µs)", m.name, float64(rtt.P99.Microseconds()))
			cr, err := netexec.ConnRate(ctx, m.p.dial, m.p.addr(), 2*time.Second, netexec.MaxConns)
			must(t, err)
			add("new connections/s, one at a time", m.name, cr.PerSecond)
			ip, err := netexec.Iperf3(ctx, inNS(m.p.serverNS), inNS(m.p.clientNS), m.p.serverIP.String(), 5201, 3*time.Second)
			must(t, err)
			add("one TCP stream (Gbit/s)", m.name, ip.ReceivedBitsPerSecond/1e9)

			var conns int
			c := measure(t, vppPID, func() {
				r, err := netexec.ConnRate(ctx, m.p.dial, m.p.addr(), 30*time.Second, 500)
				must(t, err)
				conns = r.Conns
			})
			before := packets(t, m.p.clientNS)
			p := measure(t, vppPID, func() {
				_, err := netexec.RTT(ctx, m.p.dial, m.p.addr(), 2000)
				must(t, err)
			})
			pkts := packets(t, m.p.clientNS) - before
			setPolling(m, false)
			if c.bad || p.bad || base.bad {
				t.Logf("round %d %s: perf recording refused, no CPU figure", round, m.name)
			} else {
				add("data-plane CPU per new connection (µs)", m.name, c.per(base, float64(conns), m.p.kernel))
				add("data-plane CPU per established packet (µs)", m.name, p.per(base, float64(pkts), m.p.kernel))
			}
			t.Logf("round %d %s: rtt p50 %s p99 %s; %0.f conn/s; stream %.2f Gbit/s; CPU top: %s",
				round, m.name, rtt.P50, rtt.P99, cr.PerSecond, ip.ReceivedBitsPerSecond/1e9, strings.Join(p.prof.TopLeaves(6), ", "))
		}
	}
	t.Logf("FIGURE run end %s, load average %s", time.Now().UTC().Format(time.RFC3339), loadAvg())
	for _, fig := range slices.Sorted(maps.Keys(figs)) {
		var b strings.Builder
		k := median(figs[fig]["kernel"])
		for _, m := range modes {
			v := median(figs[fig][m.name])
			fmt.Fprintf(&b, " | %s %.3g", m.name, v)
			if m.name != "kernel" && k != 0 {
				fmt.Fprintf(&b, " (%.2f× kernel)", v/k)
			}
		}
		t.Logf("FIGURE %s, median of %d rounds:%s", fig, rounds, b.String())
	}
}

// cpuRun is the data plane's CPU over a bounded piece of work.
type cpuRun struct {
	elapsed time.Duration
	prof    cpumeter.Profile
	bad     bool
}

// measure runs work under perf (every CPU, 499 Hz) and returns the data
// plane's share: VPP's process and the kernel's network path.
func measure(t *testing.T, vppPID int, work func()) cpuRun {
	t.Helper()
	rec, err := cpumeter.StartPerf(os.TempDir(), 499)
	must(t, err)
	start := time.Now()
	work()
	elapsed := time.Since(start)
	prof, err := rec.Stop(map[int]bool{vppPID: true})
	if err != nil {
		t.Logf("perf: %v", err)
		return cpuRun{elapsed: elapsed, bad: true}
	}
	return cpuRun{elapsed: elapsed, prof: prof}
}

// per is r's data-plane CPU per count in µs, the idle baseline scaled to
// r's length taken off. A kernel router's data plane is the kernel's
// network path alone: the idle VPP is not on its path.
func (r cpuRun) per(base cpuRun, count float64, kernel bool) float64 {
	dp, bdp := r.prof.DataPlane(), base.prof.DataPlane()
	if kernel {
		dp, bdp = r.prof.SoftirqTime(), base.prof.SoftirqTime()
	}
	scale := float64(r.elapsed) / float64(base.elapsed)
	return (float64(dp) - scale*float64(bdp)) / 1e3 / count
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

func loadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
