package netexec

import (
	"context"
	"errors"
	"net"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestHostnames checks the "every endpoint answers" tally over a round-robin stand-in for a
// Service, over HTTP and UDP, including failures that are counted, not fatal.
func TestHostnames(t *testing.T) {
	a, b, c := serve(t, "a"), serve(t, "b"), serve(t, "c")
	tcp := roundRobin(a.HTTPAddr().String(), b.HTTPAddr().String(), c.HTTPAddr().String())
	udp := roundRobin(a.UDPAddr().String(), b.UDPAddr().String(), c.UDPAddr().String())
	var n atomic.Int64
	flaky := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if n.Add(1)%3 == 0 {
			return nil, errors.New("refused")
		}
		return NetDial(ctx, network, a.HTTPAddr().String())
	}
	cases := []struct {
		name     string
		dial     DialFunc
		proto    string
		n        int
		counts   map[string]int
		failures int
	}{
		{"http", tcp, ProtoHTTP, 7, map[string]int{"a": 3, "b": 2, "c": 2}, 0},
		{"tcp is http", tcp, "tcp", 3, map[string]int{"a": 1, "b": 1, "c": 1}, 0},
		{"udp", udp, ProtoUDP, 6, map[string]int{"a": 2, "b": 2, "c": 2}, 0},
		{"failures counted", flaky, ProtoHTTP, 6, map[string]int{"a": 4}, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tl, err := Hostnames(testCtx(t, 10*time.Second), tc.dial, tc.proto, "svc:80", tc.n)
			if err != nil {
				t.Fatal(err)
			}
			if tl.Requests != tc.n || !reflect.DeepEqual(tl.Counts, tc.counts) || tl.Failures != tc.failures || len(tl.Errors) != tc.failures {
				t.Errorf("tally %+v, want %d requests, counts %v, %d failures", tl, tc.n, tc.counts, tc.failures)
			}
		})
	}
}

// TestHostnamesRefusesBadArguments checks the bounds on the request count and the protocol.
func TestHostnamesRefusesBadArguments(t *testing.T) {
	for _, c := range []struct {
		proto string
		n     int
	}{{ProtoHTTP, 0}, {ProtoHTTP, MaxRequests + 1}, {"sctp", 1}} {
		if _, err := Hostnames(testCtx(t, time.Second), blackHole, c.proto, "x:1", c.n); err == nil {
			t.Errorf("%s x%d accepted", c.proto, c.n)
		}
	}
}

// TestReachAll checks that the check stops as soon as every wanted endpoint answered, and
// names the endpoints that never did after its bound.
func TestReachAll(t *testing.T) {
	a, b := serve(t, "a"), serve(t, "b")
	dial := roundRobin(a.HTTPAddr().String(), a.HTTPAddr().String(), a.HTTPAddr().String(), b.HTTPAddr().String())
	tl, err := ReachAll(testCtx(t, 5*time.Second), dial, ProtoHTTP, "svc:80", []string{"a", "b"}, 100)
	if err != nil || tl.Requests != 4 {
		t.Errorf("ReachAll = %+v, %v; want success after 4 requests", tl, err)
	}
	tl, err = ReachAll(testCtx(t, 5*time.Second), dial, ProtoHTTP, "svc:80", []string{"a", "b", "gone"}, 10)
	if err == nil || !strings.Contains(err.Error(), "gone never answered") || tl.Requests != 10 {
		t.Errorf("ReachAll = %+v, %v; want 10 requests and gone named", tl, err)
	}
	if got := tl.Names(); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("Names = %v", got)
	}
}
