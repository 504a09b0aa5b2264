package netexec

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"
)

// TestUDPClients checks the UDP commands end to end, ClientIP against the client's own socket.
func TestUDPClients(t *testing.T) {
	s := serve(t, "pod-u")
	addr := s.UDPAddr().String()
	ctx := testCtx(t, 5*time.Second)
	if h, err := UDPHostname(ctx, NetDial, addr); err != nil || h != "pod-u" {
		t.Errorf("UDPHostname = %q, %v", h, err)
	}
	if e, err := UDPEcho(ctx, NetDial, addr, "Mixed Case msg"); err != nil || e != "Mixed Case msg" {
		t.Errorf("UDPEcho = %q, %v", e, err)
	}
	if _, err := UDPEcho(ctx, NetDial, addr, ""); err == nil {
		t.Error("UDPEcho sent an empty echo, which the server never answers")
	}
	var local net.Addr
	seen := func(ctx context.Context, network, a string) (net.Conn, error) {
		c, err := NetDial(ctx, network, a)
		if err == nil {
			local = c.LocalAddr()
		}
		return c, err
	}
	ip, err := UDPClientIP(ctx, seen, addr)
	if err != nil || ip != netip.MustParseAddrPort(local.String()) {
		t.Errorf("UDPClientIP = %v, %v; want the client's socket %v", ip, err, local)
	}
}

// TestUDPServerSurvivesNoise checks that unknown commands get no reply and do not stop the
// server, and that its serverport answer is its own port.
func TestUDPServerSurvivesNoise(t *testing.T) {
	s := serve(t, "pod-u")
	addr := s.UDPAddr().String()
	for _, junk := range []string{"", "dance", "echo", string(make([]byte, 3000))} {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		if reply, err := udpOnce(ctx, NetDial, addr, junk); err == nil {
			t.Errorf("%.10q got reply %q", junk, reply)
		}
		cancel()
	}
	if p, err := udpRequest(testCtx(t, 3*time.Second), NetDial, addr, "serverport"); err != nil ||
		p != itoa(s.UDPAddr().(*net.UDPAddr).Port) {
		t.Errorf("serverport = %q, %v", p, err)
	}
}

// TestUDPRetriesOnFreshSockets checks that a lost reply is retried on a new socket: the first
// try goes to a silent port, the second to the server.
func TestUDPRetriesOnFreshSockets(t *testing.T) {
	s := serve(t, "pod-u")
	silent := silentUDP(t)
	var dials int
	dial := func(ctx context.Context, network, _ string) (net.Conn, error) {
		dials++
		if dials == 1 {
			return NetDial(ctx, network, silent)
		}
		return NetDial(ctx, network, s.UDPAddr().String())
	}
	start := time.Now()
	h, err := UDPHostname(testCtx(t, 5*time.Second), dial, "svc:53")
	if err != nil || h != "pod-u" || dials != 2 {
		t.Errorf("UDPHostname = %q, %v after %d dials", h, err, dials)
	}
	if el := time.Since(start); el < UDPTryTimeout || el > UDPTryTimeout+2*time.Second {
		t.Errorf("took %s, want one try's timeout (%s) and a quick second try", el, UDPTryTimeout)
	}
}
