// Package cpumeter measures where CPU goes while the lab's figures run, the
// same way on a VPP node and a kube-proxy node: the machine's busy time from
// /proc/stat, a process's from /proc/<pid>/stat, and perf's samples of every
// CPU with their kernel call chains, sorted into the data plane (a VPP
// process, or the kernel's network receive path: softirq forwarding, bridge,
// netfilter, conntrack, veth, af_packet) and the rest (the endpoints' TCP and
// sockets, the client and server processes, everything else).
package cpumeter

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTick is USER_HZ, the unit of /proc/stat and /proc/<pid>/stat (100 on
// every Linux architecture the lab runs on).
const clockTick = 100

// Stat is the machine's CPU time from /proc/stat, summed over all CPUs.
type Stat struct {
	// Busy is user+nice+system+irq+softirq+steal.
	Busy time.Duration
	// Softirq is softirq+irq alone.
	Softirq time.Duration
}

// Sub is s minus o.
func (s Stat) Sub(o Stat) Stat { return Stat{Busy: s.Busy - o.Busy, Softirq: s.Softirq - o.Softirq} }

// ReadStat reads /proc/stat.
func ReadStat() (Stat, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return Stat{}, err
	}
	return parseStat(b)
}

func parseStat(b []byte) (Stat, error) {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 9 || f[0] != "cpu" {
		return Stat{}, fmt.Errorf("/proc/stat: first line %q is not the cpu total", line)
	}
	var v [8]int64 // user nice system idle iowait irq softirq steal
	for i := range v {
		n, err := strconv.ParseInt(f[i+1], 10, 64)
		if err != nil {
			return Stat{}, fmt.Errorf("/proc/stat: field %d: %w", i+1, err)
		}
		v[i] = n
	}
	ticks := func(n int64) time.Duration { return time.Duration(n) * time.Second / clockTick }
	return Stat{
		Busy:    ticks(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]),
		Softirq: ticks(v[5] + v[6]),
	}, nil
}

// ProcessCPU is process pid's user+system time (all its threads), from
// /proc/<pid>/stat.
func ProcessCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	return parseProcessCPU(b)
}

func parseProcessCPU(b []byte) (time.Duration, error) {
	// The command name (field 2) is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("/proc/<pid>/stat without a command name")
	}
	f := strings.Fields(string(b[i+1:]))
	// After the name: state(3) ... utime(14) stime(15), i.e. f[11], f[12].
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/<pid>/stat: %d fields after the name", len(f))
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("/proc/<pid>/stat: %w", err)
	}
	return time.Duration(u+s) * time.Second / clockTick, nil
}

// Profile is perf's samples of every CPU, sorted. Each sample stands for
// 1/Freq of one CPU.
type Profile struct {
	Freq int
	// Samples is every sample, idle included.
	Samples int
	// VPP are samples in a data-plane process (VPP), outside the endpoints'
	// TCP; Softirq are the other samples in the kernel's network receive
	// path, outside the endpoints' TCP.
	VPP, Softirq int
	// EndpointTCP are samples in the kernel's TCP input (tcp_v4_rcv,
	// tcp_v6_rcv): the client's and server's own TCP, which both kinds of
	// node run the same way.
	EndpointTCP int
	// Idle are samples of the idle task outside any network path.
	Idle int
	// VPPKernel are the VPP samples whose leaf is in the kernel (its
	// system calls, and the veth and af_packet work they do).
	VPPKernel int
	// Leaves count the data plane's samples by leaf function, "vpp " or
	// "softirq " before it: where its time goes.
	Leaves map[string]int
	// OtherLeaves count the samples outside the data plane, the endpoints'
	// TCP and idle by leaf function (what the rest of the machine did).
	OtherLeaves map[string]int
}

// TopLeaves are the n leaf functions with the most data-plane samples,
// formatted "name share%".
func (p Profile) TopLeaves(n int) []string { return top(p.Leaves, n) }

// TopOther are the n leaf functions with the most samples of the rest.
func (p Profile) TopOther(n int) []string { return top(p.OtherLeaves, n) }

func top(leaves map[string]int, n int) []string {
	type kv struct {
		k string
		v int
	}
	var all []kv
	total := 0
	for k, v := range leaves {
		all = append(all, kv{k, v})
		total += v
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v > all[j].v || all[i].v == all[j].v && all[i].k < all[j].k })
	var out []string
	for i := 0; i < n && i < len(all); i++ {
		out = append(out, fmt.Sprintf("%s %.0f%%", all[i].k, 100*float64(all[i].v)/float64(total)))
	}
	return out
}

// DataPlane is the CPU time of the data plane's samples.
func (p Profile) DataPlane() time.Duration { return p.dur(p.VPP + p.Softirq) }

// SoftirqTime is the CPU time of the kernel's network path alone (the data
// plane of a node without VPP).
func (p Profile) SoftirqTime() time.Duration { return p.dur(p.Softirq) }

// Busy is the CPU time of every sample but the idle ones.
func (p Profile) Busy() time.Duration { return p.dur(p.Samples - p.Idle) }

func (p Profile) dur(n int) time.Duration {
	if p.Freq <= 0 {
		return 0
	}
	return time.Duration(n) * time.Second / time.Duration(p.Freq)
}

// sampleHeader reads a perf script sample's header line: its first field
// is pid/tid.
func sampleHeader(line string) (pid int, ok bool) {
	f := strings.Fields(line)
	if len(f) == 0 {
		return 0, false
	}
	p, t, found := strings.Cut(f[0], "/")
	if !found {
		return 0, false
	}
	n, err := strconv.Atoi(p)
	if _, terr := strconv.Atoi(t); err != nil || terr != nil {
		return 0, false
	}
	return n, true
}

// netPath are kernel functions that only run on the network receive path
// (softirq or the backlog a veth transmit fills); tcpInput those of the
// endpoints' TCP. A call chain is matched by exact function name.
var (
	netPath  = map[string]bool{"net_rx_action": true, "process_backlog": true, "__netif_receive_skb": true, "__netif_receive_skb_core": true, "__netif_receive_skb_one_core": true, "netif_receive_skb": true, "__napi_poll": true, "net_tx_action": true}
	tcpInput = map[string]bool{"tcp_v4_rcv": true, "tcp_v6_rcv": true}
)

// Classify reads `perf script -F pid,tid,ip,sym` output: a sample is a
// "pid/tid" line followed by its call chain, one frame a line, and a blank
// line. dataPlane are the data plane's processes (the VPPs).
func Classify(r io.Reader, freq int, dataPlane map[int]bool) (Profile, error) {
	p := Profile{Freq: freq, Leaves: map[string]int{}, OtherLeaves: map[string]int{}}
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 64*1024), 1024*1024)
	var (
		in           bool
		pid          int
		onNet, inTCP bool
		leaf         string
		leafKernel   bool
	)
	flush := func() {
		if !in {
			return
		}
		p.Samples++
		switch {
		case inTCP:
			p.EndpointTCP++
		case dataPlane[pid]:
			p.VPP++
			p.Leaves["vpp "+leaf]++
			if leafKernel {
				p.VPPKernel++
			}
		case onNet:
			p.Softirq++
			p.Leaves["softirq "+leaf]++
		case pid == 0:
			p.Idle++
		default:
			p.OtherLeaves[leaf]++
		}
		in, onNet, inTCP, leaf, leafKernel = false, false, false, "", false
	}
	for s.Scan() {
		line := s.Text()
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		// A sample's header is "pid/tid", the pid right-aligned in five
		// columns ("    0/0", "  77/77", "22727/22727"); its frames are an
		// address and a symbol, indented by a tab.
		if n, ok := sampleHeader(line); ok {
			flush()
			in, pid = true, n
			continue
		}
		if line[0] != ' ' && line[0] != '\t' {
			flush() // not a sample header: skipped with its frames
			continue
		}
		if !in {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		sym, _, _ := strings.Cut(f[1], "+")
		if leaf == "" {
			leaf = sym
			leafKernel = strings.HasPrefix(f[0], "ffff")
		}
		if netPath[sym] {
			onNet = true
		}
		if tcpInput[sym] {
			inTCP = true
		}
	}
	flush()
	if err := s.Err(); err != nil {
		return p, err
	}
	if p.Samples == 0 {
		return p, errors.New("perf script: no samples")
	}
	return p, nil
}

// PerfPath is the perf the meter runs.
var PerfPath = "perf"

// MaxPerfRun bounds one recording.
const MaxPerfRun = 2 * time.Minute

// Recording is a running `perf record` of every CPU.
type Recording struct {
	cmd     *exec.Cmd
	out     string
	freq    int
	done    chan error
	cancel  context.CancelFunc
	stderr  bytes.Buffer
	dir     string
	enabled time.Time
}

// waitEvents waits until perf holds at least one perf event per CPU and
// their number has not changed for 200 ms.
func (r *Recording) waitEvents(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	fdDir := fmt.Sprintf("/proc/%d/fd", r.cmd.Process.Pid)
	last, since := -1, time.Now()
	for time.Now().Before(deadline) {
		n := 0
		ents, err := os.ReadDir(fdDir)
		if err != nil {
			return fmt.Errorf("perf record: %w (%s)", err, strings.TrimSpace(r.stderr.String()))
		}
		for _, e := range ents {
			if l, err := os.Readlink(filepath.Join(fdDir, e.Name())); err == nil && strings.Contains(l, "perf_event") {
				n++
			}
		}
		if n != last {
			last, since = n, time.Now()
		} else if n >= runtime.NumCPU() && time.Since(since) >= 200*time.Millisecond {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("perf record: %d perf events open after %s, want one per CPU (%d)", last, timeout, runtime.NumCPU())
}

// StartPerf starts sampling every CPU freq times a second with call chains
// into a file in dir, and returns once perf has its events open on every
// CPU and has had a second to read the processes' maps. It ends by itself
// after MaxPerfRun.
func StartPerf(dir string, freq int) (*Recording, error) {
	if freq < 1 || freq > 4000 {
		return nil, fmt.Errorf("cpumeter: perf frequency %d, want 1..4000", freq)
	}
	tmp, err := os.MkdirTemp(dir, "perf-")
	if err != nil {
		return nil, err
	}
	r := &Recording{out: filepath.Join(tmp, "perf.data"), freq: freq, done: make(chan error, 1), dir: tmp}
	ctx, cancel := context.WithTimeout(context.Background(), MaxPerfRun)
	r.cancel = cancel
	r.cmd = exec.CommandContext(ctx, PerfPath, "record", "-a", "-g", "-F", strconv.Itoa(freq), "-o", r.out, "--quiet")
	r.cmd.Stderr = &r.stderr
	r.cmd.Cancel = func() error { return r.cmd.Process.Signal(syscall.SIGINT) }
	r.cmd.WaitDelay = 10 * time.Second
	// A system-wide perf outlives a killed meter and keeps sampling every
	// CPU, spoiling the next run's figures: the kernel ends it with the
	// meter. (The signal follows the thread that started perf; Go keeps its
	// threads, so in practice that is the process.)
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := r.cmd.Start(); err != nil {
		cancel()
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("perf record: %w", err)
	}
	go func() { r.done <- r.cmd.Wait() }()
	if err := r.waitEvents(30 * time.Second); err != nil {
		_, _ = r.Stop(nil)
		return nil, err
	}
	time.Sleep(time.Second)
	r.enabled = time.Now()
	return r, nil
}

// Stop ends the recording and sorts its samples.
func (r *Recording) Stop(dataPlane map[int]bool) (Profile, error) {
	defer os.RemoveAll(r.dir)
	window := time.Since(r.enabled)
	_ = r.cmd.Process.Signal(syscall.SIGINT)
	var err error
	select {
	case err = <-r.done:
	case <-time.After(20 * time.Second):
		_ = r.cmd.Process.Kill()
		err = <-r.done
	}
	r.cancel()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() <= 0) {
		// perf ends with SIGINT's status or 0; anything else failed.
		if _, serr := os.Stat(r.out); serr != nil {
			return Profile{}, fmt.Errorf("perf record: %w (%s)", err, strings.TrimSpace(r.stderr.String()))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	script := exec.CommandContext(ctx, PerfPath, "script", "-i", r.out, "-F", "pid,tid,ip,sym")
	out, err := script.StdoutPipe()
	if err != nil {
		return Profile{}, err
	}
	if err := script.Start(); err != nil {
		return Profile{}, fmt.Errorf("perf script: %w", err)
	}
	p, cerr := Classify(out, r.freq, dataPlane)
	_, _ = io.Copy(io.Discard, out)
	if err := script.Wait(); err != nil {
		return p, fmt.Errorf("perf script: %w", err)
	}
	if cerr != nil {
		return p, cerr
	}
	// A CPU that idles takes no cpu-clock samples on this VM (its tickless
	// idle stops the timer), so fewer samples than freq × CPUs × window
	// mean idle time, not a loss: the recording is refused only when perf
	// says it lost samples (its ring overran), which biases every share.
	records, lost, err := lostSamples(ctx, r.out)
	if err != nil {
		return p, err
	}
	if records > 0 || lost > p.Samples/20 {
		return p, fmt.Errorf("perf lost samples (%d LOST records, %d lost samples) beside the %d it kept in %s: part of the window is missing",
			records, lost, p.Samples, window.Round(time.Millisecond))
	}
	if p.Samples == 0 {
		return p, errors.New("perf took no sample")
	}
	return p, nil
}

// lostSamples is what perf's own statistics of the recording out count
// as lost: LOST records (each stands for samples the ring had no room for)
// and LOST_SAMPLES events.
func lostSamples(ctx context.Context, out string) (records, samples int, err error) {
	b, err := exec.CommandContext(ctx, PerfPath, "report", "-i", out, "--stats").Output()
	if err != nil {
		return 0, 0, fmt.Errorf("perf report --stats: %w", err)
	}
	records, samples = parseLost(b)
	return records, samples, nil
}

// parseLost reads perf report --stats' "LOST events:  3" and
// "LOST_SAMPLES events:  120" lines (absent when nothing was lost).
func parseLost(stats []byte) (records, samples int) {
	for _, line := range strings.Split(string(stats), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || f[1] != "events:" {
			continue
		}
		v, err := strconv.Atoi(f[2])
		if err != nil {
			continue
		}
		switch f[0] {
		case "LOST":
			records += v
		case "LOST_SAMPLES":
			samples += v
		}
	}
	return records, samples
}
