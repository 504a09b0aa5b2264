package dataplane_test

// Differential cases of ICMP through NAT44-ED and cnat: error messages
// (time exceeded, destination unreachable) that belong to a session have
// their outer and quoted headers translated; errors that belong to none
// are not; echo identifiers are allocated like ports.

import (
	"fmt"
	"net/netip"
	"testing"

	"go.fd.io/govpp/binapi/cnat"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip_types"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/binapi/nat_types"

	"github.com/vppsvc/vppsvc/fakevpp"
)

func addr(s string) netip.Addr { return netip.MustParseAddr(s) }

// icmpError is the error from sends, entering on ingress, about a packet
// as the sender saw it, quoting its IP header and 8 bytes.
func icmpError(ingress, from string, typ, code uint8, about fakevpp.Packet) fakevpp.Packet {
	return fakevpp.ICMPErrorAbout(ingress, addr(from), typ, code, about)
}

// icmpErrorFull is icmpError quoting the whole packet, as Linux does.
func icmpErrorFull(ingress, from string, typ, code uint8, about fakevpp.Packet) fakevpp.Packet {
	p := icmpError(ingress, from, typ, code, about)
	p.Error.Full = true
	return p
}

func TestDiffICMP(t *testing.T) {
	// Errors about source-NATed flows, from a router on the way and from
	// the destination itself, reach the pod with the quoted header as the
	// pod sent it; the pod's own error about a reply leaves as from the
	// pool address.
	runDifferential(t, "icmp/nat44-dynamic", func(d *diffCase) {
		natTopology(d)
		ttl, unreach := fakevpp.ICMP4TimeExceeded, fakevpp.ICMP4DestUnreach
		first := d.Trace("TCP SYN from the pod", tcp("tap2", "10.1.1.2:40000", "8.8.8.8:443"))
		d.Trace("TTL exceeded from a router about it", icmpError("uplink0", "192.168.16.254", ttl, 0, first.Out))
		d.Trace("host unreachable from the destination about it", icmpError("uplink0", "8.8.8.8", unreach, fakevpp.ICMP4HostUnreachable, first.Out))
		d.Trace("TTL exceeded quoting the whole SYN", icmpErrorFull("uplink0", "192.168.16.254", ttl, 0, first.Out))
		udp := d.Trace("UDP from the pod", fakevpp.Packet{Ingress: "tap2", Protocol: 17, Src: ap("10.1.1.2:5353"), Dst: ap("8.8.4.4:53")})
		d.Trace("port unreachable from the destination", icmpError("uplink0", "8.8.4.4", unreach, fakevpp.ICMP4PortUnreachable, udp.Out))
		echo := d.Trace("echo from the pod", fakevpp.Packet{Ingress: "tap2", Protocol: 1, Src: ap("10.1.1.2:4000"), Dst: ap("8.8.8.8:4000")})
		d.Trace("TTL exceeded about the echo", icmpError("uplink0", "192.168.16.254", ttl, 0, echo.Out))
		reply := fakevpp.Packet{Ingress: "uplink0", Protocol: 6, Src: ap("8.8.8.8:443"), Dst: ap("10.1.1.2:40000"), TCPFlags: syn | ack}
		d.Trace("the pod's port unreachable quoting the whole SYN|ACK", icmpErrorFull("tap2", "10.1.1.2", unreach, fakevpp.ICMP4PortUnreachable, reply))
		d.Trace("the pod's port unreachable about the SYN|ACK it got", icmpError("tap2", "10.1.1.2", unreach, fakevpp.ICMP4PortUnreachable, reply))
		d.Trace("TTL exceeded about a flow without session", icmpError("uplink0", "192.168.16.254", ttl, 0, tcp("tap2", "192.168.16.1:40001", "8.8.8.8:443")))
		d.Trace("error about a flow without session to the uplink's own address",
			icmpError("uplink0", "192.168.16.254", unreach, fakevpp.ICMP4PortUnreachable, fakevpp.Packet{Protocol: 17, Src: ap("192.168.16.1:22"), Dst: ap("8.8.8.8:1000")}))
		gre := d.Trace("GRE from the pod", fakevpp.Packet{Ingress: "tap2", Protocol: 47, Src: ap("10.1.1.2:0"), Dst: ap("8.8.8.8:0")})
		d.Trace("error quoting the GRE packet", icmpError("uplink0", "8.8.8.8", unreach, 2, gre.Out))
		sessions(d, "sessions (errors count as packets)", "10.1.1.2")
	})

	// Errors about flows through a static mapping: the pod's port
	// unreachable leaves as from the external address:port.
	runDifferential(t, "icmp/nat44-static", func(d *diffCase) {
		nat := natTopology(d)
		_, err := nat.Nat44AddDelStaticMappingV2(d.Ctx, &nat44_ed.Nat44AddDelStaticMappingV2{IsAdd: true, Flags: nat_types.NAT_IS_OUT2IN_ONLY,
			LocalIPAddress: ip_types.IP4Address{10, 1, 1, 2}, ExternalIPAddress: ip_types.IP4Address{192, 168, 16, 1},
			Protocol: 17, LocalPort: 53, ExternalPort: 5300, ExternalSwIfIndex: ^interface_types.InterfaceIndex(0)})
		d.Retval("mapping 10.1.1.2:53 ↔ 192.168.16.1:5300/UDP", err)
		in := d.Trace("UDP from a client to the mapping", fakevpp.Packet{Ingress: "uplink0", Protocol: 17, Src: ap("198.51.100.7:1234"), Dst: ap("192.168.16.1:5300")})
		d.Trace("the pod's port unreachable about it", icmpError(in.Egress, "10.1.1.2", fakevpp.ICMP4DestUnreach, fakevpp.ICMP4PortUnreachable, in.Out))
		d.Trace("a router's TTL exceeded about the pod's reply", icmpError("uplink0", "192.168.16.254", fakevpp.ICMP4TimeExceeded, 0,
			fakevpp.Packet{Protocol: 17, Src: ap("192.168.16.1:5300"), Dst: ap("198.51.100.7:1234")}))
		d.Trace("an error to the mapping without a session", icmpError("uplink0", "198.51.100.9", fakevpp.ICMP4DestUnreach, fakevpp.ICMP4PortUnreachable,
			fakevpp.Packet{Protocol: 17, Src: ap("192.168.16.1:5300"), Dst: ap("198.51.100.9:1234")}))
		sessions(d, "sessions", "10.1.1.2")
	})

	// The same through the output feature on the uplink (how vppsvc's
	// driver configures SNAT): errors about UDP and a whole TCP packet
	// come back to the pod, the pod's own error about a reply leaves
	// translated, and GRE takes the address-only path on output too.
	runDifferential(t, "icmp/nat44-output-feature", func(d *diffCase) {
		podNodeTopology(d)
		nat := nat44_ed.NewServiceClient(d.Conn)
		_, err := nat.Nat44EdPluginEnableDisable(d.Ctx, &nat44_ed.Nat44EdPluginEnableDisable{Enable: true})
		d.Must(err)
		_, err = nat.Nat44EdAddDelOutputInterface(d.Ctx, &nat44_ed.Nat44EdAddDelOutputInterface{IsAdd: true, SwIfIndex: d.Sw("uplink0")})
		d.Retval("output feature on uplink0", err)
		_, err = nat.Nat44AddDelAddressRange(d.Ctx, &nat44_ed.Nat44AddDelAddressRange{IsAdd: true, VrfID: ^uint32(0),
			FirstIPAddress: ip_types.IP4Address{192, 168, 16, 1}, LastIPAddress: ip_types.IP4Address{192, 168, 16, 1}})
		d.Must(err)
		unreach := fakevpp.ICMP4DestUnreach
		u := d.Trace("UDP from the pod", fakevpp.Packet{Ingress: "tap2", Protocol: 17, Src: ap("10.1.1.2:5353"), Dst: ap("8.8.4.4:53")})
		d.Trace("port unreachable from the destination", icmpError("uplink0", "8.8.4.4", unreach, fakevpp.ICMP4PortUnreachable, u.Out))
		syn := d.Trace("TCP SYN from the pod", tcp("tap2", "10.1.1.2:40000", "8.8.8.8:443"))
		d.Trace("TTL exceeded quoting the whole SYN", icmpErrorFull("uplink0", "192.168.16.254", fakevpp.ICMP4TimeExceeded, 0, syn.Out))
		reply := fakevpp.Packet{Protocol: 17, Src: ap("8.8.4.4:53"), Dst: ap("10.1.1.2:5353")}
		d.Trace("the pod's port unreachable about a UDP reply", icmpError("tap2", "10.1.1.2", unreach, fakevpp.ICMP4PortUnreachable, reply))
		d.Trace("GRE from the pod", fakevpp.Packet{Ingress: "tap2", Protocol: 47, Src: ap("10.1.1.2:0"), Dst: ap("8.8.8.8:0")})
		sessions(d, "sessions", "10.1.1.2")
	})

	// Echo identifiers are allocated like source ports: kept from 1024 up
	// when free, replaced below 1024 and when another inside host holds
	// the same identifier towards the same host.
	runDifferential(t, "icmp/echo-identifiers", func(d *diffCase) {
		natTopology(d)
		for _, c := range []struct {
			label, src string
			id         uint16
		}{
			{"id 77", "10.1.1.2", 77},
			{"id 5000", "10.1.1.2", 5000},
			{"id 5000 from a second pod", "10.1.1.3", 5000},
		} {
			tr := d.Node.Trace(fakevpp.Packet{Ingress: "tap2", Protocol: 1, Src: netip.AddrPortFrom(addr(c.src), c.id), Dst: ap("8.8.8.8:0")})
			id := tr.Out.Src.Port()
			d.Record(c.label, fmt.Sprintf("%s via %s from %s, id kept %t, id in 1024-65535 %t, reply ok %t",
				tr.Verdict, tr.Egress, tr.Out.Src.Addr(), id == c.id, id >= 1024, tr.ReplyOK))
		}
		d.Trace("echo from outside to the pool address", fakevpp.Packet{Ingress: "uplink0", Protocol: 1, Src: ap("8.8.8.8:9"), Dst: ap("192.168.16.1:9")})
		d.Trace("echo reply from outside matching no session", fakevpp.Packet{Ingress: "uplink0", Protocol: 1, Src: ap("8.8.8.8:9"), Dst: ap("192.168.16.1:9"), EchoReply: true})
		users(d, "users")
	})

	// cnat: errors about a flow to a VIP, from the backend itself (its
	// source becomes the VIP) and from a router between VIP and backend
	// (its source is kept), IPv4 and IPv6.
	runDifferential(t, "icmp/cnat", func(d *diffCase) {
		cnatTopology(d)
		udpVIPs(d)
		for _, f := range []struct {
			client, vip, router string
			unreach, port, ttl  uint8
		}{
			{"198.51.100.7:1234", "10.96.0.10:80", "172.30.1.254", fakevpp.ICMP4DestUnreach, fakevpp.ICMP4PortUnreachable, fakevpp.ICMP4TimeExceeded},
			{"[2001:db8::7]:1234", "[fd00:96::1]:80", "fd00:30::fe", fakevpp.ICMP6DestUnreach, fakevpp.ICMP6PortUnreachable, fakevpp.ICMP6TimeExceeded},
		} {
			in := d.Trace("UDP from a client to the VIP", fakevpp.Packet{Ingress: "uplink0", Protocol: 17, Src: ap(f.client), Dst: ap(f.vip)})
			d.Trace("the backend's port unreachable", icmpError(in.Egress, in.Out.Dst.Addr().String(), f.unreach, f.port, in.Out))
			d.Trace("a router's TTL exceeded", icmpError(in.Egress, f.router, f.ttl, 0, in.Out))
		}
		// TCP: the quoted header of 8 bytes, and the whole packet.
		_, err := cnat.NewServiceClient(d.Conn).CnatTranslationUpdate(d.Ctx, &cnat.CnatTranslationUpdate{Translation: cnat.CnatTranslation{
			Vip: cnatEndpoint("10.96.0.11:80"), IPProto: ip_types.IP_API_PROTO_TCP,
			Paths: []cnat.CnatEndpointTuple{{DstEp: cnatEndpoint("10.1.1.2:8080"), SrcEp: cnatEndpoint("0.0.0.0:0")}}}})
		d.Retval("translation 10.96.0.11:80 → 10.1.1.2:8080/TCP", err)
		syn := d.Trace("TCP SYN from a client to the VIP", tcp("uplink0", "198.51.100.7:1235", "10.96.0.11:80"))
		d.Trace("the backend's port unreachable about the SYN, 8 bytes", icmpError(syn.Egress, "10.1.1.2", fakevpp.ICMP4DestUnreach, fakevpp.ICMP4PortUnreachable, syn.Out))
		d.Trace("the same, quoting the whole SYN", icmpErrorFull(syn.Egress, "10.1.1.2", fakevpp.ICMP4DestUnreach, fakevpp.ICMP4PortUnreachable, syn.Out))
	})
}

// cnatTopology is natTopology's interfaces and routes in both families,
// without NAT44-ED.
func cnatTopology(d *diffCase) {
	d.t.Helper()
	n := d.Node
	for _, err := range []error{
		n.AddInterface("uplink0", pfx("192.168.16.1/24"), pfx("fd00:16::1/64")),
		n.AddInterface("host0", pfx("172.30.1.1/24"), pfx("fd00:30::1/64")),
		n.AddInterface("tap2"),
		n.SetUnnumbered("tap2", "host0"),
		n.AddRoute(pfx("10.1.1.0/24"), "tap2"),
		n.AddRoute(pfx("fd00:1:1::/64"), "tap2"),
		n.AddRoute(pfx("0.0.0.0/0"), "uplink0"),
		n.AddRoute(pfx("::/0"), "uplink0"),
	} {
		d.Must(err)
	}
}

// udpVIPs translates UDP to 10.96.0.10:80 and [fd00:96::1]:80 to a pod
// behind tap2 each, without source NAT.
func udpVIPs(d *diffCase) {
	d.t.Helper()
	c := cnat.NewServiceClient(d.Conn)
	for _, tr := range []struct{ vip, backend string }{{"10.96.0.10:80", "10.1.1.2:8080"}, {"[fd00:96::1]:80", "[fd00:1:1::2]:8080"}} {
		_, err := c.CnatTranslationUpdate(d.Ctx, &cnat.CnatTranslationUpdate{Translation: cnat.CnatTranslation{
			Vip: cnatEndpoint(tr.vip), IPProto: ip_types.IP_API_PROTO_UDP,
			Paths: []cnat.CnatEndpointTuple{{DstEp: cnatEndpoint(tr.backend), SrcEp: cnatEndpoint(zeroOf(tr.vip))}}}})
		d.Retval("translation "+tr.vip+" → "+tr.backend, err)
	}
}

// zeroOf is the unspecified address:0 of ep's family.
func zeroOf(ep string) string {
	if ap(ep).Addr().Is4() {
		return "0.0.0.0:0"
	}
	return "[::]:0"
}
