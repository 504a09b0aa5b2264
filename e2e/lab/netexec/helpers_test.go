package netexec

import (
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
)

// quietLog keeps test output to failures.
func quietLog() logrus.FieldLogger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}

// running is a served Server and the way to stop it.
type running struct {
	*Server
	cancel context.CancelFunc
	done   chan error
}

// stop kills the server and waits for Serve to return, failing if it does not within a second.
func (r *running) stop(t *testing.T) error {
	t.Helper()
	r.cancel()
	select {
	case err := <-r.done:
		r.done <- err
		return err
	case <-time.After(time.Second):
		t.Fatal("Serve did not return within 1s of its context ending")
		return nil
	}
}

// serve starts a server on free loopback ports with every listener on.
func serve(t *testing.T, hostname string, mutate ...func(*Options)) *running {
	t.Helper()
	opts := Options{Hostname: hostname, ListenIP: "127.0.0.1", Log: quietLog()}
	for _, m := range mutate {
		m(&opts)
	}
	s, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{Server: s, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- s.Serve(ctx) }()
	t.Cleanup(func() { r.stop(t) })
	return r
}

// testCtx bounds one test's client calls.
func testCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// roundRobin is a DialFunc standing in for a Service: every dial to any address goes to the
// next backend, as a load balancer would send new connections.
func roundRobin(backends ...string) DialFunc {
	var n atomic.Int64
	return func(ctx context.Context, network, _ string) (net.Conn, error) {
		i := int(n.Add(1)-1) % len(backends)
		return NetDial(ctx, network, backends[i])
	}
}

// blackHole is a DialFunc whose connection attempt never completes, like a SYN dropped on the
// way: it returns only when the context ends.
func blackHole(ctx context.Context, network, addr string) (net.Conn, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// silentTCP accepts connections and never writes, like an endpoint that hangs.
func silentTCP(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	return ln.Addr().String()
}

// silentUDP is a UDP port that reads and never answers.
func silentUDP(t *testing.T) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 100)
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
		}
	}()
	return pc.LocalAddr().String()
}

var errFailed = errors.New("failed")

func itoa(i int) string { return strconv.Itoa(i) }
