package dataplane_test

// Behaviour of the bare data plane, before any service: the same
// expectations hold on fakevpp and on a real VPP (make test-realvpp), so a
// difference here is a bug in one of them.

import (
	"net/netip"
	"testing"

	"github.com/vppsvc/vppsvc/dataplane"
	"github.com/vppsvc/vppsvc/fakevpp"
)

func pfx(s string) netip.Prefix  { return netip.MustParsePrefix(s) }
func ap(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }
func tcp(in, src, dst string) fakevpp.Packet {
	return fakevpp.Packet{Ingress: in, Protocol: 6, Src: ap(src), Dst: ap(dst)}
}

// newNode is an uplink with both families, a host link, a pod interface
// unnumbered to the host link and one with no address at all.
func newNode(t *testing.T) dataplane.Node {
	t.Helper()
	n := dataplane.ForTest(t, 1)
	steps := []error{
		n.AddInterface("uplink0", pfx("192.168.16.1/24"), pfx("fd00:16::1/64")),
		n.AddInterface("host0", pfx("172.30.1.1/24"), pfx("fd00:30::1/64")),
		n.AddInterface("tap2"),
		n.AddInterface("tap3"),
		n.SetUnnumbered("tap2", "host0"),
		n.AddRoute(pfx("10.1.1.2/32"), "tap2"),
		n.AddRoute(pfx("fd00:1:1::2/128"), "tap2"),
		n.AddRoute(pfx("10.1.1.3/32"), "tap3"),
		n.AddRoute(pfx("0.0.0.0/0"), "uplink0"),
		n.AddRoute(pfx("::/0"), "uplink0"),
	}
	for _, err := range steps {
		if err != nil {
			t.Fatal(err)
		}
	}
	return n
}

func TestPlainForwarding(t *testing.T) {
	n := newNode(t)
	for _, p := range []fakevpp.Packet{
		tcp("tap2", "10.1.1.2:40000", "8.8.8.8:443"),
		tcp("uplink0", "8.8.8.8:443", "10.1.1.2:40001"),
		tcp("tap2", "[fd00:1:1::2]:40000", "[2001:db8::8]:443"),
		{Ingress: "tap2", Protocol: 17, Src: ap("10.1.1.2:5353"), Dst: ap("8.8.4.4:53")},
		{Ingress: "tap2", Protocol: 1, Src: ap("10.1.1.2:7"), Dst: ap("8.8.4.4:7")},
	} {
		tr := n.Trace(p)
		if tr.Verdict != fakevpp.Forward || tr.Out.Src != tr.In.Src || tr.Out.Dst != tr.In.Dst || tr.SNAT || !tr.ReplyOK {
			t.Errorf("%s: %s via %s as %s, reply ok %t (%s)\n%v", p, tr.Verdict, tr.Egress, tr.Out, tr.ReplyOK, tr.Reason, tr.Steps)
		}
	}
	if tr := n.Trace(tcp("tap2", "10.1.1.2:40002", "8.8.8.8:443")); tr.Egress != "uplink0" {
		t.Errorf("egress %q, want uplink0", tr.Egress)
	}
}

// VPP drops what arrives on an interface without IPv4 (no address, not
// unnumbered): ip4-input's ip4-not-enabled.
func TestPacketOnInterfaceWithoutIPIsDropped(t *testing.T) {
	n := newNode(t)
	if tr := n.Trace(tcp("tap3", "10.1.1.3:40000", "8.8.8.8:443")); tr.Verdict != fakevpp.Drop {
		t.Errorf("from tap3 (no IP): %s via %s, want drop\n%v", tr.Verdict, tr.Egress, tr.Steps)
	}
}

func TestNoRouteIsDropped(t *testing.T) {
	n := dataplane.ForTest(t, 1)
	if err := n.AddInterface("uplink0", pfx("192.168.16.1/24")); err != nil {
		t.Fatal(err)
	}
	if tr := n.Trace(tcp("uplink0", "192.168.16.9:1000", "8.8.8.8:443")); tr.Verdict != fakevpp.Drop {
		t.Errorf("no route: %s via %s, want drop\n%v", tr.Verdict, tr.Egress, tr.Steps)
	}
}

func TestOwnAddressIsLocal(t *testing.T) {
	n := newNode(t)
	if tr := n.Trace(tcp("uplink0", "192.168.16.9:1000", "192.168.16.1:22")); tr.Verdict != fakevpp.Local {
		t.Errorf("to VPP's own address: %s (%s)\n%v", tr.Verdict, tr.Reason, tr.Steps)
	}
}
