package vppnode

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
)

// testVPP is a node's VPP value over dir without a binary check: the
// process rules below hold whatever the binary is.
func testVPP(t *testing.T) *VPP {
	dir := t.TempDir()
	return &VPP{opts: Options{Dir: dir}, log: logrus.StandardLogger()}
}

// startProcess starts a stand-in process with args and reaps it when the
// test ends.
func startProcess(t *testing.T, name string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(name, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
	})
	return cmd
}

func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err == nil && syscall.Kill(pid, 0) == nil && !containsZombie(stat)
}

func containsZombie(stat []byte) bool {
	for i := len(stat) - 1; i > 0; i-- {
		if stat[i] == ')' {
			return i+2 < len(stat) && stat[i+2] == 'Z'
		}
	}
	return false
}

func writePid(t *testing.T, v *VPP, pid int) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(v.Dir(), "vpp.pid"), []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestKillSparesAProcessThatIsNotThisNodesVPP(t *testing.T) {
	v := testVPP(t)
	// A pid file naming a process that runs another directory's VPP, or
	// no VPP at all (a pid reused after a reboot).
	other := startProcess(t, "sh", "-c", "sleep 30; true", "x", "-c", "/elsewhere/startup.conf")
	writePid(t, v, other.Process.Pid)
	if pid, ok := v.Running(); ok {
		t.Errorf("Running() = %d, true for a foreign process", pid)
	}
	if err := v.Kill(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if !alive(other.Process.Pid) {
		t.Error("Kill signalled a process that is not this node's VPP")
	}
	if _, err := os.Stat(filepath.Join(v.Dir(), "vpp.pid")); !os.IsNotExist(err) {
		t.Errorf("stale pid file kept: %v", err)
	}
}

func TestKillStopsThisNodesVPP(t *testing.T) {
	v := testVPP(t)
	ours := startProcess(t, "sh", "-c", "sleep 30; true", "x", "-c", v.confPath())
	writePid(t, v, ours.Process.Pid)
	// On a loaded machine the new process's /proc entries may briefly show
	// the state before its exec: wait (bounded) until it is recognised.
	var pid int
	var ok bool
	for range 100 {
		if pid, ok = v.Running(); ok {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !ok || pid != ours.Process.Pid {
		t.Fatalf("Running() = %d, %v; want %d", pid, ok, ours.Process.Pid)
	}
	if err := v.Kill(); err != nil {
		t.Fatal(err)
	}
	if alive(ours.Process.Pid) {
		t.Error("this node's process survived Kill")
	}
	if _, ok := v.Running(); ok {
		t.Error("Running after Kill")
	}
	if err := v.Kill(); err != nil {
		t.Errorf("Kill with nothing running: %v", err)
	}
}

func TestRunningWithoutAPidFile(t *testing.T) {
	v := testVPP(t)
	if _, ok := v.Running(); ok {
		t.Error("Running without a pid file")
	}
	if err := os.WriteFile(filepath.Join(v.Dir(), "vpp.pid"), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := v.Running(); ok {
		t.Error("Running with a garbage pid file")
	}
}
