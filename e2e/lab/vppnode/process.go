package vppnode

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"
)

// Options configure one node's VPP.
type Options struct {
	// Binary is VPP's executable, a build directory's bin/vpp (the
	// environment's VPPSVC_LAB_VPP by default).
	Binary string
	// Dir is the node's own directory (absolute; created): startup.conf,
	// sockets, vpp.pid, vpp.log.
	Dir string
	// APIPrefix is the api-segment prefix, unique per VPP on the machine
	// (by default made of Dir's last two path elements).
	APIPrefix string
	// MainHeap is the main heap's size ("512M" by default).
	MainHeap string
	// StartTimeout bounds Start's wait for the API socket (120 s: on a
	// loaded 2-core machine a VPP in a session of its own took 58 s of wall
	// time, 1.3 s of CPU).
	StartTimeout time.Duration
	// Log receives process events (logrus' standard logger by default).
	Log logrus.FieldLogger
}

// VPP is one lab node's VPP process, known by its directory.
type VPP struct {
	opts      Options
	libDir    string
	pluginDir string
	log       logrus.FieldLogger
}

// New checks opts and the binary (missing, or not VPP 25.10: refused)
// and returns the node's VPP. It starts nothing.
func New(opts Options) (*VPP, error) {
	if opts.Binary == "" {
		opts.Binary = os.Getenv(EnvBinary)
	}
	if !filepath.IsAbs(opts.Dir) {
		return nil, fmt.Errorf("VPP directory %q: want an absolute path", opts.Dir)
	}
	opts.Dir = filepath.Clean(opts.Dir)
	if opts.APIPrefix == "" {
		opts.APIPrefix = apiPrefix(opts.Dir)
	}
	if opts.MainHeap == "" {
		opts.MainHeap = "512M"
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 120 * time.Second
	}
	if opts.Log == nil {
		opts.Log = logrus.StandardLogger()
	}
	if err := CheckBinary(opts.Binary); err != nil {
		return nil, err
	}
	bin, err := filepath.Abs(opts.Binary)
	if err != nil {
		return nil, err
	}
	opts.Binary = bin
	lib, plugins := buildLayout(bin)
	return &VPP{opts: opts, libDir: lib, pluginDir: plugins, log: opts.Log.WithField("vpp", opts.Dir)}, nil
}

// Dir is the node's directory.
func (v *VPP) Dir() string { return v.opts.Dir }

// APISocket is the binary API's socket (socksvr).
func (v *VPP) APISocket() string { return filepath.Join(v.opts.Dir, "api.sock") }

// CLISocket is the debug CLI's socket: vppctl -s <it>.
func (v *VPP) CLISocket() string { return filepath.Join(v.opts.Dir, "cli.sock") }

// StatsSocket is the stats segment's socket.
func (v *VPP) StatsSocket() string { return filepath.Join(v.opts.Dir, "stats.sock") }

func (v *VPP) confPath() string { return filepath.Join(v.opts.Dir, "startup.conf") }
func (v *VPP) pidPath() string  { return filepath.Join(v.opts.Dir, "vpp.pid") }

// LogPath is where VPP's standard output and error go.
func (v *VPP) LogPath() string { return filepath.Join(v.opts.Dir, "vpp.log") }

// Running reports the pid of this directory's VPP if it runs: the process
// of vpp.pid, alive, not a zombie, and running this directory's
// startup.conf (a reused pid is not taken for it).
func (v *VPP) Running() (pid int, ok bool) {
	b, err := os.ReadFile(v.pidPath())
	if err != nil {
		return 0, false
	}
	pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, false
	}
	return pid, v.isOurs(pid)
}

// isOurs says whether pid is a live VPP started with this directory's
// startup.conf.
func (v *VPP) isOurs(pid int) bool {
	if !running(pid) {
		return false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	return cmdlineRuns(cmdline, v.confPath())
}

// running says whether process pid exists and has not ended (a zombie
// has ended); the state follows the command name's closing parenthesis.
func running(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] != 'Z' && stat[i+2] != 'X'
}

// cmdlineRuns says whether a /proc cmdline (NUL-separated) is a VPP
// started with "-c conf".
func cmdlineRuns(cmdline []byte, conf string) bool {
	args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "-c" && args[i+1] == conf {
			return true
		}
	}
	return false
}

// Start starts the node's VPP unless it runs already (then it is
// adopted, unchanged), and waits until its API socket accepts a
// connection that answers VPP 25.10. The VPP runs in its own process group: it
// survives the process that started it, until Kill.
func (v *VPP) Start(ctx context.Context) error {
	if pid, ok := v.Running(); ok {
		v.log.WithField("pid", pid).Info("VPP already running: adopted")
		return v.waitReady(ctx, pid)
	}
	if err := os.MkdirAll(v.opts.Dir, 0o755); err != nil {
		return err
	}
	conf := startupConf(config{dir: v.opts.Dir, prefix: v.opts.APIPrefix, pluginDir: v.pluginDir, mainHeap: v.opts.MainHeap})
	if err := os.WriteFile(v.confPath(), []byte(conf), 0o644); err != nil {
		return err
	}
	// A dead VPP's sockets would answer nothing; VPP makes new ones.
	for _, s := range []string{v.APISocket(), v.CLISocket(), v.StatsSocket()} {
		if err := os.Remove(s); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	logf, err := os.OpenFile(v.LogPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(v.opts.Binary, "-c", v.confPath())
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+v.libDir)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Dir = v.opts.Dir
	// A process group of its own: a signal to the agent's group (Ctrl-C)
	// does not reach VPP, and VPP outlives the agent. Not a session of its
	// own: the kernel's autogroup scheduler gives every session an equal
	// share of the CPU, and on a loaded machine a VPP in a session of its
	// own took over 30 s to start instead of 2.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start VPP %s: %w", v.opts.Binary, err)
	}
	pid := cmd.Process.Pid
	// Reap it if it dies while this process lives; a zombie would look
	// alive to Running.
	go cmd.Wait()
	if err := os.WriteFile(v.pidPath(), []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
		syscall.Kill(pid, syscall.SIGKILL)
		return err
	}
	v.log.WithField("pid", pid).Info("VPP started")
	if err := v.waitReady(ctx, pid); err != nil {
		return fmt.Errorf("%w (VPP's output: %s)", err, v.LogPath())
	}
	return nil
}

// waitReady waits until VPP's API answers and checks its version.
func (v *VPP) waitReady(ctx context.Context, pid int) error {
	ctx, cancel := context.WithTimeout(ctx, v.opts.StartTimeout)
	defer cancel()
	for {
		if !v.isOurs(pid) {
			return fmt.Errorf("VPP (pid %d) exited during start", pid)
		}
		if _, err := os.Stat(v.APISocket()); err == nil {
			c, err := Connect(ctx, v.APISocket())
			if err == nil {
				c.Close()
				return nil
			}
			if errors.Is(err, errWrongVersion) {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("VPP (pid %d): API socket %s not ready after %s", pid, v.APISocket(), v.opts.StartTimeout)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Kill SIGKILLs the node's VPP, as a crash would, and waits until it is
// gone. Nothing running is no error; a pid that is not this directory's
// VPP is never signalled.
func (v *VPP) Kill() error {
	pid, ok := v.Running()
	if !ok {
		os.Remove(v.pidPath())
		return nil
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill VPP (pid %d): %w", pid, err)
	}
	// Wait for the process itself to end, not for its command line to stop
	// matching: an exiting process's cmdline reads empty before it becomes
	// a zombie.
	deadline := time.Now().Add(10 * time.Second)
	for running(pid) {
		if time.Now().After(deadline) {
			return fmt.Errorf("VPP (pid %d) still alive 10 s after SIGKILL", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	v.log.WithField("pid", pid).Info("VPP killed")
	// Only the killed VPP's record and shared memory: a node agent that
	// noticed the kill may have started the next VPP already, and removing
	// its pid record would orphan it (no teardown would find it).
	if b, err := os.ReadFile(v.pidPath()); err == nil && strings.TrimSpace(string(b)) != strconv.Itoa(pid) {
		return nil
	}
	v.removeSharedMemory()
	if err := os.Remove(v.pidPath()); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// removeSharedMemory removes the shared-memory files a killed VPP leaves
// in /dev/shm, all named after its own api-segment prefix.
func (v *VPP) removeSharedMemory() {
	if v.opts.APIPrefix == "" {
		return
	}
	files, _ := filepath.Glob(filepath.Join("/dev/shm", v.opts.APIPrefix+"-*"))
	for _, f := range files {
		if err := os.Remove(f); err == nil {
			v.log.WithField("file", f).Debug("VPP shared memory removed")
		}
	}
}
