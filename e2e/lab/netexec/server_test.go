package netexec

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestNewRefuses checks that bad options fail New and leave nothing bound.
func TestNewRefuses(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	takenPort := taken.Addr().(*net.TCPAddr).Port
	cases := []struct {
		name string
		opts Options
		want string
	}{
		{"no hostname", Options{HTTPPort: 0}, "empty hostname"},
		{"http port negative", Options{Hostname: "h", HTTPPort: -1}, "out of range"},
		{"udp port too big", Options{Hostname: "h", UDPPort: 70000}, "out of range"},
		{"http port taken", Options{Hostname: "h", HTTPPort: takenPort}, "http listener"},
		{"line port taken", Options{Hostname: "h", UDPPort: -1, TCPLinePort: takenPort}, "tcp line listener"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.opts.ListenIP = "127.0.0.1"
			s, err := New(c.opts)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("New = %v, %v; want error with %q", s, err, c.want)
			}
		})
	}
	// A New that fails on its last listener closes the ones it bound: the HTTP port is free
	// again at once.
	free := closedPort(t)
	if _, err := New(Options{Hostname: "h", ListenIP: "127.0.0.1", HTTPPort: free, TCPLinePort: takenPort}); err == nil {
		t.Fatal("New succeeded on a taken line port")
	}
	if ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(free))); err != nil {
		t.Errorf("the failed New kept its HTTP port: %v", err)
	} else {
		ln.Close()
	}

	s, err := New(Options{Hostname: "h", ListenIP: "127.0.0.1", Log: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Serve(ctx); err != nil {
		t.Errorf("Serve after cancel = %v", err)
	}
	if err := s.Serve(context.Background()); err == nil {
		t.Error("a second Serve succeeded")
	}
}

// TestDisabledListeners checks that negative UDP and line ports bind nothing.
func TestDisabledListeners(t *testing.T) {
	s := serve(t, "h", func(o *Options) { o.UDPPort, o.TCPLinePort = -1, -1 })
	if s.UDPAddr() != nil || s.TCPLineAddr() != nil {
		t.Errorf("UDP %v, line %v, want none", s.UDPAddr(), s.TCPLineAddr())
	}
}

// TestStops covers every way a server stops: its context (a kill), /shutdown, and Terminate
// with no delay; after each, no listener answers.
func TestStops(t *testing.T) {
	cases := []struct {
		name string
		stop func(t *testing.T, r *running)
	}{
		{"context", func(t *testing.T, r *running) { r.cancel() }},
		{"/shutdown", func(t *testing.T, r *running) {
			if err := Shutdown(testCtx(t, time.Second), NetDial, r.HTTPAddr().String()); err != nil {
				t.Errorf("Shutdown: %v", err)
			}
		}},
		{"terminate without delay", func(t *testing.T, r *running) { r.Terminate() }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := serve(t, "h")
			if _, err := Hostname(testCtx(t, time.Second), NetDial, r.HTTPAddr().String()); err != nil {
				t.Fatalf("before stop: %v", err)
			}
			c.stop(t, r)
			select {
			case err := <-r.done:
				r.done <- err
				if err != nil {
					t.Errorf("Serve = %v", err)
				}
			case <-time.After(2 * time.Second):
				t.Fatal("Serve still running 2s after the stop")
			}
			for _, a := range []net.Addr{r.HTTPAddr(), r.TCPLineAddr()} {
				if c, err := net.DialTimeout("tcp", a.String(), time.Second); err == nil {
					c.Close()
					t.Errorf("%s still accepts after the stop", a)
				}
			}
		})
	}
}

// TestTerminateKeepsServing checks the kubelet's graceful stop: after Terminate, /readyz says
// 503 while new requests and an existing connection are still served for the delay, then the
// server stops; with a negative delay it serves until killed.
func TestTerminateKeepsServing(t *testing.T) {
	t.Run("delay", func(t *testing.T) {
		r := serve(t, "h", func(o *Options) { o.DelayShutdown = 400 * time.Millisecond })
		ctx := testCtx(t, 5*time.Second)
		sess, err := OpenSession(ctx, NetDial, r.TCPLineAddr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer sess.Close()
		r.Terminate()
		r.Terminate() // a second SIGTERM changes nothing
		if ok, err := Ready(ctx, NetDial, r.HTTPAddr().String()); ok || err != nil {
			t.Errorf("Ready = %v, %v while terminating, want false, nil", ok, err)
		}
		if h, err := Hostname(ctx, NetDial, r.HTTPAddr().String()); err != nil || h != "h" {
			t.Errorf("new connection while terminating: %q, %v", h, err)
		}
		if rep := sess.Run(ctx, time.Millisecond, 3); rep.Err() != nil || rep.Exchanges != 3 {
			t.Errorf("existing connection while terminating: %+v", rep)
		}
		select {
		case <-r.done:
			t.Fatal("stopped before its delay")
		default:
		}
		select {
		case err := <-r.done:
			r.done <- err
		case <-time.After(2 * time.Second):
			t.Fatal("still serving 2s after a 400ms delay")
		}
		if rep := sess.Run(ctx, time.Millisecond, 1); rep.Failure == nil {
			t.Error("the existing connection survived the stop")
		}
	})
	t.Run("until killed", func(t *testing.T) {
		r := serve(t, "h", func(o *Options) { o.DelayShutdown = -1 })
		r.Terminate()
		time.Sleep(100 * time.Millisecond)
		if h, err := Hostname(testCtx(t, time.Second), NetDial, r.HTTPAddr().String()); err != nil || h != "h" {
			t.Errorf("terminating server without a delay bound: %q, %v", h, err)
		}
		if err := r.stop(t); err != nil {
			t.Errorf("Serve = %v", err)
		}
	})
}
