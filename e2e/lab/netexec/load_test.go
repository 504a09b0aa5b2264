package netexec

import (
	"context"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestPercentile pins the nearest-rank definition on small and edge inputs.
func TestPercentile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	cases := []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one", ms(7), 99, 7 * time.Millisecond},
		{"p50 of 4 is the 2nd", ms(1, 2, 3, 4), 50, 2 * time.Millisecond},
		{"p50 of 5 is the 3rd", ms(1, 2, 3, 4, 5), 50, 3 * time.Millisecond},
		{"p99 of 100 is the 99th", ms(hundred...), 99, 99 * time.Millisecond},
		{"p99 of 10 is the max", ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 99, 10 * time.Millisecond},
		{"p0 is the min", ms(3, 4), 0, 3 * time.Millisecond},
		{"p100 is the max", ms(3, 4), 100, 4 * time.Millisecond},
		{"p above 100 clamps", ms(3, 4), 250, 4 * time.Millisecond},
		{"p below 0 clamps", ms(3, 4), -5, 3 * time.Millisecond},
	}
	for _, c := range cases {
		if got := Percentile(c.sorted, c.p); got != c.want {
			t.Errorf("%s: Percentile(%v) = %s, want %s", c.name, c.p, got, c.want)
		}
	}
}

// TestSummarize checks the figures of unsorted samples.
func TestSummarize(t *testing.T) {
	got := Summarize([]time.Duration{4, 1, 3, 2})
	want := RTTResult{N: 4, Min: 1, P50: 2, P99: 4, Max: 4, Mean: 2}
	if got != want {
		t.Errorf("Summarize = %+v, want %+v", got, want)
	}
	if got := Summarize(nil); got != (RTTResult{}) {
		t.Errorf("Summarize(nil) = %+v", got)
	}
}

// TestConnRate checks that every request is a new connection, that the count bound and the
// duration bound each end a run, and that failures are counted.
func TestConnRate(t *testing.T) {
	s := serve(t, "pod-r")
	var dials atomic.Int64
	counting := func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return NetDial(ctx, network, addr)
	}
	res, err := ConnRate(testCtx(t, 10*time.Second), counting, s.HTTPAddr().String(), 10*time.Second, 30)
	if err != nil || res.Conns != 30 || res.Failures != 0 || dials.Load() != 30 || res.PerSecond <= 0 {
		t.Errorf("ConnRate = %+v, %v after %d dials; want 30 connections", res, err, dials.Load())
	}
	start := time.Now()
	res, err = ConnRate(testCtx(t, 10*time.Second), NetDial, s.HTTPAddr().String(), 200*time.Millisecond, MaxConns)
	if el := time.Since(start); err != nil || el > time.Second || res.Conns == 0 {
		t.Errorf("ConnRate = %+v, %v after %s; want a run of 200ms", res, err, el)
	}
	refused := closedPort(t)
	res, err = ConnRate(testCtx(t, 10*time.Second), NetDial, net.JoinHostPort("127.0.0.1", itoa(refused)), time.Second, 5)
	if err == nil || res.Failures != 5 || len(res.Errors) != 5 || !strings.Contains(err.Error(), "no connection completed") {
		t.Errorf("ConnRate to a closed port = %+v, %v", res, err)
	}
	for _, bad := range []struct {
		d time.Duration
		n int
	}{{time.Second, 0}, {time.Second, MaxConns + 1}, {0, 1}} {
		if _, err := ConnRate(testCtx(t, time.Second), NetDial, s.HTTPAddr().String(), bad.d, bad.n); err == nil {
			t.Errorf("ConnRate(%s, %d) accepted", bad.d, bad.n)
		}
	}
}

// TestRTT checks that every request rides one connection and that a connection that breaks
// returns what was measured with the error.
func TestRTT(t *testing.T) {
	s := serve(t, "pod-r")
	var dials atomic.Int64
	counting := func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return NetDial(ctx, network, addr)
	}
	res, err := RTT(testCtx(t, 10*time.Second), counting, s.HTTPAddr().String(), 200)
	if err != nil || res.N != 200 || dials.Load() != 1 {
		t.Fatalf("RTT = %+v, %v over %d connections", res, err, dials.Load())
	}
	if !(res.Min > 0 && res.Min <= res.P50 && res.P50 <= res.P99 && res.P99 <= res.Max && res.Mean >= res.Min && res.Mean <= res.Max) {
		t.Errorf("figures out of order: %+v", res)
	}
	// A server that answers 3 requests and then closes the connection.
	addr := fakeHTTPServer(t, 3)
	res, err = RTT(testCtx(t, 5*time.Second), NetDial, addr, 10)
	if err == nil || res.N != 3 || !strings.Contains(err.Error(), "request 4") {
		t.Errorf("RTT over a breaking connection = %+v, %v", res, err)
	}
	for _, n := range []int{0, MaxRTTRequests + 1} {
		if _, err := RTT(testCtx(t, time.Second), NetDial, s.HTTPAddr().String(), n); err == nil {
			t.Errorf("RTT with %d requests accepted", n)
		}
	}
}

// fakeHTTPServer answers n keep-alive requests on its first connection, then closes it.
func fakeHTTPServer(t *testing.T, n int) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 4096)
		for i := 0; i < n; i++ {
			if _, err := c.Read(buf); err != nil {
				return
			}
			c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx"))
		}
	}()
	return ln.Addr().String()
}
