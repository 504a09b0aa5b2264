package netexec

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"
)

// HostnameEnv names the environment variable that gives the hostname when --hostname is not
// set; without either the server uses the machine's hostname, as agnhost does.
const HostnameEnv = "NETEXEC_HOSTNAME"

// Default ports are agnhost's; the TCP line port is this server's addition, off unless asked.
const (
	DefaultHTTPPort = 8080
	DefaultUDPPort  = 8081
)

// ParseArgs reads a container's args the way agnhost's netexec reads them: an optional
// leading "netexec" subcommand, then --http-port, --udp-port (-1 turns UDP off),
// --delay-shutdown (seconds), --sctp-port=-1 (its default: none), plus this server's
// --hostname, --tcp-line-port and --listen-ip. Flags agnhost has and this server lacks (an
// SCTP port, TLS, overrides) are refused by name rather than ignored.
func ParseArgs(args []string) (Options, error) {
	if len(args) > 0 && args[0] == "netexec" {
		args = args[1:]
	}
	fs := flag.NewFlagSet("netexec", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	opts := Options{}
	var delay, sctp int
	fs.IntVar(&opts.HTTPPort, "http-port", DefaultHTTPPort, "HTTP port")
	fs.IntVar(&opts.UDPPort, "udp-port", DefaultUDPPort, "UDP port, -1 for none")
	fs.IntVar(&opts.TCPLinePort, "tcp-line-port", -1, "TCP line port, -1 for none")
	fs.IntVar(&delay, "delay-shutdown", 0, "seconds to keep serving after SIGTERM, -1 until killed")
	fs.StringVar(&opts.Hostname, "hostname", "", "hostname to answer")
	fs.StringVar(&opts.ListenIP, "listen-ip", "", "address to listen on, empty for all")
	fs.IntVar(&sctp, "sctp-port", -1, "only -1: this server has no SCTP")
	if err := fs.Parse(args); err != nil {
		return Options{}, fmt.Errorf("netexec args %q: %w", args, err)
	}
	if fs.NArg() > 0 {
		return Options{}, fmt.Errorf("netexec args %q: unexpected %q", args, fs.Args())
	}
	if opts.HTTPPort < 1 || opts.HTTPPort > 65535 {
		return Options{}, fmt.Errorf("netexec: --http-port %d out of 1..65535", opts.HTTPPort)
	}
	for name, p := range map[string]*int{"--udp-port": &opts.UDPPort, "--tcp-line-port": &opts.TCPLinePort} {
		if *p == 0 || *p < -1 || *p > 65535 {
			return Options{}, fmt.Errorf("netexec: %s %d is neither -1 nor in 1..65535", name, *p)
		}
	}
	if sctp != -1 {
		return Options{}, fmt.Errorf("netexec: --sctp-port %d: this server has no SCTP", sctp)
	}
	if delay < -1 {
		return Options{}, fmt.Errorf("netexec: --delay-shutdown %d is neither -1 nor >= 0", delay)
	}
	opts.DelayShutdown = time.Duration(delay) * time.Second
	if opts.Hostname == "" {
		opts.Hostname = os.Getenv(HostnameEnv)
	}
	if opts.Hostname == "" {
		h, err := os.Hostname()
		if err != nil {
			return Options{}, fmt.Errorf("netexec: no hostname: %w", err)
		}
		opts.Hostname = h
	}
	return opts, nil
}

// Main is the entry of a process that is one pod container: it parses args, serves, and
// treats SIGTERM as the kubelet's stop (Terminate, then serve on for --delay-shutdown). It
// returns when the server stops; the caller exits. It installs a SIGTERM handler, so it belongs
// in a process of its own, such as the lab's re-executed child inside the pod's namespace.
func Main(ctx context.Context, args []string, log logrus.FieldLogger) error {
	opts, err := ParseArgs(args)
	if err != nil {
		return err
	}
	opts.Log = log
	s, err := New(opts)
	if err != nil {
		return err
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	defer signal.Stop(term)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-term:
			s.Terminate()
		case <-ctx.Done():
		}
	}()
	return s.Serve(ctx)
}
