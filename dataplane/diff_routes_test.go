package dataplane_test

// Differential cases of drop routes (the NAT44 renderer's answer to traffic
// kube-proxy rejects): NAT44-ED translates before the FIB lookup, so a
// mapped frontend still works; what it does not translate meets the drop.

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"

	"go.fd.io/govpp/binapi/fib_types"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip"
	"go.fd.io/govpp/binapi/ip_types"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/binapi/nat_types"

	"github.com/vppsvc/vppsvc/fakevpp"
)

func TestDiffDropRoutes(t *testing.T) {
	runDifferential(t, "routes/drop", func(d *diffCase) {
		nat := natTopology(d)
		_, err := nat.Nat44ForwardingEnableDisable(d.Ctx, &nat44_ed.Nat44ForwardingEnableDisable{Enable: true})
		d.Must(err)
		_, err = nat.Nat44InterfaceAddDelFeature(d.Ctx, &nat44_ed.Nat44InterfaceAddDelFeature{IsAdd: true, SwIfIndex: d.Sw("tap2")})
		d.Must(err)
		_, err = nat.Nat44AddDelLbStaticMapping(d.Ctx, &nat44_ed.Nat44AddDelLbStaticMapping{IsAdd: true, Flags: nat_types.NAT_IS_OUT2IN_ONLY,
			ExternalAddr: ip_types.IP4Address{10, 96, 0, 10}, ExternalPort: 80, Protocol: 6, LocalNum: 2, Locals: []nat44_ed.Nat44LbAddrPort{
				{Addr: ip_types.IP4Address{10, 1, 1, 2}, Port: 8080, Probability: 1}, {Addr: ip_types.IP4Address{10, 1, 1, 3}, Port: 8080, Probability: 1}}})
		d.Retval("LB mapping 10.96.0.10:80", err)
		_, err = nat.Nat44AddDelStaticMappingV2(d.Ctx, &nat44_ed.Nat44AddDelStaticMappingV2{IsAdd: true, Flags: nat_types.NAT_IS_OUT2IN_ONLY,
			LocalIPAddress: ip_types.IP4Address{10, 1, 1, 2}, ExternalIPAddress: ip_types.IP4Address{10, 96, 0, 11},
			Protocol: 6, LocalPort: 8080, ExternalPort: 80, ExternalSwIfIndex: ^interface_types.InterfaceIndex(0)})
		d.Retval("static mapping 10.96.0.11:80", err)

		d.Trace("pod to the LB mapping's other port, no route", tcp("tap2", "10.1.1.9:40000", "10.96.0.10:443"))
		route := func(label, p string, add bool, pref uint8) {
			proto := fib_types.FIB_API_PATH_NH_PROTO_IP4
			_, err := ip.NewServiceClient(d.Conn).IPRouteAddDel(d.Ctx, &ip.IPRouteAddDel{IsAdd: add, Route: ip.IPRoute{
				Prefix: ip_types.Prefix{Address: ip_types.Address{Af: ip_types.ADDRESS_IP4, Un: ip_types.AddressUnionIP4(pfx(p).Addr().As4())}, Len: uint8(pfx(p).Bits())},
				NPaths: 1, Paths: []fib_types.FibPath{{SwIfIndex: ^uint32(0), Type: fib_types.FIB_API_PATH_TYPE_DROP, Proto: proto, Preference: pref}}}})
			d.Retval(label, err)
		}
		route("drop 10.96.0.0/12", "10.96.0.0/12", true, 0x76)
		route("drop 10.96.0.10/32", "10.96.0.10/32", true, 0x76)
		route("drop 10.96.0.11/32", "10.96.0.11/32", true, 0x76)
		// An LB mapping's draw depends on VPP's random state: record only
		// that a local was reached.
		lb := func(label string, p fakevpp.Packet) {
			tr := d.Node.Trace(p)
			d.Record(label, fmt.Sprintf("%s to a local %t, reply ok %t", tr.Verdict, tr.Out.Dst.Port() == 8080 && pfx("10.1.1.2/31").Contains(tr.Out.Dst.Addr()), tr.ReplyOK))
		}
		lb("pod to the LB mapping", tcp("tap2", "10.1.1.9:40001", "10.96.0.10:80"))
		d.Trace("pod to the LB mapping's other port", tcp("tap2", "10.1.1.9:40002", "10.96.0.10:443"))
		d.Trace("pod to the static mapping", tcp("tap2", "10.1.1.9:40003", "10.96.0.11:80"))
		d.Trace("pod to the static mapping's other port", tcp("tap2", "10.1.1.9:40004", "10.96.0.11:443"))
		d.Trace("pod to an address of the range no mapping holds", tcp("tap2", "10.1.1.9:40005", "10.96.0.99:80"))
		lb("outside to the LB mapping", tcp("uplink0", "198.51.100.7:40006", "10.96.0.10:80"))
		d.Trace("pod elsewhere", tcp("tap2", "10.1.1.9:40007", "8.8.8.8:443"))
		// VPP lists its special, connected and receive entries too (the fake
		// does not keep them): only the marked drop routes are compared.
		stream, err := ip.NewServiceClient(d.Conn).IPRouteDump(d.Ctx, &ip.IPRouteDump{Table: ip.IPTable{TableID: 0}})
		d.Must(err)
		var marked []string
		for {
			r, err := stream.Recv()
			if err != nil {
				break
			}
			if len(r.Route.Paths) == 1 && r.Route.Paths[0].Type == fib_types.FIB_API_PATH_TYPE_DROP && r.Route.Paths[0].Preference == 0x76 {
				marked = append(marked, fmt.Sprintf("%s/%d table %d", netip.AddrFrom4(r.Route.Prefix.Address.Un.GetIP4()), r.Route.Prefix.Len, r.Route.TableID))
			}
		}
		slices.Sort(marked)
		d.Record("marked drop routes", marked)
		route("delete drop 10.96.0.10/32", "10.96.0.10/32", false, 0x76)
		route("delete drop 10.96.0.10/32 again", "10.96.0.10/32", false, 0x76)
		d.Trace("pod to the LB mapping's other port, the range's drop only", tcp("tap2", "10.1.1.9:40008", "10.96.0.10:443"))
	})
}
