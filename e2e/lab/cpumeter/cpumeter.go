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
}

// TopLeaves are the n leaf functions with the most data-plane samples,
// formatted "name share%".
func (p Profile) TopLeaves(n int) []string {
	type kv struct {
		k string
		v int
	}
	var all []kv
	total := 0
	for k, v := range p.Leaves {
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

// Busy is the CPU time of every sample but the idle ones.
func (p Profile) Busy() time.Duration { return p.dur(p.Samples - p.Idle) }

func (p Profile) dur(n int) time.Duration {
	if p.Freq <= 0 {
		return 0
	}
	return time.Duration(n) * time.Second / time.Duration(p.Freq)
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
	p := Profile{Freq: freq, Leaves: map[string]int{}}
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
		}
		in, onNet, inTCP, leaf, leafKernel = false, false, false, "", false
	}
	for s.Scan() {
		line := s.Text()
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		if line[0] != ' ' && line[0] != '\t' {
			flush()
			head := strings.Fields(line)
			pidStr, _, _ := strings.Cut(head[0], "/")
			n, err := strconv.Atoi(pidStr)
			if err != nil {
				continue // not a sample header: skipped
			}
			in, pid = true, n
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
	cmd      *exec.Cmd
	out      string
	freq     int
	done     chan error
	cancel   context.CancelFunc
	stderr   bytes.Buffer
	ctl, ack *os.File
	dir      string
}

// StartPerf starts sampling every CPU freq times a second with call chains
// into a file in dir, and returns once the samples are being taken: perf
// starts with its events off and turns them on when told on its control
// FIFO, so its own start (which reads every process's maps, seconds on a
// busy machine) is not in the window. It ends by itself after MaxPerfRun.
func StartPerf(dir string, freq int) (*Recording, error) {
	if freq < 1 || freq > 4000 {
		return nil, fmt.Errorf("cpumeter: perf frequency %d, want 1..4000", freq)
	}
	tmp, err := os.MkdirTemp(dir, "perf-")
	if err != nil {
		return nil, err
	}
	r := &Recording{out: filepath.Join(tmp, "perf.data"), freq: freq, done: make(chan error, 1), dir: tmp}
	ctlPath, ackPath := filepath.Join(tmp, "ctl"), filepath.Join(tmp, "ack")
	for _, p := range []string{ctlPath, ackPath} {
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			os.RemoveAll(tmp)
			return nil, err
		}
	}
	// Read-write opens of a FIFO do not wait for the other end.
	if r.ctl, err = os.OpenFile(ctlPath, os.O_RDWR, 0); err == nil {
		r.ack, err = os.OpenFile(ackPath, os.O_RDWR, 0)
	}
	if err != nil {
		r.cleanup()
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), MaxPerfRun)
	r.cancel = cancel
	r.cmd = exec.CommandContext(ctx, PerfPath, "record", "-a", "-g", "-F", strconv.Itoa(freq), "-o", r.out, "--quiet",
		"-D", "-1", "--control", "fifo:"+ctlPath+","+ackPath, "--tail-synthesize")
	r.cmd.Stderr = &r.stderr
	r.cmd.Cancel = func() error { return r.cmd.Process.Signal(syscall.SIGINT) }
	r.cmd.WaitDelay = 10 * time.Second
	if err := r.cmd.Start(); err != nil {
		cancel()
		r.cleanup()
		return nil, fmt.Errorf("perf record: %w", err)
	}
	go func() { r.done <- r.cmd.Wait() }()
	if err := r.control("enable", 30*time.Second); err != nil {
		_, _ = r.Stop(nil)
		return nil, err
	}
	return r, nil
}

// control sends perf a command and waits for its acknowledgement.
func (r *Recording) control(cmd string, timeout time.Duration) error {
	if _, err := r.ctl.WriteString(cmd + "\n"); err != nil {
		return fmt.Errorf("perf control %s: %w", cmd, err)
	}
	_ = r.ack.SetReadDeadline(time.Now().Add(timeout))
	buf := make([]byte, 16)
	n, err := r.ack.Read(buf)
	if err != nil {
		return fmt.Errorf("perf control %s: no acknowledgement: %w (%s)", cmd, err, strings.TrimSpace(r.stderr.String()))
	}
	if !strings.HasPrefix(string(buf[:n]), "ack") {
		return fmt.Errorf("perf control %s: %q", cmd, buf[:n])
	}
	return nil
}

func (r *Recording) cleanup() {
	if r.ctl != nil {
		r.ctl.Close()
	}
	if r.ack != nil {
		r.ack.Close()
	}
	os.RemoveAll(r.dir)
}

// Stop ends the recording and sorts its samples.
func (r *Recording) Stop(dataPlane map[int]bool) (Profile, error) {
	defer r.cleanup()
	stopErr := r.control("disable", 10*time.Second)
	_ = r.cmd.Process.Signal(syscall.SIGINT)
	var err error
	select {
	case err = <-r.done:
	case <-time.After(20 * time.Second):
		_ = r.cmd.Process.Kill()
		err = <-r.done
	}
	r.cancel()
	if stopErr != nil {
		return Profile{}, stopErr
	}
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
	return p, cerr
}
