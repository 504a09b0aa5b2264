package host

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"
)

// netnsDir is where `ip netns` keeps its named namespaces.
const netnsDir = "/run/netns"

// InNamespace runs fn on an OS thread switched into the named network
// namespace ns, and waits for it. A socket fn creates stays in ns for its
// whole life, wherever it is used afterwards. Goroutines fn starts run in
// the caller's namespace, not in ns. The thread is switched back after
// fn; if that fails, it is never handed back to Go's scheduler and dies
// with its goroutine, so no other code ever runs in ns by mistake.
func InNamespace(ns string, fn func() error) error {
	if err := checkNamespaceName(ns); err != nil {
		return err
	}
	errc := make(chan error, 1)
	go func() {
		// Locked without a matching unlock on failure: a goroutine that
		// exits locked takes its thread with it.
		runtime.LockOSThread()
		orig, err := os.Open(fmt.Sprintf("/proc/%d/task/%d/ns/net", os.Getpid(), unix.Gettid()))
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("namespace of this thread: %w", err)
			return
		}
		defer orig.Close()
		target, err := os.Open(filepath.Join(netnsDir, ns))
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("namespace %s: %w", ns, err)
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("enter namespace %s: %w", ns, err)
			return
		}
		ferr := fn()
		if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("leave namespace %s (thread discarded): %w", ns, err)
			return
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// DialContext connects to addr (an IP literal and port: no name
// resolution happens in ns) from inside the namespace ns, as
// net.Dialer.DialContext does; network is "tcp", "tcp4", "tcp6", "udp"...
func DialContext(ctx context.Context, ns, network, addr string) (net.Conn, error) {
	return dialIn(ctx, &net.Dialer{}, ns, network, addr)
}

// DialContextFrom is DialContext with the connection's local address
// given (a client's source address, or port).
func DialContextFrom(ctx context.Context, ns, network string, local net.Addr, addr string) (net.Conn, error) {
	return dialIn(ctx, &net.Dialer{LocalAddr: local}, ns, network, addr)
}

// dialIn dials on a thread inside ns. With an IP literal the dialer
// creates its one socket on the calling goroutine's thread (no parallel
// dials of several resolved addresses), so the socket is made in ns.
func dialIn(ctx context.Context, d *net.Dialer, ns, network, addr string) (net.Conn, error) {
	var c net.Conn
	err := InNamespace(ns, func() error {
		var err error
		c, err = d.DialContext(ctx, network, addr)
		return err
	})
	return c, err
}

// Listen opens a stream listener (tcp, tcp4, tcp6) on addr inside ns.
func Listen(ns, network, addr string) (net.Listener, error) {
	var ln net.Listener
	err := InNamespace(ns, func() error {
		var err error
		ln, err = net.Listen(network, addr)
		return err
	})
	return ln, err
}

// ListenPacket opens a packet socket (udp, udp4, udp6) on addr inside ns.
func ListenPacket(ns, network, addr string) (net.PacketConn, error) {
	var pc net.PacketConn
	err := InNamespace(ns, func() error {
		var err error
		pc, err = net.ListenPacket(network, addr)
		return err
	})
	return pc, err
}
