package dataplane_test

// Differential cases where fakevpp once answered otherwise than VPP 25.10: a neighbour's host entry
// against NAT44-ED's receive entries and cnat's path trackers
// (docs/fakevpp.md#neighbours-and-nat44-ed-receive-entries), and NAT44-ED's
// outside FIBs with the output feature in VRFs (docs/fakevpp.md, NAT44-ED
// outside FIBs). Each mirrors a test of VPP's own suite
// (test/test_nat44_ed.py, test/test_cnat.py at v25.10) on this suite's
// topologies.

import (
	"testing"

	"go.fd.io/govpp/binapi/cnat"
	"go.fd.io/govpp/binapi/ip_types"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/binapi/nat_types"

	"github.com/vppsvc/vppsvc/fakevpp"
)

// natWithPool turns NAT44-ED on (forwarding as asked) and adds pool as the
// only pool address (any VRF).
func natWithPool(d *diffCase, forwarding bool, pool string) nat44_ed.RPCService {
	d.t.Helper()
	nat := nat44_ed.NewServiceClient(d.Conn)
	_, err := nat.Nat44EdPluginEnableDisable(d.Ctx, &nat44_ed.Nat44EdPluginEnableDisable{Enable: true})
	d.Must(err)
	if forwarding {
		_, err = nat.Nat44ForwardingEnableDisable(d.Ctx, &nat44_ed.Nat44ForwardingEnableDisable{Enable: true})
		d.Retval("forwarding on", err)
	}
	_, err = nat.Nat44AddDelAddressRange(d.Ctx, &nat44_ed.Nat44AddDelAddressRange{IsAdd: true, VrfID: ^uint32(0),
		FirstIPAddress: ip4a(pool), LastIPAddress: ip4a(pool)})
	d.Retval("pool address "+pool, err)
	return nat
}

// natRole gives an interface NAT44-ED's inside or outside role.
func natRole(d *diffCase, nat nat44_ed.RPCService, ifName string, flags nat_types.NatConfigFlags) {
	d.t.Helper()
	role := map[nat_types.NatConfigFlags]string{0: "outside", nat_types.NAT_IS_INSIDE: "inside"}[flags]
	_, err := nat.Nat44InterfaceAddDelFeature(d.Ctx, &nat44_ed.Nat44InterfaceAddDelFeature{IsAdd: true, Flags: flags, SwIfIndex: d.Sw(ifName)})
	d.Retval(role+" on "+ifName, err)
}

// outputFeature puts NAT44-ED's output feature on an interface.
func outputFeature(d *diffCase, nat nat44_ed.RPCService, ifName string) {
	d.t.Helper()
	_, err := nat.Nat44EdAddDelOutputInterface(d.Ctx, &nat44_ed.Nat44EdAddDelOutputInterface{IsAdd: true, SwIfIndex: d.Sw(ifName)})
	d.Retval("output feature on "+ifName, err)
}

// identityAddrOnly adds an address-only identity mapping of addr.
func identityAddrOnly(d *diffCase, nat nat44_ed.RPCService, addr string) {
	d.t.Helper()
	_, err := nat.Nat44AddDelIdentityMapping(d.Ctx, &nat44_ed.Nat44AddDelIdentityMapping{IsAdd: true, Flags: nat_types.NAT_IS_ADDR_ONLY,
		IPAddress: ip4a(addr), SwIfIndex: noIf})
	d.Retval("address-only identity mapping "+addr, err)
}

func TestDiffNeighbourEntries(t *testing.T) {
	// test_output_feature_and_service: host0 inside and outside, the
	// output feature on uplink0, forwarding on, an address-only identity
	// mapping of the client and an out2in-only static mapping of a
	// service on host0. The client's /32 is NAT44-ED's receive entry and
	// the client's neighbour entry at once: the neighbour's wins, so the
	// service's reply and the host's own connections to the client leave
	// (translated) instead of being delivered to VPP.
	runDifferential(t, "nat44/output-feature-and-service", func(d *diffCase) {
		podNodeTopology(d)
		d.Must(d.Node.AddNeighbour("uplink0", addr("192.168.16.7")))
		d.Must(d.Node.AddNeighbour("host0", addr("172.30.1.2")))
		nat := natWithPool(d, true, "192.168.16.1")
		identityAddrOnly(d, nat, "192.168.16.7")
		_, err := nat.Nat44AddDelStaticMappingV2(d.Ctx, &nat44_ed.Nat44AddDelStaticMappingV2{IsAdd: true, Flags: nat_types.NAT_IS_OUT2IN_ONLY,
			LocalIPAddress: ip4a("172.30.1.2"), ExternalIPAddress: ip4a("1.2.3.4"), Protocol: 6, LocalPort: 8080, ExternalPort: 80, ExternalSwIfIndex: noIf})
		d.Retval("static mapping 1.2.3.4:80 → 172.30.1.2:8080/TCP", err)
		natRole(d, nat, "host0", nat_types.NAT_IS_INSIDE)
		natRole(d, nat, "host0", 0)
		outputFeature(d, nat, "uplink0")
		d.Trace("the client to the service", tcp("uplink0", "192.168.16.7:12345", "1.2.3.4:80"))
		d.Trace("the host's own TCP to the client", tcp("host0", "172.30.1.2:40000", "192.168.16.7:22"))
		d.Trace("the host's own UDP to the client", udp("host0", "172.30.1.2:5000", "192.168.16.7:53"))
		d.Trace("the host's own echo to the client", fakevpp.Packet{Ingress: "host0", Protocol: 1, Src: ap("172.30.1.2:4000"), Dst: ap("192.168.16.7:4000")})
		sessions(d, "sessions of the host", "172.30.1.2")
	})

	// An address-only identity mapping of an inside host: its flows leave
	// untranslated, and the replies, passed by the mapping on out2in,
	// reach the host (its neighbour entry hides the mapping's receive
	// entry); a host without the mapping is source-NATed.
	runDifferential(t, "nat44/identity-address-only", func(d *diffCase) {
		podNodeTopology(d)
		d.Must(d.Node.AddNeighbour("host0", addr("172.30.1.2")))
		d.Must(d.Node.AddNeighbour("host0", addr("172.30.1.3")))
		nat := natWithPool(d, false, "192.168.16.1")
		identityAddrOnly(d, nat, "172.30.1.2")
		natRole(d, nat, "host0", nat_types.NAT_IS_INSIDE)
		natRole(d, nat, "uplink0", 0)
		d.Trace("UDP from the identity-mapped host", udp("host0", "172.30.1.2:5000", "8.8.8.8:53"))
		d.Trace("TCP from the identity-mapped host", tcp("host0", "172.30.1.2:40000", "8.8.8.8:443"))
		d.Trace("UDP from another host", udp("host0", "172.30.1.3:5000", "8.8.8.8:53"))
		d.Trace("UDP from outside to the identity-mapped host", udp("uplink0", "8.8.4.4:53", "172.30.1.2:5001"))
	})

	// An open cnat flow whose backend is a neighbour, across an update
	// that drops the backend: the neighbour's host entry outlives the
	// translation's path tracker, so the flow keeps its backend (beside
	// cnat/flow-across-update, where the translation alone held it).
	runDifferential(t, "cnat/flow-across-update-neighbour", func(d *diffCase) {
		cnatTopology(d)
		d.Must(d.Node.AddNeighbour("host0", addr("172.30.1.2")))
		d.Must(d.Node.AddNeighbour("host0", addr("172.30.1.3")))
		c := cnat.NewServiceClient(d.Conn)
		update := func(label string, backend string) uint32 {
			tr := cnat.CnatTranslation{Vip: cnatEndpoint("10.96.0.61:80"), IPProto: ip_types.IP_API_PROTO_TCP,
				Paths: []cnat.CnatEndpointTuple{{DstEp: cnatEndpoint(backend), SrcEp: cnatEndpoint("0.0.0.0:0")}}}
			r, err := c.CnatTranslationUpdate(d.Ctx, &cnat.CnatTranslationUpdate{Translation: tr})
			d.Retval(label, err)
			if r == nil {
				return 0
			}
			return r.ID
		}
		id := update("translation 10.96.0.61:80 → 172.30.1.2:8080", "172.30.1.2:8080")
		open := tcp("uplink0", "198.51.100.7:2100", "10.96.0.61:80")
		d.Trace("open a flow", open)
		update("replace it by 172.30.1.3:8080", "172.30.1.3:8080")
		d.Trace("the client's next packet after the update", pktFlags(open, ack))
		d.Trace("a new flow after the update", tcp("uplink0", "198.51.100.7:2101", "10.96.0.61:80"))
		_, err := c.CnatTranslationDel(d.Ctx, &cnat.CnatTranslationDel{ID: id})
		d.Retval("delete the translation", err)
		d.Trace("the client's next packet after the delete", pktFlags(open, ack))
	})
}

func TestDiffNATOutsideFibs(t *testing.T) {
	// test_dynamic_output_feature_vrf: the inside host's interface and the
	// output-feature interface both in VRF 23 (moved there after the
	// output feature was set): the output-feature interface's FIB is one
	// of NAT44-ED's outside FIBs, so the session's outside side is in VRF
	// 23 and the replies are translated back.
	runDifferential(t, "vrf/nat44-output-feature-in-a-vrf", func(d *diffCase) {
		d.Must(d.Node.AddInterface("in7"))
		d.Must(d.Node.AddInterface("out8"))
		nat := natWithPool(d, false, "10.0.0.3")
		outputFeature(d, nat, "out8")
		d.Must(d.Node.AddTable(23, false))
		for _, i := range []string{"in7", "out8"} {
			d.Must(d.Node.SetTable(i, 23, false))
		}
		d.Must(d.Node.AddAddress("in7", pfx("10.7.0.1/24")))
		d.Must(d.Node.AddAddress("out8", pfx("10.8.0.1/24")))
		d.Must(d.Node.AddNeighbour("in7", addr("10.7.0.2")))
		d.Must(d.Node.AddNeighbour("out8", addr("10.8.0.2")))
		d.Trace("UDP from the VRF host", udp("in7", "10.7.0.2:5000", "10.8.0.2:53"))
		d.Trace("TCP from the VRF host", tcp("in7", "10.7.0.2:40000", "10.8.0.2:443"))
		d.Trace("echo from the VRF host", fakevpp.Packet{Ingress: "in7", Protocol: 1, Src: ap("10.7.0.2:4000"), Dst: ap("10.8.0.2:4000")})
	})

	// test_multiple_vrf_2: an interface in VRF 1 with both roles, whose
	// table sends everything on to table 0, and the output feature on the
	// uplink in table 0. in2out does not translate (the uplink has no
	// outside role), the output feature does; the session's outside FIB
	// is table 0: VRF 1's FIB does not resolve the destination through an
	// interface (its default route continues in table 0), so the replies
	// are translated back.
	runDifferential(t, "vrf/nat44-output-feature-from-vrf-1", func(d *diffCase) {
		d.Must(d.Node.AddInterface("uplink0", pfx("192.168.16.1/24")))
		d.Must(d.Node.AddInterface("in5"))
		d.Must(d.Node.AddTable(20, false))
		d.Must(d.Node.SetTable("in5", 20, false))
		d.Must(d.Node.AddAddress("in5", pfx("10.1.5.1/24")))
		d.Must(d.Node.AddNeighbour("in5", addr("10.1.5.2")))
		d.Must(d.Node.AddNeighbour("uplink0", addr("192.168.16.2")))
		d.Must(d.Node.AddRouteToTable(20, pfx("0.0.0.0/0"), 0))
		nat := natWithPool(d, false, "10.0.0.3")
		outputFeature(d, nat, "uplink0")
		natRole(d, nat, "in5", 0)
		natRole(d, nat, "in5", nat_types.NAT_IS_INSIDE)
		d.Trace("TCP from VRF 20 to the uplink's host", tcp("in5", "10.1.5.2:2345", "192.168.16.2:22"))
		d.Trace("UDP from VRF 20 to the uplink's host", udp("in5", "10.1.5.2:5000", "192.168.16.2:53"))
	})
}
