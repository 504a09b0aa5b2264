package lab

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/vppsvc/vppsvc/e2e/lab/host"
)

// One lab runs on a machine at a time: its process records its pid in the
// state directory (lab.pid), Up refuses while that process lives, and Down
// cleans what a killed one left.

// lockFile records the pid of the process that runs the lab.
func lockFile(stateDir string) string { return filepath.Join(stateDir, "lab.pid") }

// runningLab is the pid of a live lab process of stateDir, or 0.
func runningLab(stateDir string) int {
	b, err := os.ReadFile(lockFile(stateDir))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 || pid == os.Getpid() || syscall.Kill(pid, 0) != nil {
		return 0
	}
	return pid
}

// Down removes what a killed lab left: its VPPs, namespaces (and the
// processes in them), links and files. It refuses while a lab runs.
func Down(opts Options) error {
	if err := opts.defaults(); err != nil {
		return err
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("lab: must run as root")
	}
	if pid := runningLab(opts.StateDir); pid != 0 {
		return fmt.Errorf("lab: a lab is running (pid %d); interrupt it, it tears itself down", pid)
	}
	killStaleVPPs(opts.StateDir, nil, opts.Log)
	linux, err := host.New(host.Options{Prefix: opts.Prefix, StateDir: opts.StateDir, Log: opts.Log})
	if err != nil {
		return err
	}
	removed, err := linux.Cleanup()
	for _, r := range removed {
		fmt.Println("removed", r)
	}
	removeNodeDirs(opts.StateDir)
	_ = os.Remove(filepath.Join(opts.StateDir, "kubeconfig"))
	_ = os.Remove(lockFile(opts.StateDir))
	return err
}

// removeNodeDirs removes every node's directory (its VPP's, its agent's
// and its logs) under stateDir, those of nodes an earlier, larger lab had
// included: a lab keeps its nodes' logs after it stops, until the next
// start or Down. Nothing else in stateDir is touched.
func removeNodeDirs(stateDir string) {
	entries, _ := os.ReadDir(stateDir)
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), "node-") {
			_ = os.RemoveAll(filepath.Join(stateDir, e.Name()))
		}
	}
}
