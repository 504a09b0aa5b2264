package dataplane_test

// Differential cases of NAT44-ED's session life cycle: the TCP state
// machine and the four timeouts as the session dump shows them, session
// deletion, dynamic port allocation at the edges, and protocols without
// ports. VPP's clock cannot be advanced, so the cases lower its timeouts
// to one or a few seconds with nat_set_timeouts and wait (Wait advances
// fakevpp's clock by the same amount), starting at a known point of VPP's
// second (AlignClock): its fast paths round a session's expiry down to a
// whole second.

import (
	"fmt"
	"net/netip"
	"strings"
	"time"

	"go.fd.io/govpp/binapi/cnat"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip_types"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/binapi/nat_types"

	"github.com/vppsvc/vppsvc/dataplane"
	"github.com/vppsvc/vppsvc/fakevpp"

	"testing"
)

// natTopology is a node with NAT44-ED on: uplink0 (192.168.16.1/24)
// outside, host0 (172.30.1.1/24) and tap2 (unnumbered to host0, the pods
// 10.1.1.0/24 behind it) inside, a default route out of uplink0, and the
// uplink's address as the only pool address.
func natTopology(d *diffCase) nat44_ed.RPCService {
	d.t.Helper()
	podNodeTopology(d)
	nat := nat44_ed.NewServiceClient(d.Conn)
	_, err := nat.Nat44EdPluginEnableDisable(d.Ctx, &nat44_ed.Nat44EdPluginEnableDisable{Enable: true})
	d.Must(err)
	_, err = nat.Nat44InterfaceAddDelFeature(d.Ctx, &nat44_ed.Nat44InterfaceAddDelFeature{IsAdd: true, SwIfIndex: d.Sw("uplink0")})
	d.Must(err)
	_, err = nat.Nat44InterfaceAddDelFeature(d.Ctx, &nat44_ed.Nat44InterfaceAddDelFeature{IsAdd: true, Flags: nat_types.NAT_IS_INSIDE, SwIfIndex: d.Sw("tap2")})
	d.Must(err)
	_, err = nat.Nat44AddDelAddressRange(d.Ctx, &nat44_ed.Nat44AddDelAddressRange{IsAdd: true, VrfID: ^uint32(0),
		FirstIPAddress: ip_types.IP4Address{192, 168, 16, 1}, LastIPAddress: ip_types.IP4Address{192, 168, 16, 1}})
	d.Must(err)
	return nat
}

// podNodeTopology is the node of natTopology without NAT44-ED: uplink0
// (192.168.16.1/24), host0 (172.30.1.1/24), tap2 unnumbered to host0 with
// the pods 10.1.1.0/24 behind it, and a default route out of uplink0.
func podNodeTopology(d *diffCase) {
	d.t.Helper()
	n := d.Node
	for _, err := range []error{
		n.AddInterface("uplink0", pfx("192.168.16.1/24")),
		n.AddInterface("host0", pfx("172.30.1.1/24")),
		n.AddInterface("tap2"),
		n.SetUnnumbered("tap2", "host0"),
		n.AddRoute(pfx("10.1.1.0/24"), "tap2"),
		n.AddRoute(pfx("0.0.0.0/0"), "uplink0"),
	} {
		d.Must(err)
	}
}

// setTimeouts sets NAT44-ED's timeouts (seconds) and records the retval.
func setTimeouts(d *diffCase, nat nat44_ed.RPCService, udp, established, transitory, icmp uint32) {
	d.t.Helper()
	_, err := nat.NatSetTimeouts(d.Ctx, &nat44_ed.NatSetTimeouts{UDP: udp, TCPEstablished: established, TCPTransitory: transitory, ICMP: icmp})
	d.Retval(fmt.Sprintf("nat_set_timeouts udp %d established %d transitory %d icmp %d", udp, established, transitory, icmp), err)
}

// Wait lets d pass on the data plane: real time on a real VPP, the fake's
// clock on fakevpp.
func (d *diffCase) Wait(dur time.Duration) {
	if f, ok := d.Node.(*dataplane.Fake); ok {
		f.VPP.Advance(dur)
		return
	}
	time.Sleep(dur)
}

// WaitUntil waits min, then a second at a time until done holds or max has
// passed in all, and returns done's last answer. cnat's scanner ages
// sessions about every second, but it stops each round after 100 µs
// (cnat_session_scan) and resumes a second later, so on a busy machine a
// pass over its table takes several rounds: a record taken at a fixed time
// after an expiry would be the machine's load, not VPP's behaviour. The
// fake ages at once; its clock is moved, not waited for.
func (d *diffCase) WaitUntil(min, max time.Duration, done func() bool) bool {
	d.t.Helper()
	d.Wait(min)
	for waited := min; ; waited += time.Second {
		if done() {
			return true
		}
		if waited >= max {
			return false
		}
		d.Wait(time.Second)
	}
}

// AlignClock waits until the data plane's clock stands frac past a whole
// second (the fake's clock is moved there). NAT44-ED's fast paths and
// session dumps time a session out at the whole second at or before
// last_heard + timeout (docs/fakevpp.md, "Session expiry"): with timeouts
// of a second or two, where VPP's clock stands within its second decides
// whether a reply a few milliseconds after its request still finds the
// session. A case aligns before such steps so that it never straddles a
// whole second.
func (d *diffCase) AlignClock(frac time.Duration) {
	d.t.Helper()
	switch n := d.Node.(type) {
	case *dataplane.Fake:
		up := n.VPP.Uptime()
		at := up.Truncate(time.Second) + frac
		if at < up {
			at += time.Second
		}
		n.VPP.Advance(at - up)
	case dataplane.Real:
		const slack = 40 * time.Millisecond
		for range 5 {
			now, err := vppClock(n)
			d.Must(err)
			into := now - now.Truncate(time.Second)
			if into >= frac && into < frac+slack {
				return
			}
			time.Sleep((frac - into + time.Second) % time.Second)
		}
		d.t.Fatalf("VPP's clock did not stand %s past a second in 5 tries", frac)
	}
}

// vppClock reads VPP's own clock ("show clock": "Time now 48.170505, …").
func vppClock(n dataplane.Real) (time.Duration, error) {
	out, err := n.CLI("show clock")
	if err != nil {
		return 0, err
	}
	var sec float64
	if _, err := fmt.Sscanf(strings.TrimSpace(out), "Time now %f", &sec); err != nil {
		return 0, fmt.Errorf("show clock: %q: %w", out, err)
	}
	return time.Duration(sec * float64(time.Second)), nil
}

// sessions records the session dump of one inside address, without the
// fields that differ by nature (VPP's clock, the byte count: the fake
// counts 64 bytes a packet).
func sessions(d *diffCase, label, inside string) []*nat44_ed.Nat44UserSessionV3Details {
	d.t.Helper()
	return Dump[*nat44_ed.Nat44UserSessionV3Details](d, label, &nat44_ed.Nat44UserSessionV3Dump{IPAddress: netip.MustParseAddr(inside).As4()},
		"LastHeard", "TimeSinceLastHeard", "TotalBytes")
}

// users records the user dump (sessions per inside address).
func users(d *diffCase, label string) {
	d.t.Helper()
	Dump[*nat44_ed.Nat44UserDetails](d, label, &nat44_ed.Nat44UserDump{})
}

func pktFlags(p fakevpp.Packet, flags uint8) fakevpp.Packet { p.TCPFlags = flags; return p }

const (
	fin = 0x01
	syn = 0x02
	rst = 0x04
	ack = 0x10
)

func TestDiffSessions(t *testing.T) {
	// A TCP session through the dynamic path, step by step: the SYN and
	// its SYN|ACK leave it transitory (it times out after the transitory
	// timeout); the ACK makes it established (the transitory timeout no
	// longer applies); a FIN makes it transitory again; a SYN on the
	// expired session replaces it.
	runDifferential(t, "sessions/tcp-lifecycle", func(d *diffCase) {
		nat := natTopology(d)
		setTimeouts(d, nat, 60, 4, 1, 60)
		c := tcp("tap2", "10.1.1.2:40000", "8.8.8.8:443")
		d.AlignClock(100 * time.Millisecond)
		d.Trace("SYN (and SYN|ACK back)", c)
		sessions(d, "after the handshake's first two packets", "10.1.1.2")
		d.Wait(1500 * time.Millisecond)
		sessions(d, "1.5 s later: transitory, timed out", "10.1.1.2")
		d.Trace("SYN again on the timed-out session", c)
		d.Trace("ACK (and ACK back)", pktFlags(c, ack))
		sessions(d, "after the ACK both ways: established", "10.1.1.2")
		d.Wait(1500 * time.Millisecond)
		sessions(d, "1.5 s later: established, not timed out", "10.1.1.2")
		d.Trace("FIN (and ACK back)", pktFlags(c, fin|ack))
		d.Wait(1500 * time.Millisecond)
		sessions(d, "1.5 s after the FIN: transitory, timed out", "10.1.1.2")
		users(d, "users")
		d.Trace("ACK on the timed-out session", pktFlags(c, ack))
		sessions(d, "after an ACK on it", "10.1.1.2")
	})

	// RST on an established session: transitory at once.
	runDifferential(t, "sessions/tcp-rst", func(d *diffCase) {
		nat := natTopology(d)
		setTimeouts(d, nat, 60, 60, 1, 60)
		c := tcp("tap2", "10.1.1.2:40001", "8.8.8.8:443")
		d.AlignClock(100 * time.Millisecond)
		d.Trace("SYN", c)
		d.Trace("ACK", pktFlags(c, ack))
		sessions(d, "established", "10.1.1.2")
		d.Trace("RST from the pod", pktFlags(c, rst))
		d.Wait(1500 * time.Millisecond)
		sessions(d, "1.5 s after the RST", "10.1.1.2")
	})

	// UDP and ICMP echo sessions time out after their own timeouts; a
	// packet on an expired session makes a new one.
	runDifferential(t, "sessions/udp-icmp-timeouts", func(d *diffCase) {
		nat := natTopology(d)
		setTimeouts(d, nat, 1, 60, 60, 3)
		d.AlignClock(100 * time.Millisecond)
		u := fakevpp.Packet{Ingress: "tap2", Protocol: 17, Src: ap("10.1.1.2:5353"), Dst: ap("8.8.4.4:53")}
		e := fakevpp.Packet{Ingress: "tap2", Protocol: 1, Src: ap("10.1.1.2:4000"), Dst: ap("8.8.4.4:4000")}
		d.Trace("UDP", u)
		d.Trace("echo", e)
		sessions(d, "both fresh", "10.1.1.2")
		d.Wait(1500 * time.Millisecond)
		sessions(d, "1.5 s later: UDP timed out, echo not", "10.1.1.2")
		d.Trace("UDP again", u)
		sessions(d, "UDP replaced", "10.1.1.2")
		d.Wait(2 * time.Second)
		sessions(d, "3.5 s after the echo", "10.1.1.2")
	})

	// Every session allocation first frees at most one expired session,
	// the head of the first list with an expired head, TCP transitory
	// before UDP (nat_ed_session_alloc → nat_lru_free_one): expired
	// sessions stay until allocations reclaim them, one each. NAT44-ED's
	// affinity records wait for exactly this (docs/renderer-nat44.md,
	// "Session affinity timeout").
	runDifferential(t, "sessions/lru-reclaim", func(d *diffCase) {
		nat := natTopology(d)
		setTimeouts(d, nat, 1, 60, 1, 60)
		d.AlignClock(100 * time.Millisecond)
		d.Trace("UDP", udp("tap2", "10.1.1.2:5353", "8.8.4.4:53"))
		d.Trace("SYN", tcp("tap2", "10.1.1.2:40000", "8.8.8.8:443"))
		d.Wait(2 * time.Second)
		sessions(d, "2 s later: both timed out, both still there", "10.1.1.2")
		d.Trace("a new UDP flow", udp("tap2", "10.1.1.2:5354", "8.8.4.4:53"))
		sessions(d, "its allocation freed the transitory TCP session", "10.1.1.2")
		d.Trace("another new UDP flow", udp("tap2", "10.1.1.2:5355", "8.8.4.4:53"))
		sessions(d, "and this one the old UDP session", "10.1.1.2")
	})

	// Where VPP's clock stands within its second, made visible: the fast
	// paths and the session dumps add last_heard and the timeout into a
	// u64 (nat44_ed_in2out.c, nat44_ed_out2in.c, nat44_ed_api.c), so a
	// session times out there at the whole second at or before
	// last_heard + timeout; the LRU that frees an expired session for a
	// new one keeps the sum in f64 (nat_lru_free_one). With a 1 s UDP
	// timeout: a flow heard at .5 is timed out for the dump at .2 of the
	// next second, but a new flow then does not reclaim it; one at .7
	// does; and the reply to a flow heard at .2 finds it gone at .1 of the
	// next second, 0.9 s later.
	runDifferential(t, "sessions/expiry-whole-seconds", func(d *diffCase) {
		nat := natTopology(d)
		setTimeouts(d, nat, 1, 60, 60, 60)
		d.AlignClock(500 * time.Millisecond)
		d.Trace("a flow heard at .5", udp("tap2", "10.1.1.2:5353", "8.8.4.4:53"))
		d.AlignClock(200 * time.Millisecond)
		sessions(d, "0.7 s later, at .2: timed out for the dump", "10.1.1.2")
		d.Trace("a new flow at .2", udp("tap2", "10.1.1.2:5354", "8.8.4.4:53"))
		sessions(d, "the first is not reclaimed: its second is not over", "10.1.1.2")
		d.AlignClock(700 * time.Millisecond)
		d.Trace("a new flow at .7", udp("tap2", "10.1.1.2:5355", "8.8.4.4:53"))
		sessions(d, "the first is reclaimed", "10.1.1.2")
		d.AlignClock(100 * time.Millisecond)
		d.Trace("the reply to the flow of .2, at .1 of the next second", udp("uplink0", "8.8.4.4:53", "192.168.16.1:5354"))
		sessions(d, "the fast path deleted it", "10.1.1.2")
	})

	// nat44_del_session looks up the key (address:port → external host) in
	// the flow table: the inside side of a session matches whatever the
	// flags say; the outside address does not (the outside key has the
	// external host as its source).
	runDifferential(t, "sessions/delete", func(d *diffCase) {
		nat := natTopology(d)
		d.Trace("UDP from 10.1.1.2", fakevpp.Packet{Ingress: "tap2", Protocol: 17, Src: ap("10.1.1.2:5353"), Dst: ap("8.8.4.4:53")})
		d.Trace("UDP from 10.1.1.3", fakevpp.Packet{Ingress: "tap2", Protocol: 17, Src: ap("10.1.1.3:5354"), Dst: ap("8.8.4.4:53")})
		users(d, "users before")
		del := func(label, addr string, port uint16, flags nat_types.NatConfigFlags, vrf uint32) {
			_, err := nat.Nat44DelSession(d.Ctx, &nat44_ed.Nat44DelSession{Address: netip.MustParseAddr(addr).As4(), Port: port, Protocol: 17,
				ExtHostAddress: ip_types.IP4Address{8, 8, 4, 4}, ExtHostPort: 53, VrfID: vrf, Flags: flags})
			d.Retval(label, err)
		}
		del("del by the outside address", "192.168.16.1", 5353, 0, 0)
		del("del by the inside key, no flags", "10.1.1.2", 5353, 0, 0)
		del("del the same again", "10.1.1.2", 5353, nat_types.NAT_IS_INSIDE, 0)
		del("del in a VRF that does not exist", "10.1.1.3", 5354, nat_types.NAT_IS_INSIDE, 77)
		del("del by the inside key, inside flag", "10.1.1.3", 5354, nat_types.NAT_IS_INSIDE, 0)
		sessions(d, "10.1.1.2 after", "10.1.1.2")
		users(d, "users after")
		d.Trace("reply to the deleted session", fakevpp.Packet{Ingress: "uplink0", Protocol: 17, Src: ap("8.8.4.4:53"), Dst: ap("192.168.16.1:5353")})
	})

	// Dynamic SNAT keeps the source port when it is in 1024–65534 and the
	// (outside address, port, destination) key is free; any other port is
	// replaced by one from that range. Ports are drawn from VPP's
	// generator, so the case records whether the port was kept and
	// whether it is in the range, not its value.
	runDifferential(t, "sessions/port-allocation", func(d *diffCase) {
		natTopology(d)
		for _, c := range []struct{ label, src, dst string }{
			{"port 1023", "10.1.1.2:1023", "8.8.8.8:53"},
			{"port 1024", "10.1.1.2:1024", "8.8.8.8:53"},
			{"port 65534", "10.1.1.2:65534", "8.8.8.8:53"},
			{"port 65535", "10.1.1.2:65535", "8.8.8.8:53"},
			{"port 0", "10.1.1.2:0", "8.8.8.8:53"},
			{"5000 from a first pod", "10.1.1.2:5000", "8.8.8.8:53"},
			{"5000 from a second pod to the same destination", "10.1.1.3:5000", "8.8.8.8:53"},
			{"5000 from the second pod to another destination", "10.1.1.3:5000", "8.8.4.4:53"},
		} {
			tr := d.Node.Trace(fakevpp.Packet{Ingress: "tap2", Protocol: 17, Src: ap(c.src), Dst: ap(c.dst)})
			p := tr.Out.Src.Port()
			d.Record(c.label, fmt.Sprintf("%s via %s from %s, port kept %t, in 1024-65535 %t, reply ok %t",
				tr.Verdict, tr.Egress, tr.Out.Src.Addr(), p == ap(c.src).Port(), p >= 1024, tr.ReplyOK))
		}
		users(d, "users")
	})

	// Protocols without ports (GRE 47, ESP 50): address-only translation.
	runDifferential(t, "sessions/no-ports", func(d *diffCase) {
		nat := natTopology(d)
		gre := fakevpp.Packet{Ingress: "tap2", Protocol: 47, Src: ap("10.1.1.2:0"), Dst: ap("8.8.8.8:0")}
		d.Trace("GRE from a pod (dynamic)", gre)
		d.Trace("ESP from the pod to the same host", fakevpp.Packet{Ingress: "tap2", Protocol: 50, Src: ap("10.1.1.2:0"), Dst: ap("8.8.8.8:0")})
		d.Trace("GRE from another pod to the same host", fakevpp.Packet{Ingress: "tap2", Protocol: 47, Src: ap("10.1.1.3:0"), Dst: ap("8.8.8.8:0")})
		sessions(d, "sessions of 10.1.1.2", "10.1.1.2")
		sessions(d, "sessions of 10.1.1.3", "10.1.1.3")
		d.Trace("GRE from the host both pods talk to: reaches the pod that came last", fakevpp.Packet{Ingress: "uplink0", Protocol: 47, Src: ap("8.8.8.8:0"), Dst: ap("192.168.16.1:0")})
		d.Trace("GRE from outside to the pool address, no session", fakevpp.Packet{Ingress: "uplink0", Protocol: 47, Src: ap("8.8.4.4:0"), Dst: ap("192.168.16.1:0")})
		// An address-only static mapping and a static mapping of protocol 47.
		_, err := nat.Nat44AddDelStaticMappingV2(d.Ctx, &nat44_ed.Nat44AddDelStaticMappingV2{IsAdd: true, Flags: nat_types.NAT_IS_ADDR_ONLY,
			LocalIPAddress: ip_types.IP4Address{10, 1, 1, 4}, ExternalIPAddress: ip_types.IP4Address{192, 168, 16, 50}, ExternalSwIfIndex: ^interface_types.InterfaceIndex(0)})
		d.Retval("address-only mapping 10.1.1.4 ↔ 192.168.16.50", err)
		_, err = nat.Nat44AddDelStaticMappingV2(d.Ctx, &nat44_ed.Nat44AddDelStaticMappingV2{IsAdd: true, Protocol: 47,
			LocalIPAddress: ip_types.IP4Address{10, 1, 1, 5}, ExternalIPAddress: ip_types.IP4Address{192, 168, 16, 51}, ExternalSwIfIndex: ^interface_types.InterfaceIndex(0)})
		d.Retval("GRE mapping 10.1.1.5 ↔ 192.168.16.51, ports 0", err)
		d.Trace("GRE from outside to the address-only mapping", fakevpp.Packet{Ingress: "uplink0", Protocol: 47, Src: ap("8.8.4.4:0"), Dst: ap("192.168.16.50:0")})
		d.Trace("GRE from the address-only mapped pod", fakevpp.Packet{Ingress: "tap2", Protocol: 47, Src: ap("10.1.1.4:0"), Dst: ap("8.8.4.4:0")})
		d.Trace("GRE from outside to the GRE mapping", fakevpp.Packet{Ingress: "uplink0", Protocol: 47, Src: ap("8.8.4.4:0"), Dst: ap("192.168.16.51:0")})
		d.Trace("GRE from the GRE-mapped pod to another host", fakevpp.Packet{Ingress: "tap2", Protocol: 47, Src: ap("10.1.1.5:0"), Dst: ap("9.9.9.9:0")})
		d.Trace("GRE from a pod to the address-only mapping's external address (hairpin)", fakevpp.Packet{Ingress: "tap2", Protocol: 47, Src: ap("10.1.1.6:0"), Dst: ap("192.168.16.50:0")})
		sessions(d, "sessions of 10.1.1.4", "10.1.1.4")
		sessions(d, "sessions of 10.1.1.5", "10.1.1.5")
		sessions(d, "sessions of 10.1.1.6", "10.1.1.6")
	})

	// cnat sessions of a TCP flow to a VIP, as cnat_session_dump shows
	// them: created by the first packet, their lifetime raised to an hour
	// by the SYN|ACK, cut to 5 s by a RST; cnat's scanner (every second)
	// then removes them. The timestamp is left out (VPP's clock).
	runDifferential(t, "sessions/cnat-tcp", func(d *diffCase) {
		cnatTopology(d)
		c := cnat.NewServiceClient(d.Conn)
		_, err := c.CnatTranslationUpdate(d.Ctx, &cnat.CnatTranslationUpdate{Translation: cnat.CnatTranslation{
			Vip: cnatEndpoint("10.96.0.10:80"), IPProto: ip_types.IP_API_PROTO_TCP,
			Paths: []cnat.CnatEndpointTuple{{DstEp: cnatEndpoint("10.1.1.2:8080"), SrcEp: cnatEndpoint("0.0.0.0:0")}}}})
		d.Retval("translation 10.96.0.10:80 → 10.1.1.2:8080", err)
		client := tcp("uplink0", "198.51.100.7:1234", "10.96.0.10:80")
		d.Trace("SYN (and SYN|ACK back)", client)
		Dump[*cnat.CnatSessionDetails](d, "cnat sessions", &cnat.CnatSessionDump{}, "Timestamp")
		d.Trace("RST from the client", pktFlags(client, rst))
		// 5 s RST lifetime, then the scanner (about every second, later on a busy machine).
		d.WaitUntil(8*time.Second, 30*time.Second, func() bool {
			ss, err := dumpAll[*cnat.CnatSessionDetails](d, &cnat.CnatSessionDump{})
			d.Must(err)
			return len(ss) == 0
		})
		Dump[*cnat.CnatSessionDetails](d, "cnat sessions once the scanner has passed (8–30 s after the RST)", &cnat.CnatSessionDump{}, "Timestamp")
		d.Trace("ACK from the client after that", pktFlags(client, ack))
	})
}
