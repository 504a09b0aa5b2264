package cpumeter

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// envOrphanChild makes the test binary a meter that starts perf, prints
// perf's pid and waits to be killed.
const envOrphanChild = "CPUMETER_ORPHAN_CHILD"

// TestPerfEndsWithAKilledMeter kills a process in the middle of a
// recording, as a test run killed by its timeout or by hand is, and wants
// its perf gone within seconds instead of sampling on.
func TestPerfEndsWithAKilledMeter(t *testing.T) {
	if os.Getenv(envOrphanChild) != "" {
		orphanChild()
		return
	}
	if _, err := exec.LookPath(PerfPath); err != nil || os.Geteuid() != 0 {
		t.Skip("needs root and perf")
	}
	child := exec.Command(os.Args[0], "-test.run=^TestPerfEndsWithAKilledMeter$")
	child.Env = append(os.Environ(), envOrphanChild+"="+t.TempDir())
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	pid := make(chan int, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if p, ok := strings.CutPrefix(sc.Text(), "perf pid "); ok {
				n, _ := strconv.Atoi(p)
				pid <- n
				return
			}
		}
		pid <- 0
	}()
	var perf int
	select {
	case perf = <-pid:
	case <-time.After(60 * time.Second):
		t.Fatal("the child meter did not start perf within 60 s")
	}
	if perf <= 0 {
		t.Skip("the child meter could not start perf (see its output); nothing to check")
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	deadline := time.Now().Add(15 * time.Second)
	for alive(perf) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(perf, syscall.SIGKILL)
			t.Fatalf("perf (pid %d) still runs 15 s after its meter was killed", perf)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// orphanChild is the killed meter's side.
func orphanChild() {
	r, err := StartPerf(os.Getenv(envOrphanChild), 99)
	if err != nil {
		fmt.Println("no perf:", err)
		fmt.Println("perf pid 0")
		os.Exit(0)
	}
	fmt.Printf("perf pid %d\n", r.cmd.Process.Pid)
	time.Sleep(MaxPerfRun)
	os.Exit(1)
}

// alive reports whether pid is a live process (not gone, not a zombie).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
