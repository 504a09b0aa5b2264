package netexec

import (
	"context"
	"testing"
	"time"
)

// TestClientsAreBounded checks that every client against a black hole (a dial that never
// completes), a silent TCP endpoint and a silent UDP port returns an error within its context's
// deadline instead of hanging.
func TestClientsAreBounded(t *testing.T) {
	tcp := silentTCP(t)
	udp := silentUDP(t)
	calls := []struct {
		name string
		call func(ctx context.Context, dial DialFunc, tcp, udp string) error
	}{
		{"Hostname", func(ctx context.Context, d DialFunc, a, _ string) error { _, err := Hostname(ctx, d, a); return err }},
		{"ClientIP", func(ctx context.Context, d DialFunc, a, _ string) error { _, err := ClientIP(ctx, d, a); return err }},
		{"Echo", func(ctx context.Context, d DialFunc, a, _ string) error { _, err := Echo(ctx, d, a, "x"); return err }},
		{"Dial", func(ctx context.Context, d DialFunc, a, _ string) error {
			_, err := Dial(ctx, d, a, DialRequest{Host: "127.0.0.1", Port: 1, Request: "hostname", Tries: 5})
			return err
		}},
		{"UDPHostname", func(ctx context.Context, d DialFunc, _, u string) error { _, err := UDPHostname(ctx, d, u); return err }},
		{"UDPEcho", func(ctx context.Context, d DialFunc, _, u string) error {
			_, err := UDPEcho(ctx, d, u, "x")
			return err
		}},
		{"Hostnames", func(ctx context.Context, d DialFunc, a, _ string) error {
			tl, err := Hostnames(ctx, d, ProtoHTTP, a, 100)
			if err == nil && tl.Failures == 0 {
				return nil
			}
			return errFailed
		}},
		{"OpenSession", func(ctx context.Context, d DialFunc, a, _ string) error { _, err := OpenSession(ctx, d, a); return err }},
		{"RTT", func(ctx context.Context, d DialFunc, a, _ string) error { _, err := RTT(ctx, d, a, 10); return err }},
	}
	dials := []struct {
		name string
		dial DialFunc
	}{
		{"black hole", blackHole},
		{"silent endpoint", NetDial},
	}
	const bound = 300 * time.Millisecond
	for _, c := range calls {
		for _, d := range dials {
			t.Run(c.name+"/"+d.name, func(t *testing.T) {
				t.Parallel()
				ctx, cancel := context.WithTimeout(context.Background(), bound)
				defer cancel()
				start := time.Now()
				err := c.call(ctx, d.dial, tcp, udp)
				if el := time.Since(start); el > bound+2*time.Second {
					t.Errorf("returned after %s, bound %s", el, bound)
				}
				if err == nil {
					t.Error("no error from a peer that never answers")
				}
			})
		}
	}
}

// TestRequestTimeoutWithoutDeadline checks that a context without a deadline still ends a
// request after RequestTimeout.
func TestRequestTimeoutWithoutDeadline(t *testing.T) {
	if testing.Short() {
		t.Skip("waits RequestTimeout")
	}
	start := time.Now()
	if _, err := Hostname(context.Background(), blackHole, "10.0.0.1:80"); err == nil {
		t.Error("no error")
	}
	if el := time.Since(start); el < RequestTimeout || el > RequestTimeout+2*time.Second {
		t.Errorf("returned after %s, want %s", el, RequestTimeout)
	}
}
