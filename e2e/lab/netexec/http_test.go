package netexec

import (
	"context"
	"encoding/json"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestHTTPEndpoints asks every HTTP endpoint over a fresh connection and checks status and body.
func TestHTTPEndpoints(t *testing.T) {
	s := serve(t, "pod-a")
	addr := s.HTTPAddr().String()
	port := strconv.Itoa(s.HTTPAddr().(*net.TCPAddr).Port)
	cases := []struct {
		path       string
		wantStatus int
		wantBody   string // exact unless wantPrefix
		wantPrefix bool
	}{
		{"/hostname", 200, "pod-a", false},
		{"/hostName", 200, "pod-a", false},
		{"/echo?msg=Hello%20World%26x", 200, "Hello World&x", false},
		{"/echo?msg=", 200, "", false},
		{"/echo?msg=gone&code=404", 404, "gone", false},
		{"/echo?msg=x&code=abc", 400, "argument 'code'", true},
		{"/healthz", 200, "", false},
		{"/readyz", 200, "ok", false},
		{"/serverport", 200, port, false},
		{"/", 200, "NOW: ", true},
		{"/nothing", 404, "404 page not found", true},
		{"/clientip", 200, "127.0.0.1:", true},
		{"/setreadiness?ready=maybe", 400, "argument 'ready'", true},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			body, status, err := httpGet(testCtx(t, 2*time.Second), NetDial, addr, c.path)
			if status != c.wantStatus {
				t.Fatalf("status %d (%v), want %d", status, err, c.wantStatus)
			}
			if (err == nil) != (c.wantStatus == 200) {
				t.Errorf("err %v with status %d", err, status)
			}
			if c.wantPrefix && !strings.HasPrefix(body, c.wantBody) || !c.wantPrefix && body != c.wantBody {
				t.Errorf("body %q, want %q (prefix %v)", body, c.wantBody, c.wantPrefix)
			}
		})
	}
}

// TestHTTPClients checks the typed clients, including that ClientIP is the client's own socket.
func TestHTTPClients(t *testing.T) {
	s := serve(t, "pod-a")
	addr := s.HTTPAddr().String()
	ctx := testCtx(t, 5*time.Second)
	if h, err := Hostname(ctx, NetDial, addr); err != nil || h != "pod-a" {
		t.Errorf("Hostname = %q, %v", h, err)
	}
	if e, err := Echo(ctx, NetDial, addr, "a b&c=d/é"); err != nil || e != "a b&c=d/é" {
		t.Errorf("Echo = %q, %v", e, err)
	}
	var local net.Addr
	seen := func(ctx2 context.Context, network, a string) (net.Conn, error) {
		c, err := NetDial(ctx2, network, a)
		if err == nil {
			local = c.LocalAddr()
		}
		return c, err
	}
	ip, err := ClientIP(ctx, seen, addr)
	if err != nil {
		t.Fatalf("ClientIP: %v", err)
	}
	if want := netip.MustParseAddrPort(local.String()); ip != want {
		t.Errorf("ClientIP = %v, want the client's socket %v", ip, want)
	}
	if ok, err := Ready(ctx, NetDial, addr); !ok || err != nil {
		t.Errorf("Ready = %v, %v before Terminate", ok, err)
	}
}

// TestHTTPOverIPv6 checks that the server and clients work on IPv6 loopback.
func TestHTTPOverIPv6(t *testing.T) {
	if ln, err := net.Listen("tcp", "[::1]:0"); err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	} else {
		ln.Close()
	}
	s := serve(t, "pod6", func(o *Options) { o.ListenIP = "::1" })
	ctx := testCtx(t, 5*time.Second)
	ip, err := ClientIP(ctx, NetDial, s.HTTPAddr().String())
	if err != nil || ip.Addr() != netip.IPv6Loopback() {
		t.Errorf("ClientIP = %v, %v, want ::1", ip, err)
	}
	if h, err := UDPHostname(ctx, NetDial, s.UDPAddr().String()); err != nil || h != "pod6" {
		t.Errorf("UDPHostname = %q, %v", h, err)
	}
}

// TestDialEndpoint has one server dial another over HTTP and UDP, and dial nowhere.
func TestDialEndpoint(t *testing.T) {
	client := serve(t, "client")
	target := serve(t, "target")
	closed := closedPort(t)
	tcpPort := target.HTTPAddr().(*net.TCPAddr).Port
	udpPort := target.UDPAddr().(*net.UDPAddr).Port
	cases := []struct {
		name      string
		req       DialRequest
		responses []string
		errors    int
	}{
		{"http hostname x3", DialRequest{Host: "127.0.0.1", Port: tcpPort, Request: "hostname", Tries: 3}, []string{"target", "target", "target"}, 0},
		{"http with slash and query", DialRequest{Host: "127.0.0.1", Port: tcpPort, Request: "/echo?msg=hi", Protocol: "http"}, []string{"hi"}, 0},
		{"http status is still an answer", DialRequest{Host: "127.0.0.1", Port: tcpPort, Request: "echo?msg=no&code=503"}, []string{"no"}, 0},
		{"udp hostname x2", DialRequest{Host: "127.0.0.1", Port: udpPort, Request: "hostname", Protocol: "udp", Tries: 2}, []string{"target", "target"}, 0},
		{"udp echo", DialRequest{Host: "127.0.0.1", Port: udpPort, Request: "echo Mixed", Protocol: "UDP"}, []string{"Mixed"}, 0},
		{"http refused", DialRequest{Host: "127.0.0.1", Port: closed, Request: "hostname", Tries: 2}, nil, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := Dial(testCtx(t, 10*time.Second), NetDial, client.HTTPAddr().String(), c.req)
			if err != nil {
				t.Fatalf("Dial: %v", err)
			}
			if strings.Join(res.Responses, ",") != strings.Join(c.responses, ",") || len(res.Errors) != c.errors {
				t.Errorf("Dial = %+v, want responses %v and %d errors", res, c.responses, c.errors)
			}
		})
	}
}

// TestDialEndpointRefusesBadParameters checks /dial's 400s: nothing is dialled.
func TestDialEndpointRefusesBadParameters(t *testing.T) {
	s := serve(t, "client")
	addr := s.HTTPAddr().String()
	for _, q := range []string{
		"host=127.0.0.1&port=80",                             // no request
		"host=127.0.0.1&port=80&request=hostname&tries=0",    // tries out of range
		"host=127.0.0.1&port=80&request=hostname&tries=101",  // tries above MaxDialTries
		"host=127.0.0.1&port=80&request=hostname&tries=x",    // tries not a number
		"host=127.0.0.1&port=0&request=hostname",             // port out of range
		"host=&port=80&request=hostname",                     // no host
		"host=127.0.0.1&port=80&request=hostname&protocol=x", // unknown protocol
	} {
		_, status, err := httpGet(testCtx(t, 2*time.Second), NetDial, addr, "/dial?"+q)
		if status != 400 || err == nil {
			t.Errorf("%s: status %d, err %v, want 400", q, status, err)
		}
	}
	if _, err := Dial(testCtx(t, time.Second), NetDial, addr, DialRequest{Tries: MaxDialTries + 1}); err == nil {
		t.Error("client Dial accepted tries above MaxDialTries")
	}
}

// TestDialResultJSON pins the wire names Kubernetes' e2e checks parse.
func TestDialResultJSON(t *testing.T) {
	b, _ := json.Marshal(DialResult{Responses: []string{"a"}})
	if string(b) != `{"responses":["a"]}` {
		t.Errorf("got %s", b)
	}
	b, _ = json.Marshal(DialResult{Errors: []string{"e"}})
	if string(b) != `{"errors":["e"]}` {
		t.Errorf("got %s", b)
	}
}

// closedPort is a loopback TCP port nothing listens on.
func closedPort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return p
}

// TestWaitReady checks that the wait ends once a late server listens, and that it gives up
// after its tries on no server and on a terminating one.
// TestSetReadiness: /setreadiness?ready=false fails /readyz (and a kubelet's
// probe of it) while the rest is served; ready=true undoes it.
func TestSetReadiness(t *testing.T) {
	s := serve(t, "pod-r")
	addr := s.HTTPAddr().String()
	ctx := testCtx(t, 5*time.Second)
	status := func() int {
		t.Helper()
		code, err := Status(ctx, NetDial, addr, "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		return code
	}
	if got := status(); got != 200 {
		t.Fatalf("/readyz %d before, want 200", got)
	}
	if err := SetReadiness(ctx, NetDial, addr, false); err != nil {
		t.Fatal(err)
	}
	if got := status(); got != 503 {
		t.Errorf("/readyz %d after ready=false, want 503", got)
	}
	if ok, err := Ready(ctx, NetDial, addr); ok || err != nil {
		t.Errorf("Ready = %v, %v after ready=false", ok, err)
	}
	if h, err := Hostname(ctx, NetDial, addr); err != nil || h != "pod-r" {
		t.Errorf("an unready server still serves: Hostname = %q, %v", h, err)
	}
	if err := SetReadiness(ctx, NetDial, addr, true); err != nil {
		t.Fatal(err)
	}
	if got := status(); got != 200 {
		t.Errorf("/readyz %d after ready=true, want 200", got)
	}
	if _, err := Status(ctx, NetDial, net.JoinHostPort("127.0.0.1", strconv.Itoa(closedPort(t))), "/readyz"); err == nil {
		t.Error("Status of no server: no error")
	}
}

func TestWaitReady(t *testing.T) {
	port := closedPort(t)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	waited := make(chan error, 1)
	ctx := testCtx(t, 5*time.Second)
	go func() { waited <- WaitReady(ctx, NetDial, addr, 20*time.Millisecond, 100) }()
	time.Sleep(100 * time.Millisecond)
	serve(t, "late", func(o *Options) { o.HTTPPort = port })
	if err := <-waited; err != nil {
		t.Errorf("WaitReady on a late server: %v", err)
	}
	if err := WaitReady(testCtx(t, 5*time.Second), NetDial, net.JoinHostPort("127.0.0.1", strconv.Itoa(closedPort(t))),
		time.Millisecond, 3); err == nil || !strings.Contains(err.Error(), "after 3 tries") {
		t.Errorf("WaitReady on no server: %v", err)
	}
	term := serve(t, "term", func(o *Options) { o.DelayShutdown = -1 })
	term.Terminate()
	if err := WaitReady(testCtx(t, 5*time.Second), NetDial, term.HTTPAddr().String(), time.Millisecond, 2); err == nil ||
		!strings.Contains(err.Error(), "terminating") {
		t.Errorf("WaitReady on a terminating server: %v", err)
	}
}
