package netexec

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestParseArgs reads container args as agnhost does, plus this server's own flags.
func TestParseArgs(t *testing.T) {
	t.Setenv(HostnameEnv, "from-env")
	cases := []struct {
		name    string
		args    []string
		want    Options
		wantErr string
	}{
		{"defaults", nil, Options{Hostname: "from-env", HTTPPort: 8080, UDPPort: 8081, TCPLinePort: -1}, ""},
		{"agnhost's e2e args", []string{"netexec", "--http-port=80", "--udp-port=53"},
			Options{Hostname: "from-env", HTTPPort: 80, UDPPort: 53, TCPLinePort: -1}, ""},
		{"space-separated values", []string{"--http-port", "9000", "--udp-port", "-1", "--delay-shutdown", "30"},
			Options{Hostname: "from-env", HTTPPort: 9000, UDPPort: -1, TCPLinePort: -1, DelayShutdown: 30 * time.Second}, ""},
		{"own flags", []string{"--hostname=pod-a", "--tcp-line-port=9090", "--listen-ip=10.0.0.1", "--delay-shutdown=-1"},
			Options{Hostname: "pod-a", ListenIP: "10.0.0.1", HTTPPort: 8080, UDPPort: 8081, TCPLinePort: 9090, DelayShutdown: -time.Second}, ""},
		{"no sctp is fine", []string{"--sctp-port=-1"}, Options{Hostname: "from-env", HTTPPort: 8080, UDPPort: 8081, TCPLinePort: -1}, ""},
		{"an sctp port is refused", []string{"--sctp-port=9"}, Options{}, "no SCTP"},
		{"tls is refused by name", []string{"--tls-cert-file=/x"}, Options{}, "tls-cert-file"},
		{"positional", []string{"netexec", "extra"}, Options{}, "unexpected"},
		{"http port 0", []string{"--http-port=0"}, Options{}, "--http-port"},
		{"udp port 0", []string{"--udp-port=0"}, Options{}, "--udp-port"},
		{"line port too big", []string{"--tcp-line-port=70000"}, Options{}, "--tcp-line-port"},
		{"delay below -1", []string{"--delay-shutdown=-2"}, Options{}, "--delay-shutdown"},
		{"not a number", []string{"--http-port=x"}, Options{}, "http-port"},
	}
	for _, c := range cases {
		got, err := ParseArgs(c.args)
		if got != c.want || (c.wantErr == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("%s: ParseArgs(%q) = %+v, %v; want %+v, %q", c.name, c.args, got, err, c.want, c.wantErr)
		}
	}
	t.Setenv(HostnameEnv, "")
	host, _ := os.Hostname()
	if got, err := ParseArgs(nil); err != nil || got.Hostname != host {
		t.Errorf("without flag or env: hostname %q, %v; want the machine's %q", got.Hostname, err, host)
	}
}

// TestMainTreatsSIGTERMAsTerminate sends the test process a SIGTERM while Main serves: the
// server turns unready and keeps serving for its delay, then Main returns nil.
func TestMainTreatsSIGTERMAsTerminate(t *testing.T) {
	port := closedPort(t)
	done := make(chan error, 1)
	ctx := testCtx(t, 10*time.Second)
	go func() {
		done <- Main(ctx, []string{"netexec", "--hostname=pod-m", "--listen-ip=127.0.0.1", "--http-port=" + itoa(port),
			"--udp-port=-1", "--delay-shutdown=1"}, quietLog())
	}()
	addr := "127.0.0.1:" + itoa(port)
	var err error
	for i := 0; i < 50; i++ { // up to 1s for the server to listen
		if _, err = Hostname(ctx, NetDial, addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("Main not serving: %v", err)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if ok, err := Ready(ctx, NetDial, addr); ok || err != nil {
		t.Errorf("Ready = %v, %v after SIGTERM", ok, err)
	}
	if h, err := Hostname(ctx, NetDial, addr); err != nil || h != "pod-m" {
		t.Errorf("not serving during the delay: %q, %v", h, err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Main = %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("Main still running 3s after SIGTERM with a 1s delay")
	}
}
