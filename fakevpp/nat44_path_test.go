package fakevpp

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/binapi/nat_types"
)

const vip = "10.96.0.10:80"

func TestStaticMappingOut2In(t *testing.T) {
	e := newEnv(t)
	e.standardNAT()
	e.ok(e.static(true, "10.1.1.5:8080", "1.1.1.1:80", tcp, 0))
	tr := e.v.Trace(tcpSyn("eth0", "8.8.8.8:5555", "1.1.1.1:80"))
	requireForward(t, tr, "tap0", "8.8.8.8:5555", "10.1.1.5:8080")
	assert.True(t, tr.ReplyOK, steps(tr))
	assert.False(t, tr.SNAT)
	assert.Equal(t, []netip.AddrPort{ap("10.1.1.5:8080")}, tr.Endpoints)
	assert.Contains(t, steps(tr), "nat44-ed-out2in: static 1.1.1.1:80 → 10.1.1.5:8080 (session created)")

	r := e.v.TraceReply(tr)
	requireForward(t, r, "eth0", "1.1.1.1:80", "8.8.8.8:5555")

	s := e.sessions("10.1.1.5")
	require.Len(t, s, 1)
	assert.Equal(t, nat_types.NAT_IS_EXT_HOST_VALID|nat_types.NAT_IS_STATIC, s[0].Flags)
	assert.Equal(t, a4("8.8.8.8"), s[0].ExtHostAddress)
	assert.Equal(t, uint16(5555), s[0].ExtHostPort)
	assert.Equal(t, a4("1.1.1.1"), s[0].OutsideIPAddress)
	assert.Equal(t, uint16(80), s[0].OutsidePort)
	assert.Equal(t, uint16(tcp), s[0].Protocol)
	assert.Equal(t, uint32(3), s[0].TotalPkts, "SYN, and twice the SYN|ACK (ReplyOK and TraceReply)")

	u, err := e.nat.Nat44UserDump(e.ctx, &nat44_ed.Nat44UserDump{})
	e.ok(err)
	users := recvAll(t, u.Recv)
	require.Len(t, users, 1)
	assert.Equal(t, uint32(1), users[0].Nstaticsessions)
}

// LB weights (docs/fakevpp.md#lb-backend-choice).
func TestLBWeights(t *testing.T) {
	count := func(t *testing.T, weights ...uint8) map[netip.AddrPort]int {
		e := newEnv(t, WithSeed(7))
		e.standardNAT()
		e.ok(e.lb(true, vip, nat_types.NAT_IS_OUT2IN_ONLY, 0, local("10.1.1.2:8080", weights[0]), local("10.1.1.3:8080", weights[1])))
		got := map[netip.AddrPort]int{}
		for i := 0; i < 1000; i++ {
			tr := e.v.Trace(tcpSyn("eth0", fmt.Sprintf("192.168.0.7:%d", 10000+i), vip))
			if tr.Verdict != Forward {
				got[netip.AddrPort{}]++
				continue
			}
			require.True(t, tr.ReplyOK, steps(tr))
			got[tr.Out.Dst]++
		}
		return got
	}
	t.Run("weight 0 never chosen", func(t *testing.T) {
		assert.Equal(t, map[netip.AddrPort]int{ap("10.1.1.2:8080"): 1000}, count(t, 100, 0))
	})
	t.Run("70/30", func(t *testing.T) {
		got := count(t, 70, 30)
		assert.InDelta(t, 700, got[ap("10.1.1.2:8080")], 60)
		assert.InDelta(t, 300, got[ap("10.1.1.3:8080")], 60)
	})
	t.Run("all zero drops and is flagged", func(t *testing.T) {
		e := newEnv(t)
		e.standardNAT()
		e.ok(e.lb(true, vip, nat_types.NAT_IS_OUT2IN_ONLY, 0, local("10.1.1.2:8080", 0), local("10.1.1.3:8080", 0)))
		assert.True(t, hasViolation(e.v, "LB probabilities all 0"))
		requireDrop(t, e.v.Trace(tcpSyn("eth0", "192.168.0.7:1000", vip)), "drew no backend")
	})
	// VPP keeps each local's running sum in a u8 (nat44_lb_addr_port_t.prefix).
	t.Run("a sum of 256 wraps to 0: VPP divides by zero", func(t *testing.T) {
		e := newEnv(t)
		e.standardNAT()
		e.ok(e.lb(true, vip, nat_types.NAT_IS_OUT2IN_ONLY, 0, local("10.1.1.2:8080", 128), local("10.1.1.3:8080", 128)))
		requireDrop(t, e.v.Trace(tcpSyn("eth0", "192.168.0.7:1000", vip)), "drew no backend")
		assert.True(t, hasViolation(e.v, "LB prefix 0"))
	})
	t.Run("a sum past 255 draws from the wrapped range", func(t *testing.T) {
		// Prefixes 200 and 144 (400 mod 256): the draw is 1 + r % 144, so
		// the first local (prefix 200) takes every session.
		got := count(t, 200, 200)
		assert.Equal(t, 1000, got[ap("10.1.1.2:8080")])
	})
	// NAT44-ED draws from random_u32, an LCG whose lowest bit alternates:
	// with weights 1:1 (a sum of 2) new sessions strictly alternate between
	// the two locals, as on a real VPP.
	t.Run("weights 1:1 alternate with VPP's generator", func(t *testing.T) {
		e := newEnv(t)
		e.standardNAT()
		e.ok(e.lb(true, vip, nat_types.NAT_IS_OUT2IN_ONLY, 0, local("10.1.1.2:8080", 1), local("10.1.1.3:8080", 1)))
		var prev netip.AddrPort
		for i := range 20 {
			tr := e.v.Trace(tcpSyn("eth0", fmt.Sprintf("192.168.0.7:%d", 20000+i), vip))
			require.Equal(t, Forward, tr.Verdict, steps(tr))
			require.NotEqual(t, prev, tr.Out.Dst, "draw %d repeats the previous local", i)
			prev = tr.Out.Dst
		}
	})
	t.Run("endpoints list the eligible locals", func(t *testing.T) {
		e := newEnv(t)
		e.standardNAT()
		e.ok(e.lb(true, vip, nat_types.NAT_IS_OUT2IN_ONLY, 0, local("10.1.1.2:8080", 10), local("10.1.1.3:8080", 0), local("10.1.1.4:8080", 10)))
		tr := e.v.Trace(tcpSyn("eth0", "192.168.0.7:1000", vip))
		assert.Equal(t, []netip.AddrPort{ap("10.1.1.2:8080"), ap("10.1.1.4:8080")}, tr.Endpoints)
		ack := tcpSyn("eth0", "192.168.0.7:1000", vip)
		ack.TCPFlags = tcpACK
		tr2 := e.v.Trace(ack)
		assert.Equal(t, []netip.AddrPort{tr.Out.Dst}, tr2.Endpoints, "later packets follow the session")
	})
}

// Self twice-NAT (docs/fakevpp.md#twice-nat), the hairpin of a pod to its own service.
func TestSelfTwiceNATHairpin(t *testing.T) {
	e := newEnv(t)
	e.standardNAT()
	e.pool("10.1.1.254", nat_types.NAT_IS_TWICE_NAT)
	e.ok(e.lb(true, vip, nat_types.NAT_IS_OUT2IN_ONLY|nat_types.NAT_IS_SELF_TWICE_NAT, 0,
		local("10.1.1.2:8080", 50), local("10.1.1.3:8080", 50)))
	seen := map[string]bool{}
	for i := 0; i < 40 && len(seen) < 2; i++ {
		src := fmt.Sprintf("10.1.1.2:%d", 40000+i)
		tr := e.v.Trace(tcpSyn("tap0", src, vip))
		require.Equal(t, Forward, tr.Verdict, steps(tr))
		require.True(t, tr.ReplyOK, "replies come back as %s → %s\n%s", vip, src, steps(tr))
		switch tr.Out.Dst {
		case ap("10.1.1.2:8080"):
			seen["self"] = true
			assert.Equal(t, addr("10.1.1.254"), tr.Out.Src.Addr())
			assert.GreaterOrEqual(t, tr.Out.Src.Port(), uint16(1024))
			assert.True(t, tr.SNAT)
		case ap("10.1.1.3:8080"):
			seen["other"] = true
			assert.Equal(t, ap(src), tr.Out.Src, "no twice-NAT toward another backend")
		default:
			t.Fatalf("unexpected destination %s", tr.Out.Dst)
		}
	}
	require.Len(t, seen, 2, "both backends drawn")
	var twice int
	for _, s := range e.sessions("10.1.1.2") {
		if s.Flags&nat_types.NAT_IS_TWICE_NAT != 0 {
			twice++
			assert.Equal(t, a4("10.1.1.254"), s.ExtHostNatAddress)
			assert.Equal(t, a4("10.1.1.2"), s.ExtHostAddress)
		}
	}
	assert.NotZero(t, twice)
}

// Twice-NAT (docs/fakevpp.md#twice-nat).
func TestTwiceNAT(t *testing.T) {
	e := newEnv(t)
	e.standardNAT()
	e.pool("10.1.1.253", nat_types.NAT_IS_TWICE_NAT)
	e.ok(e.static(true, "10.1.1.5:8080", "1.1.1.1:80", tcp, nat_types.NAT_IS_TWICE_NAT))
	tr := e.v.Trace(tcpSyn("eth0", "8.8.8.8:5555", "1.1.1.1:80"))
	require.Equal(t, Forward, tr.Verdict, steps(tr))
	assert.Equal(t, addr("10.1.1.253"), tr.Out.Src.Addr())
	assert.Equal(t, ap("10.1.1.5:8080"), tr.Out.Dst)
	assert.True(t, tr.ReplyOK, steps(tr))

	// Flows started by the pod are never twice-NATed.
	requireForward(t, e.v.Trace(tcpSyn("tap0", "10.1.1.5:8080", "8.8.8.8:53")), "eth0", "1.1.1.1:80", "8.8.8.8:53")
	requireForward(t, e.v.Trace(tcpSyn("tap0", "10.1.1.5:40000", "8.8.8.8:53")), "eth0", "1.1.1.1:40000", "8.8.8.8:53")

	t.Run("PoolIPAddress", func(t *testing.T) {
		e := newEnv(t)
		e.standardNAT()
		e.pool("10.1.1.253", nat_types.NAT_IS_TWICE_NAT)
		e.pool("10.1.1.252", nat_types.NAT_IS_TWICE_NAT)
		_, err := e.nat.Nat44AddDelStaticMappingV2(e.ctx, &nat44_ed.Nat44AddDelStaticMappingV2{IsAdd: true,
			Flags: nat_types.NAT_IS_TWICE_NAT, PoolIPAddress: a4("10.1.1.252"), LocalIPAddress: a4("10.1.1.5"),
			ExternalIPAddress: a4("1.1.1.1"), Protocol: tcp, LocalPort: 8080, ExternalPort: 80,
			ExternalSwIfIndex: ^interface_types.InterfaceIndex(0), VrfID: ^uint32(0)})
		e.ok(err)
		tr := e.v.Trace(tcpSyn("eth0", "8.8.8.8:5555", "1.1.1.1:80"))
		assert.Equal(t, addr("10.1.1.252"), tr.Out.Src.Addr(), steps(tr))
	})
	t.Run("empty twice-NAT pool drops", func(t *testing.T) {
		e := newEnv(t)
		e.standardNAT()
		e.ok(e.static(true, "10.1.1.5:8080", "1.1.1.1:80", tcp, nat_types.NAT_IS_TWICE_NAT))
		requireDrop(t, e.v.Trace(tcpSyn("eth0", "8.8.8.8:5555", "1.1.1.1:80")), "out of ports")
	})
}

// A twice-NAT port is drawn once: VPP's add of the reverse flow overwrites
// a live session's (docs/fakevpp.md, "Twice-NAT port attempts"). The
// lab's busy NodePort met it on a real VPP 25.10 (docs/renderer-nat44.md,
// "Twice-NAT ports"): once a new client's flow takes an open flow's port,
// the open flow's replies go to the new client.
func TestTwiceNATPortTakenFromALiveFlow(t *testing.T) {
	e := newEnv(t)
	e.standardNAT()
	e.pool("10.1.1.253", nat_types.NAT_IS_TWICE_NAT)
	e.ok(e.static(true, "10.1.1.5:8080", "1.1.1.1:80", tcp, nat_types.NAT_IS_TWICE_NAT))
	holder := map[uint16]string{} // twice-NAT source port → the client whose flow took it
	var older, newer string
	for port := 1024; port < 65536 && older == ""; port++ {
		client := fmt.Sprintf("8.8.%d.%d:%d", port>>8&0xff, port&0xff, port)
		tr := e.v.Trace(tcpSyn("eth0", client, "1.1.1.1:80"))
		require.Equal(t, Forward, tr.Verdict, steps(tr))
		require.True(t, tr.ReplyOK, "a new flow's reply comes back to it; steps:\n%s", steps(tr))
		if prev, taken := holder[tr.Out.Src.Port()]; taken {
			older, newer = prev, client
		}
		holder[tr.Out.Src.Port()] = client
	}
	require.NotEmpty(t, older, "64,512 flows and no port drawn twice")
	t.Logf("flow %d (%s) took the twice-NAT port of %s", len(holder)+1, newer, older)
	assert.True(t, hasViolation(e.v, "session key overwritten"))
	tr := e.v.Trace(tcpSyn("eth0", older, "1.1.1.1:80"))
	require.Equal(t, Forward, tr.Verdict, steps(tr))
	assert.False(t, tr.ReplyOK, "the older flow (%s) still gets its replies after %s took its port; steps:\n%s", older, newer, steps(tr))
	tr = e.v.Trace(tcpSyn("eth0", newer, "1.1.1.1:80"))
	assert.True(t, tr.ReplyOK, "the newer flow gets the replies; steps:\n%s", steps(tr))
}

// Port-preserving dynamic SNAT (docs/fakevpp.md#dynamic-snat).
func TestDynamicSNAT(t *testing.T) {
	e := newEnv(t)
	e.standardNAT()
	requireForward(t, e.v.Trace(udpPkt("tap0", "10.1.1.2:40000", "8.8.4.4:53")), "eth0", "1.1.1.1:40000", "8.8.4.4:53")

	tr := e.v.Trace(udpPkt("tap0", "10.1.1.3:40000", "8.8.4.4:53"))
	require.Equal(t, Forward, tr.Verdict)
	assert.Equal(t, addr("1.1.1.1"), tr.Out.Src.Addr())
	assert.NotEqual(t, uint16(40000), tr.Out.Src.Port())
	assert.GreaterOrEqual(t, tr.Out.Src.Port(), uint16(1024))
	assert.True(t, tr.ReplyOK && tr.SNAT)

	requireForward(t, e.v.Trace(udpPkt("tap0", "10.1.1.3:40000", "8.8.8.8:53")), "eth0", "1.1.1.1:40000", "8.8.8.8:53")
	tr = e.v.Trace(udpPkt("tap0", "10.1.1.4:500", "8.8.8.8:53"))
	assert.GreaterOrEqual(t, tr.Out.Src.Port(), uint16(1024), "ports below 1024 are remapped")

	_, err := e.nat.Nat44AddDelAddressRange(e.ctx, &nat44_ed.Nat44AddDelAddressRange{FirstIPAddress: a4("1.1.1.1"), LastIPAddress: a4("1.1.1.1"), VrfID: ^uint32(0)})
	e.ok(err)
	assert.Empty(t, e.sessions("10.1.1.2"), "deleting the address deletes its dynamic sessions")
	for _, p := range []Packet{udpPkt("tap0", "10.1.1.2:40000", "8.8.4.4:53"), udpPkt("tap0", "10.1.1.3:40000", "8.8.4.4:53"), udpPkt("tap0", "10.1.1.3:40000", "8.8.8.8:53")} {
		requireDrop(t, e.v.Trace(p), "out of ports")
	}

	t.Run("ICMP echo", func(t *testing.T) {
		e := newEnv(t)
		e.standardNAT()
		tr := e.v.Trace(Packet{Ingress: "tap0", Protocol: 1, Src: ap("10.1.1.2:7"), Dst: ap("8.8.8.8:0")})
		require.Equal(t, Forward, tr.Verdict, steps(tr))
		assert.Equal(t, addr("1.1.1.1"), tr.Out.Src.Addr())
		assert.Equal(t, tr.Out.Src.Port(), tr.Out.Dst.Port(), "the identifier is in both ports")
		assert.True(t, tr.ReplyOK, steps(tr))
	})
}

// Forwarding (docs/fakevpp.md#forwarding).
func TestForwarding(t *testing.T) {
	e := newEnv(t)
	e.standardNAT()
	requireDrop(t, e.v.Trace(tcpSyn("eth0", "8.8.8.8:1234", "10.1.1.2:22")), "no translation")
	fwd := func(on bool) {
		_, err := e.nat.Nat44ForwardingEnableDisable(e.ctx, &nat44_ed.Nat44ForwardingEnableDisable{Enable: on})
		e.ok(err)
	}
	fwd(true)
	tr := e.v.Trace(tcpSyn("eth0", "8.8.8.8:1234", "10.1.1.2:22"))
	requireForward(t, tr, "tap0", "8.8.8.8:1234", "10.1.1.2:22")
	assert.True(t, tr.ReplyOK, "the reply passes untranslated: %s", steps(tr))
	requireForward(t, e.v.Trace(tcpSyn("tap0", "10.1.1.3:40000", "8.8.8.8:443")), "eth0", "10.1.1.3:40000", "8.8.8.8:443")
	require.Len(t, e.sessions("10.1.1.2"), 1)

	fwd(false)
	assert.Empty(t, e.sessions("10.1.1.2"), "bypass sessions are deleted")
	ack := tcpSyn("tap0", "10.1.1.2:22", "8.8.8.8:1234")
	ack.TCPFlags = tcpACK
	requireDrop(t, e.v.Trace(ack), "non-SYN")

	// Replies of static-mapping sessions are still translated with
	// forwarding on.
	fwd(true)
	e.ok(e.static(true, "10.1.1.5:8080", "1.1.1.1:80", tcp, 0))
	tr = e.v.Trace(tcpSyn("eth0", "8.8.8.8:5555", "1.1.1.1:80"))
	assert.True(t, tr.ReplyOK, steps(tr))
}

// TCP without a session (docs/fakevpp.md#nat44-ed-sessions).
func TestTCPWithoutSession(t *testing.T) {
	e := newEnv(t)
	e.standardNAT()
	ack := func(ingress, src, dst string) Packet {
		p := tcpSyn(ingress, src, dst)
		p.TCPFlags = tcpACK
		return p
	}
	requireDrop(t, e.v.Trace(ack("eth0", "8.8.8.8:80", "1.1.1.1:40000")), "no translation")

	tr := e.v.Trace(tcpSyn("tap0", "10.1.1.2:40000", "8.8.8.8:80"))
	require.True(t, tr.ReplyOK)
	requireForward(t, e.v.Trace(ack("tap0", "10.1.1.2:40000", "8.8.8.8:80")), "eth0", "1.1.1.1:40000", "8.8.8.8:80")
	e.ok(e.delSession("10.1.1.2:40000", "8.8.8.8:80", tcp))
	e.expect(-6, e.delSession("10.1.1.2:40000", "8.8.8.8:80", tcp))
	requireDrop(t, e.v.Trace(ack("tap0", "10.1.1.2:40000", "8.8.8.8:80")), "non-SYN")
	requireDrop(t, e.v.Trace(ack("eth0", "8.8.8.8:80", "1.1.1.1:40000")), "no translation")

	requireForward(t, e.v.Trace(udpPkt("tap0", "10.1.1.2:40001", "8.8.8.8:53")), "eth0", "1.1.1.1:40001", "8.8.8.8:53")
	e.ok(e.delSession("10.1.1.2:40001", "8.8.8.8:53", udp))
	requireForward(t, e.v.Trace(udpPkt("tap0", "10.1.1.2:40001", "8.8.8.8:53")), "eth0", "1.1.1.1:40001", "8.8.8.8:53")
}

// Static-mapping deletion with live sessions deletes only the first
// session (VPP quirk: docs/fakevpp.md#code-findings-and-decisions).
func TestStaticMappingDeleteKeepsLaterSessions(t *testing.T) {
	e := newEnv(t)
	e.standardNAT()
	e.ok(e.static(true, "10.1.1.5:8080", "1.1.1.1:80", tcp, 0))
	require.True(t, e.v.Trace(tcpSyn("eth0", "8.8.8.8:1000", "1.1.1.1:80")).ReplyOK)
	require.True(t, e.v.Trace(tcpSyn("eth0", "8.8.4.4:2000", "1.1.1.1:80")).ReplyOK)
	e.ok(e.static(false, "10.1.1.5:8080", "1.1.1.1:80", tcp, 0))
	require.Len(t, e.sessions("10.1.1.5"), 1)
	assert.True(t, hasViolation(e.v, "static mapping delete left sessions"))

	ack := func(src string) Packet {
		p := tcpSyn("eth0", src, "1.1.1.1:80")
		p.TCPFlags = tcpACK
		return p
	}
	requireDrop(t, e.v.Trace(ack("8.8.8.8:1000")), "no translation")
	requireForward(t, e.v.Trace(ack("8.8.4.4:2000")), "tap0", "8.8.4.4:2000", "10.1.1.5:8080")
	requireDrop(t, e.v.Trace(tcpSyn("eth0", "8.8.8.8:1001", "1.1.1.1:80")), "no translation")

	// The survivor times out like any session.
	e.v.Advance(7441 * time.Second)
	requireDrop(t, e.v.Trace(ack("8.8.4.4:2000")), "no translation")
}

// Affinity (docs/fakevpp.md#lb-backend-choice).
func TestAffinity(t *testing.T) {
	e := newEnv(t)
	e.standardNAT()
	e.ok(e.lb(true, vip, nat_types.NAT_IS_OUT2IN_ONLY, 10, local("10.1.1.2:8080", 50), local("10.1.1.3:8080", 50)))
	var backend netip.AddrPort
	for i := 0; i < 5; i++ {
		src := fmt.Sprintf("8.8.8.8:%d", 1000+i)
		tr := e.v.Trace(tcpSyn("eth0", src, vip))
		require.Equal(t, Forward, tr.Verdict, steps(tr))
		if i == 0 {
			backend = tr.Out.Dst
			assert.Len(t, tr.Endpoints, 2, "first connection: a draw")
		} else {
			assert.Equal(t, backend, tr.Out.Dst, "connection %d", i)
			assert.Equal(t, []netip.AddrPort{backend}, tr.Endpoints, "affinity: no draw")
			assert.Contains(t, steps(tr), "affinity")
		}
		e.ok(e.delSession(backend.String(), src, tcp))
		e.v.Advance(9 * time.Second)
	}
	e.v.Advance(2 * time.Second)
	tr := e.v.Trace(tcpSyn("eth0", "8.8.8.8:2000", vip))
	assert.Len(t, tr.Endpoints, 2, "more than 10 s idle: a new draw")
	assert.NotContains(t, steps(tr), "affinity")

	tr = e.v.Trace(tcpSyn("eth0", "8.8.4.4:2000", vip))
	assert.Len(t, tr.Endpoints, 2, "another client is drawn independently")

	// A non-SYN without session after the draw locks a record forever in
	// VPP; the fake flags it.
	p := tcpSyn("eth0", "9.9.9.9:1", vip)
	p.TCPFlags = tcpACK
	requireDrop(t, e.v.Trace(p), "non-SYN")
	assert.True(t, hasViolation(e.v, "affinity record locked by a dropped packet"))
}

// Hairpinning from an inside-only interface (docs/fakevpp.md#hairpinning).
func TestInsideOnlyHairpin(t *testing.T) {
	e := newEnv(t)
	e.standardNAT()
	e.v.AddInterface("tap1", pfx("10.1.2.1/24"))
	e.v.AddRoute(pfx("10.1.1.9/32"), "tap1")
	e.ok(e.natRole("tap1", true, nat_types.NAT_IS_INSIDE))
	e.ok(e.static(true, "10.1.1.5:8080", "1.1.1.1:80", tcp, 0))
	tr := e.v.Trace(tcpSyn("tap1", "10.1.1.9:40000", "1.1.1.1:80"))
	requireForward(t, tr, "tap0", "1.1.1.1:40000", "10.1.1.5:8080")
	assert.True(t, tr.SNAT)
	assert.False(t, tr.ReplyOK, "the reply keeps the local port 8080 instead of 80 (VPP in2out.c)")
	assert.True(t, hasViolation(e.v, "hairpin reply keeps the local port"))
	r := e.v.TraceReply(tr)
	requireForward(t, r, "tap1", "1.1.1.1:8080", "10.1.1.9:40000")
	s := e.sessions("10.1.1.9")
	require.Len(t, s, 1)

	e.ok(e.lb(true, "10.96.0.20:80", nat_types.NAT_IS_OUT2IN_ONLY, 0, local("10.1.1.2:8080", 50), local("10.1.1.3:8080", 50)))
	requireDrop(t, e.v.Trace(tcpSyn("tap1", "10.1.1.9:40001", "10.96.0.20:80")), "unsupported")
	assert.True(t, hasViolation(e.v, "LB hairpin on an inside-only interface"))
}

func TestOut2InOnlyMapping(t *testing.T) {
	e := newEnv(t)
	e.standardNAT()
	e.ok(e.static(true, "10.1.1.5:8080", "1.1.1.1:81", tcp, nat_types.NAT_IS_OUT2IN_ONLY))
	requireForward(t, e.v.Trace(tcpSyn("eth0", "8.8.8.8:1", "1.1.1.1:81")), "tap0", "8.8.8.8:1", "10.1.1.5:8080")
	requireForward(t, e.v.Trace(tcpSyn("tap0", "10.1.1.5:8080", "8.8.4.4:53")), "eth0", "1.1.1.1:8080", "8.8.4.4:53")
}

func TestIdentityMapping(t *testing.T) {
	e := newEnv(t)
	e.standardNAT()
	requireDrop(t, e.v.Trace(tcpSyn("eth0", "8.8.8.8:1", "192.168.0.1:22")), "no translation")
	_, err := e.nat.Nat44AddDelIdentityMapping(e.ctx, &nat44_ed.Nat44AddDelIdentityMapping{IsAdd: true,
		IPAddress: a4("192.168.0.1"), Protocol: tcp, Port: 22, SwIfIndex: ^interface_types.InterfaceIndex(0)})
	e.ok(err)
	tr := e.v.Trace(tcpSyn("eth0", "8.8.8.8:1", "192.168.0.1:22"))
	require.Equal(t, Local, tr.Verdict, steps(tr))

	_, err = e.nat.Nat44AddDelIdentityMapping(e.ctx, &nat44_ed.Nat44AddDelIdentityMapping{IsAdd: true,
		Flags: nat_types.NAT_IS_ADDR_ONLY, IPAddress: a4("10.1.1.7"), SwIfIndex: ^interface_types.InterfaceIndex(0)})
	e.ok(err)
	requireForward(t, e.v.Trace(tcpSyn("tap0", "10.1.1.7:40000", "8.8.8.8:443")), "eth0", "10.1.1.7:40000", "8.8.8.8:443")
	assert.Empty(t, e.sessions("10.1.1.7"), "identity traffic creates no session")
}

func TestLBSessionsAndLocals(t *testing.T) {
	e := newEnv(t)
	e.standardNAT()
	e.ok(e.lb(true, vip, nat_types.NAT_IS_OUT2IN_ONLY, 0, local("10.1.1.2:8080", 50), local("10.1.1.3:8080", 50)))
	tr := e.v.Trace(tcpSyn("eth0", "8.8.8.8:1000", vip))
	require.Equal(t, Forward, tr.Verdict)
	chosen := tr.Out.Dst
	ack := tcpSyn("eth0", "8.8.8.8:1000", vip)
	ack.TCPFlags = tcpACK

	// A new local serves only new sessions.
	e.ok(e.lbLocal(true, vip, local("10.1.1.4:8080", 200)))
	for i := 0; i < 3; i++ {
		requireForward(t, e.v.Trace(ack), "tap0", "8.8.8.8:1000", chosen.String())
	}

	// Deleting the chosen local deletes its sessions at once.
	e.ok(e.lbLocal(false, vip, local(chosen.String(), 50)))
	assert.Empty(t, e.sessions(chosen.Addr().String()))
	requireDrop(t, e.v.Trace(ack), "non-SYN")
}

func TestSessionTimeouts(t *testing.T) {
	e := newEnv(t)
	e.standardNAT()
	tr := e.v.Trace(udpPkt("tap0", "10.1.1.2:40000", "8.8.8.8:53"))
	require.True(t, tr.ReplyOK)
	reply := udpPkt("eth0", "8.8.8.8:53", "1.1.1.1:40000")
	e.v.Advance(299 * time.Second)
	requireForward(t, e.v.Trace(reply), "tap0", "8.8.8.8:53", "10.1.1.2:40000")
	e.v.Advance(300 * time.Second)
	s := e.sessions("10.1.1.2")
	require.Len(t, s, 1)
	assert.True(t, s[0].IsTimedOut, "expired sessions stay until hit")
	requireDrop(t, e.v.Trace(reply), "no translation")
	assert.Empty(t, e.sessions("10.1.1.2"))

	// NatSetTimeouts applies at once to existing sessions.
	e.v.Trace(udpPkt("tap0", "10.1.1.2:40000", "8.8.8.8:53"))
	_, err := e.nat.NatSetTimeouts(e.ctx, &nat44_ed.NatSetTimeouts{UDP: 0, TCPEstablished: 7440, TCPTransitory: 240, ICMP: 60})
	e.ok(err)
	requireDrop(t, e.v.Trace(reply), "no translation")
}

// The output feature SNATs traffic leaving the uplink even with forwarding
// on, and translates the replies back on the way in.
func TestOutputFeature(t *testing.T) {
	e := newEnv(t)
	e.enableNAT()
	e.pool("1.1.1.1", 0)
	_, err := e.nat.Nat44EdAddDelOutputInterface(e.ctx, &nat44_ed.Nat44EdAddDelOutputInterface{IsAdd: true, SwIfIndex: e.sw("eth0")})
	e.ok(err)
	_, err = e.nat.Nat44ForwardingEnableDisable(e.ctx, &nat44_ed.Nat44ForwardingEnableDisable{Enable: true})
	e.ok(err)
	tr := e.v.Trace(tcpSyn("tap0", "10.1.1.2:40000", "8.8.8.8:443"))
	requireForward(t, tr, "eth0", "1.1.1.1:40000", "8.8.8.8:443")
	assert.True(t, tr.ReplyOK, steps(tr))
	assert.Contains(t, steps(tr), "nat44-ed-in2out-output")
	// Pod to pod does not leave through eth0 and is not translated.
	requireForward(t, e.v.Trace(tcpSyn("tap0", "10.1.1.2:40000", "10.1.1.3:80")), "tap0", "10.1.1.2:40000", "10.1.1.3:80")
}

// Inside-to-inside traffic through an inside+outside interface is SNATed
// while forwarding is off (docs/fakevpp.md#in2out).
func TestInsideToInsideOnInsideOutside(t *testing.T) {
	e := newEnv(t)
	e.standardNAT()
	tr := e.v.Trace(tcpSyn("tap0", "10.1.1.2:40000", "10.1.1.3:80"))
	requireForward(t, tr, "tap0", "1.1.1.1:40000", "10.1.1.3:80")
}

func TestTraceBasics(t *testing.T) {
	e := newEnv(t)
	requireDrop(t, e.v.Trace(tcpSyn("nope", "1.2.3.4:1", "5.6.7.8:2")), "unknown ingress interface")
	requireDrop(t, e.v.Trace(Packet{Ingress: "eth0", Protocol: tcp, Src: ap("1.2.3.4:1"), Dst: ap("[2001:db8::1]:2")}), "malformed")
	tr := e.v.Trace(tcpSyn("eth0", "8.8.8.8:1", "192.168.0.1:22"))
	assert.Equal(t, Local, tr.Verdict)
	assert.False(t, tr.ReplyOK)
	tr = e.v.Trace(tcpSyn("tap0", "10.1.1.2:1", "8.8.8.8:80"))
	requireForward(t, tr, "eth0", "10.1.1.2:1", "8.8.8.8:80")
	assert.True(t, tr.ReplyOK)
	assert.Equal(t, uint8(tcpSYN), tr.In.TCPFlags, "TCP flags 0 mean SYN")
	assert.True(t, strings.HasPrefix(tr.Steps[0], "ip4-input tap0: tcp 10.1.1.2:1 → 8.8.8.8:80 [SYN]"), steps(tr))
	assert.Contains(t, steps(tr), "ip4-lookup: 8.8.8.8 via eth0 (0.0.0.0/0)")

	// Without a route the packet is dropped by the lookup.
	v := New()
	v.AddInterface("tap0", pfx("10.1.1.1/24"), pfx("2001:db8:1::1/64"))
	requireDrop(t, v.Trace(tcpSyn("tap0", "10.1.1.2:1", "8.8.8.8:80")), "ip4-lookup: no route")
	// IPv6 is routed and skips NAT44 (tap0's IPv6 address enables IPv6 on it).
	v.AddInterface("eth6", pfx("2001:db8::1/64"))
	tr = v.Trace(Packet{Ingress: "tap0", Protocol: udp, Src: ap("[2001:db8:1::2]:1"), Dst: ap("[2001:db8::7]:53")})
	requireForward(t, tr, "eth6", "[2001:db8:1::2]:1", "[2001:db8::7]:53")
}
