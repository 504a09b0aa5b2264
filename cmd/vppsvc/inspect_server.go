package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"

	"github.com/vppsvc/vppsvc/agent"
	"github.com/vppsvc/vppsvc/agent/inspect"
)

// The inspector: `vppsvc run` serves its state (inspect.Snapshot) as JSON over
// HTTP on a unix socket or a loopback TCP address, for `vppsvc status`. It
// is read-only and local on purpose: it shows backends and VPP errors, and
// nothing on it needs to be reachable from the network.

// defaultInspectSocket is where `run` serves the inspector unless told otherwise.
const defaultInspectSocket = "/run/vppsvc/inspect.sock"

// inspectListenerKey carries the inspector's listener (or, for the
// default address, the address itself) from the run command to runNode
// through the context, so that wiring it takes one line in each.
type inspectListenerKey struct{}

// withInspector adds --inspect-socket to the run command. An address given
// on the command line is opened before the agent starts, so that a bad one
// fails the command at once; the default one is opened by serveInspector,
// and an agent that cannot create it (not root, /run read-only) runs
// without an inspector and says so in its log. runNode serves on it once
// the agent exists (serveInspector).
func withInspector(cmd *cobra.Command) {
	var addr string
	cmd.Flags().StringVar(&addr, "inspect-socket", defaultInspectSocket,
		`serve the state inspector (vppsvc status) on this unix socket, or on a loopback host:port such as 127.0.0.1:9102; "" disables it`)
	run := cmd.RunE
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if !cmd.Flags().Changed("inspect-socket") {
			cmd.SetContext(context.WithValue(cmd.Context(), inspectListenerKey{}, addr))
			return run(cmd, args)
		}
		ln, err := listenInspector(addr)
		if err != nil {
			return fmt.Errorf("--inspect-socket: %w", err)
		}
		if ln != nil {
			defer ln.Close()
			cmd.SetContext(context.WithValue(cmd.Context(), inspectListenerKey{}, ln))
		}
		return run(cmd, args)
	}
}

// listenInspector opens addr: a unix socket when it holds a slash or no
// colon, otherwise a TCP address whose host must be a loopback address or
// "localhost". A stale socket file left by a crashed agent is replaced; a
// socket another agent still serves is not. Empty addr means no inspector.
func listenInspector(addr string) (net.Listener, error) {
	if addr == "" {
		return nil, nil
	}
	if strings.Contains(addr, "/") || !strings.Contains(addr, ":") {
		return listenUnix(addr)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if host == "localhost" {
		host = "127.0.0.1"
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("%s: the inspector serves only on loopback (127.0.0.1, ::1) or a unix socket", addr)
	}
	return net.Listen("tcp", net.JoinHostPort(ip.String(), port))
}

func listenUnix(path string) (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != fs.ModeSocket {
			return nil, fmt.Errorf("%s exists and is not a socket", path)
		}
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("%s is served by another process (another vppsvc run?)", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	// Only root (and the agent's user) may read the node's state.
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

// serveInspector serves the agent's state on the listener (or default
// address) withInspector put into ctx, if any, and returns the function that
// stops serving.
func serveInspector(ctx context.Context, a *agent.Agent, log logrus.FieldLogger) func() {
	var ln net.Listener
	switch v := ctx.Value(inspectListenerKey{}).(type) {
	case net.Listener:
		ln = v
	case string:
		var err error
		if ln, err = listenInspector(v); err != nil {
			log.WithError(err).WithFields(logrus.Fields{"component": "inspector", "addr": v}).
				Warning("state inspector disabled: cannot listen on its default address; give run --inspect-socket another path or a loopback host:port")
			return func() {}
		}
	}
	if ln == nil {
		return func() {}
	}
	log = log.WithFields(logrus.Fields{"component": "inspector", "addr": ln.Addr().String()})
	srv := &http.Server{Handler: inspect.Handler(a.Inspect, log), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			log.WithError(err).Warning("inspector stopped serving")
		}
	}()
	log.Info("serving the state inspector (vppsvc status)")
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			log.WithError(err).Warning("inspector did not stop in time")
		}
	}
}
