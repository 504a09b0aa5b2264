package dataplane_test

// The plugins programmed directly through the binary API, without vppsvc's
// renderers or VPP layer, with the same expectations on fakevpp and on a
// real VPP (make test-realvpp): a disagreement here is a fake bug or a VPP
// behaviour to record in docs/fakevpp.md.

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/acl"
	"go.fd.io/govpp/binapi/acl_types"
	"go.fd.io/govpp/binapi/cnat"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip_types"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/binapi/nat_types"
	"go.fd.io/govpp/core"

	"github.com/vppsvc/vppsvc/dataplane"
	"github.com/vppsvc/vppsvc/fakevpp"
)

// connect opens a binary-API connection to n for the test.
func connect(t *testing.T, n dataplane.Node) api.Connection {
	t.Helper()
	conn, err := core.Connect(n.Adapter())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Disconnect)
	return conn
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

func swIf(t *testing.T, n dataplane.Node, name string) interface_types.InterfaceIndex {
	t.Helper()
	i, ok := n.InterfaceIndex(name)
	if !ok {
		t.Fatalf("no interface %s", name)
	}
	return interface_types.InterfaceIndex(i)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// natNode is newNode with NAT44-ED on: uplink0 outside, tap2 inside, and an
// out2in-only static mapping of 10.1.1.2:8080 to 192.168.16.1:30000/TCP.
func natNode(t *testing.T) dataplane.Node {
	t.Helper()
	n := newNode(t)
	nat := enableNAT44(t, n)
	_, err := nat.Nat44AddDelStaticMappingV2(ctx(t), &nat44_ed.Nat44AddDelStaticMappingV2{IsAdd: true, Flags: nat_types.NAT_IS_OUT2IN_ONLY,
		LocalIPAddress: ip_types.IP4Address{10, 1, 1, 2}, ExternalIPAddress: ip_types.IP4Address{192, 168, 16, 1},
		Protocol: 6, LocalPort: 8080, ExternalPort: 30000, ExternalSwIfIndex: ^interface_types.InterfaceIndex(0)})
	must(t, err)
	return n
}

// enableNAT44 turns NAT44-ED on in n with uplink0 outside and tap2 inside.
func enableNAT44(t *testing.T, n dataplane.Node) nat44_ed.RPCService {
	t.Helper()
	nat := nat44_ed.NewServiceClient(connect(t, n))
	c := ctx(t)
	_, err := nat.Nat44EdPluginEnableDisable(c, &nat44_ed.Nat44EdPluginEnableDisable{Enable: true})
	must(t, err)
	_, err = nat.Nat44InterfaceAddDelFeature(c, &nat44_ed.Nat44InterfaceAddDelFeature{IsAdd: true, SwIfIndex: swIf(t, n, "uplink0")})
	must(t, err)
	_, err = nat.Nat44InterfaceAddDelFeature(c, &nat44_ed.Nat44InterfaceAddDelFeature{IsAdd: true, Flags: nat_types.NAT_IS_INSIDE, SwIfIndex: swIf(t, n, "tap2")})
	must(t, err)
	return nat
}

// An external client reaches the mapping's local address and port; the
// reply leaves as from the external address.
func TestNAT44StaticMappingBothWays(t *testing.T) {
	n := natNode(t)
	tr := n.Trace(tcp("uplink0", "198.51.100.7:1234", "192.168.16.1:30000"))
	if tr.Verdict != fakevpp.Forward || tr.Egress != "tap2" || tr.Out.Dst.String() != "10.1.1.2:8080" || tr.Out.Src.String() != "198.51.100.7:1234" || !tr.ReplyOK {
		t.Fatalf("to the static mapping: %s via %s as %s (%s) reply ok %t\n%s", tr.Verdict, tr.Egress, tr.Out, tr.Reason, tr.ReplyOK, strings.Join(tr.Steps, "\n"))
	}
	// Another port of the external address (uplink0's own) finds no
	// session and no mapping: with forwarding off NAT44-ED drops it rather
	// than deliver it to VPP ("no translation"), on both data planes.
	if tr := n.Trace(tcp("uplink0", "198.51.100.7:1235", "192.168.16.1:22")); tr.Verdict != fakevpp.Drop || !strings.Contains(tr.Reason, "no translation") {
		t.Errorf("to another port of the external address: %s (%s)\n%s", tr.Verdict, tr.Reason, strings.Join(tr.Steps, "\n"))
	}
}

// With forwarding off (the default), NAT44-ED drops an out2in packet that
// matches no session and no mapping and is not addressed to VPP.
func TestNAT44OutsideWithoutMappingIsDropped(t *testing.T) {
	n := natNode(t)
	if tr := n.Trace(tcp("uplink0", "198.51.100.7:1234", "10.1.1.2:8080")); tr.Verdict != fakevpp.Drop {
		t.Errorf("outside to a pod without a mapping, forwarding off: %s via %s (%s)\n%s", tr.Verdict, tr.Egress, tr.Reason, strings.Join(tr.Steps, "\n"))
	}
}

// A reflect rule in the pod interface's input ACL makes a session that lets
// the replies of the pod's connections out of that same interface through
// a deny-all output ACL, and nothing else (sessions belong to the
// interface that made them: a deny on another interface's input still
// drops the replies, which both data planes showed).
func TestACLReflectLetsRepliesIn(t *testing.T) {
	n := newNode(t)
	a := acl.NewServiceClient(connect(t, n))
	c := ctx(t)
	any4 := ip_types.Prefix{Address: ip_types.Address{Af: ip_types.ADDRESS_IP4}}
	reflect, err := a.ACLAddReplace(c, &acl.ACLAddReplace{ACLIndex: ^uint32(0), Tag: "reflect", R: []acl_types.ACLRule{
		{IsPermit: acl_types.ACL_ACTION_API_PERMIT_REFLECT, SrcPrefix: any4, DstPrefix: any4, SrcportOrIcmptypeLast: 65535, DstportOrIcmpcodeLast: 65535}}})
	must(t, err)
	deny, err := a.ACLAddReplace(c, &acl.ACLAddReplace{ACLIndex: ^uint32(0), Tag: "deny", R: []acl_types.ACLRule{
		{IsPermit: acl_types.ACL_ACTION_API_DENY, SrcPrefix: any4, DstPrefix: any4, SrcportOrIcmptypeLast: 65535, DstportOrIcmpcodeLast: 65535}}})
	must(t, err)
	_, err = a.ACLInterfaceSetACLList(c, &acl.ACLInterfaceSetACLList{SwIfIndex: swIf(t, n, "tap2"), Count: 2, NInput: 1, Acls: []uint32{reflect.ACLIndex, deny.ACLIndex}})
	must(t, err)

	if tr := n.Trace(tcp("tap2", "10.1.1.2:40000", "8.8.8.8:443")); tr.Verdict != fakevpp.Forward || !tr.ReplyOK {
		t.Errorf("the pod's connection and its reply: %s (%s) reply ok %t\n%s", tr.Verdict, tr.Reason, tr.ReplyOK, strings.Join(tr.Steps, "\n"))
	}
	if tr := n.Trace(tcp("uplink0", "8.8.8.8:443", "10.1.1.2:40001")); tr.Verdict != fakevpp.Drop {
		t.Errorf("an unsolicited packet from outside: %s via %s, want dropped by the pod interface's output ACL\n%s", tr.Verdict, tr.Egress, strings.Join(tr.Steps, "\n"))
	}
}

// cnatEndpoint is a literal address endpoint (no interface).
func cnatEndpoint(ap string) cnat.CnatEndpoint {
	a := netip.MustParseAddrPort(ap)
	addr := ip_types.Address{Af: ip_types.ADDRESS_IP6, Un: ip_types.AddressUnionIP6(a.Addr().As16())}
	if a.Addr().Is4() {
		addr = ip_types.Address{Af: ip_types.ADDRESS_IP4, Un: ip_types.AddressUnionIP4(a.Addr().As4())}
	}
	return cnat.CnatEndpoint{Addr: addr, SwIfIndex: ^interface_types.InterfaceIndex(0), Port: a.Port()}
}

// A cnat translation of an IPv6 VIP (is_real_ip 0: an exclusive VIP)
// sends a client to its backend and translates the reply back; another
// port of the VIP is dropped by the VIP's FIB entry.
func TestCNATExclusiveVIP(t *testing.T) {
	n := newNode(t)
	c := ctx(t)
	_, err := cnat.NewServiceClient(connect(t, n)).CnatTranslationUpdate(c, &cnat.CnatTranslationUpdate{Translation: cnat.CnatTranslation{
		Vip: cnatEndpoint("[fd00:96::1]:80"), IPProto: ip_types.IP_API_PROTO_TCP,
		Paths: []cnat.CnatEndpointTuple{{DstEp: cnatEndpoint("[fd00:1:1::2]:8080"), SrcEp: cnatEndpoint("[::]:0")}}}})
	must(t, err)
	tr := n.Trace(tcp("uplink0", "[2001:db8::7]:1234", "[fd00:96::1]:80"))
	if tr.Verdict != fakevpp.Forward || tr.Egress != "tap2" || tr.Out.Dst.String() != "[fd00:1:1::2]:8080" || tr.SNAT || !tr.ReplyOK {
		t.Fatalf("to the VIP: %s via %s as %s (%s) reply ok %t\n%s", tr.Verdict, tr.Egress, tr.Out, tr.Reason, tr.ReplyOK, strings.Join(tr.Steps, "\n"))
	}
	if tr := n.Trace(tcp("uplink0", "[2001:db8::7]:1235", "[fd00:96::1]:443")); tr.Verdict != fakevpp.Drop {
		t.Errorf("to another port of the exclusive VIP: %s via %s\n%s", tr.Verdict, tr.Egress, strings.Join(tr.Steps, "\n"))
	}
}

// ICMP echo through a NAT44-ED address-only static mapping: the request
// reaches the inside address, its identifier is kept, and the echo reply
// comes back from the external address.
func TestNAT44AddressOnlyMappingCarriesEcho(t *testing.T) {
	n := newNode(t)
	nat := enableNAT44(t, n)
	_, err := nat.Nat44AddDelStaticMappingV2(ctx(t), &nat44_ed.Nat44AddDelStaticMappingV2{IsAdd: true, Flags: nat_types.NAT_IS_ADDR_ONLY,
		LocalIPAddress: ip_types.IP4Address{10, 1, 1, 2}, ExternalIPAddress: ip_types.IP4Address{192, 168, 16, 50},
		ExternalSwIfIndex: ^interface_types.InterfaceIndex(0)})
	must(t, err)
	tr := n.Trace(fakevpp.Packet{Ingress: "uplink0", Protocol: 1, Src: ap("198.51.100.7:77"), Dst: ap("192.168.16.50:77")})
	if tr.Verdict != fakevpp.Forward || tr.Egress != "tap2" || tr.Out.Dst.Addr().String() != "10.1.1.2" || tr.Out.Dst.Port() != 77 || !tr.ReplyOK {
		t.Fatalf("echo to the mapping: %s via %s as %s (%s) reply ok %t\n%s", tr.Verdict, tr.Egress, tr.Out, tr.Reason, tr.ReplyOK, strings.Join(tr.Steps, "\n"))
	}
}

// The session a flow through a static mapping leaves, as the session dump
// shows it: its addresses and ports on both sides, the static and
// external-host flags, the external host (no NAT address for it without
// twice-NAT), not timed out, two packets. The byte count and the clock
// fields differ by design (docs/fakevpp.md: the fake counts 64 bytes a
// packet; VPP the IP length).
func TestNAT44SessionDump(t *testing.T) {
	n := natNode(t)
	tr := n.Trace(tcp("uplink0", "198.51.100.7:1234", "192.168.16.1:30000"))
	if tr.Verdict != fakevpp.Forward {
		t.Fatalf("flow: %s (%s)", tr.Verdict, tr.Reason)
	}
	nat := nat44_ed.NewServiceClient(connect(t, n))
	s, err := nat.Nat44UserSessionV3Dump(ctx(t), &nat44_ed.Nat44UserSessionV3Dump{IPAddress: ip_types.IP4Address{10, 1, 1, 2}})
	must(t, err)
	var got []*nat44_ed.Nat44UserSessionV3Details
	for {
		d, err := s.Recv()
		if err != nil {
			break
		}
		got = append(got, d)
	}
	if len(got) != 1 {
		t.Fatalf("%d sessions for 10.1.1.2, want 1: %+v", len(got), got)
	}
	d := got[0]
	t.Logf("session: %+v", *d)
	want := nat44_ed.Nat44UserSessionV3Details{
		OutsideIPAddress: ip_types.IP4Address{192, 168, 16, 1}, OutsidePort: 30000,
		InsideIPAddress: ip_types.IP4Address{10, 1, 1, 2}, InsidePort: 8080, Protocol: 6,
		ExtHostAddress: ip_types.IP4Address{198, 51, 100, 7}, ExtHostPort: 1234,
		Flags: nat_types.NAT_IS_STATIC | nat_types.NAT_IS_EXT_HOST_VALID, TotalPkts: 2,
	}
	cmp := *d
	cmp.LastHeard, cmp.TimeSinceLastHeard, cmp.TotalBytes = 0, 0, 0
	if cmp != want {
		t.Errorf("session\n got %+v\nwant %+v", cmp, want)
	}
}
