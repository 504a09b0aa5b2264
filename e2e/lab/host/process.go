package host

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"time"
)

// Command returns a command that runs name with args inside the network
// namespace ns (through `ip netns exec`). It starts in its own process
// group, so a signal to the parent's group (Ctrl-C) does not reach it and
// it outlives its parent; stop it by its pid (cmd.Process.Kill), or let
// Cleanup or DelNamespace kill everything left inside the namespace.
func Command(ns, name string, args ...string) *exec.Cmd {
	cmd := exec.Command("ip", append([]string{"netns", "exec", ns, name}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// killWait bounds how long the lab waits for killed processes to leave a
// namespace.
const killWait = 5 * time.Second

// killNamespaceProcesses SIGKILLs every process inside ns and waits until
// none is left; it returns the pids it killed.
func (l *Lab) killNamespaceProcesses(ctx context.Context, ns string) ([]int, error) {
	var killed []int
	deadline := time.Now().Add(killWait)
	for {
		out, err := l.ip(ctx, "netns", "pids", ns)
		if err != nil {
			return killed, err
		}
		pids, err := parsePids(out)
		if err != nil {
			return killed, err
		}
		if len(pids) == 0 {
			return killed, nil
		}
		if time.Now().After(deadline) {
			return killed, fmt.Errorf("namespace %s: processes %v still running %s after SIGKILL", ns, pids, killWait)
		}
		for _, p := range pids {
			if err := syscall.Kill(p, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
				return killed, fmt.Errorf("kill process %d in namespace %s: %w", p, ns, err)
			}
			if !containsInt(killed, p) {
				killed = append(killed, p)
				l.log.WithFields(map[string]any{"namespace": ns, "pid": p}).Info("process killed")
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
