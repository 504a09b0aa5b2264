package realvpp

import (
	"strings"
	"testing"
	"time"
)

func TestRestartCommandIsBounded(t *testing.T) {
	start := time.Now()
	err := runRestartCommand("sleep 60", nil, 200*time.Millisecond, time.Second)
	if err == nil || !strings.Contains(err.Error(), "did not finish") {
		t.Fatalf("a hanging restart command: got %v, want a timeout error", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("the timed-out command held the restart for %s", took)
	}
}

func TestRestartCommandKillsWhatItStartedOnTimeout(t *testing.T) {
	// A background child holding the output must not keep the restart
	// waiting after the timeout: the whole group is killed.
	start := time.Now()
	err := runRestartCommand("sleep 60 & wait", nil, 200*time.Millisecond, time.Second)
	if err == nil {
		t.Fatal("a hanging restart command succeeded")
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("the timed-out command's child held the restart for %s", took)
	}
}

func TestRestartCommandMayLeaveADaemonRunning(t *testing.T) {
	// A command that starts a daemon keeping the output open succeeds
	// once the command itself has exited (after the output grace).
	start := time.Now()
	if err := runRestartCommand("sleep 3 &", nil, time.Minute, 200*time.Millisecond); err != nil {
		t.Fatalf("a restart command that left a daemon: %v", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("the daemon held the restart for %s", took)
	}
}

func TestRestartCommandFailure(t *testing.T) {
	err := runRestartCommand("echo no vpp here; exit 3", []string{"X=1"}, time.Minute, time.Second)
	if err == nil || !strings.Contains(err.Error(), "no vpp here") {
		t.Fatalf("a failing restart command: got %v, want its output in the error", err)
	}
}
