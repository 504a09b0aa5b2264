package netexec

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestParseIperf checks the fields read from iperf3's JSON and its reported errors.
func TestParseIperf(t *testing.T) {
	cases := []struct {
		name    string
		js      string
		want    IperfResult
		wantErr string
	}{
		{"report", `{"end":{"sum_sent":{"seconds":2.0,"bits_per_second":9e9,"retransmits":7},"sum_received":{"bits_per_second":8.5e9}}}`,
			IperfResult{ReceivedBitsPerSecond: 8.5e9, SentBitsPerSecond: 9e9, Retransmits: 7, Seconds: 2}, ""},
		{"error", `{"start":{},"end":{},"error":"unable to connect to server: Connection refused"}`, IperfResult{}, "Connection refused"},
		{"no figures", `{"end":{}}`, IperfResult{}, "without a received throughput"},
		{"not json", `iperf3: error`, IperfResult{}, "report"},
	}
	for _, c := range cases {
		got, err := parseIperf([]byte(c.js))
		if got != c.want || (c.wantErr == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("%s: parseIperf = %+v, %v; want %+v, %q", c.name, got, err, c.want, c.wantErr)
		}
	}
}

// TestIperf3Loopback runs the wrapper for real over loopback, server and client in the test's
// own namespace.
func TestIperf3Loopback(t *testing.T) {
	if _, err := os.Stat(Iperf3Path); err != nil {
		t.Skipf("no iperf3: %v", err)
	}
	plain := CommandFunc(exec.CommandContext)
	port := closedPort(t)
	res, err := Iperf3(testCtx(t, 30*time.Second), plain, plain, "127.0.0.1", port, time.Second)
	if err != nil || res.ReceivedBitsPerSecond <= 0 || res.SentBitsPerSecond <= 0 || res.Seconds < 0.9 {
		t.Errorf("Iperf3 = %+v, %v", res, err)
	}
	// A client aimed where no server listens fails with iperf3's own reason, and returns.
	wrongPort := func(ctx context.Context, name string, args ...string) *exec.Cmd {
		for i, a := range args {
			if a == "-p" {
				args[i+1] = itoa(closedPort(t))
			}
		}
		return exec.CommandContext(ctx, name, args...)
	}
	if _, err := Iperf3(testCtx(t, 30*time.Second), plain, wrongPort, "127.0.0.1", closedPort(t), time.Second); err == nil ||
		!strings.Contains(err.Error(), "unable to connect") {
		t.Errorf("Iperf3 to no server = %v", err)
	}
	// A server that cannot start is reported, not waited for.
	missing := func(ctx context.Context, name string, args ...string) *exec.Cmd {
		return exec.CommandContext(ctx, "/nonexistent/iperf3", args...)
	}
	if _, err := Iperf3(testCtx(t, 30*time.Second), missing, plain, "127.0.0.1", closedPort(t), time.Second); err == nil {
		t.Error("Iperf3 with a missing server binary succeeded")
	}
	if _, err := Iperf3(testCtx(t, time.Second), plain, plain, "127.0.0.1", port, 0); err == nil {
		t.Error("Iperf3 accepted a zero duration")
	}
}
