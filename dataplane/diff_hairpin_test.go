package dataplane_test

// Why the NAT44 renderer cannot masquerade the node's own ClusterIP traffic
// the way kube-proxy does (only sources outside the pod CIDRs): NAT44-ED
// treats every client of an outside interface alike, and the one path that
// treats a client by its interface, in2out hairpinning from an inside-only
// interface (which source-NATs to the pool), blackholes load-balanced
// mappings; nor does VPP take an LB mapping that is not out2in-only.

import (
	"testing"

	"go.fd.io/govpp/binapi/ip_types"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/binapi/nat_types"
)

func TestDiffInsideOnlyHairpin(t *testing.T) {
	runDifferential(t, "nat44/inside-only-hairpin", func(d *diffCase) {
		podNodeTopology(d)
		d.Must(d.Node.AddRoute(pfx("10.1.2.0/24"), "uplink0"))
		nat := nat44_ed.NewServiceClient(d.Conn)
		_, err := nat.Nat44EdPluginEnableDisable(d.Ctx, &nat44_ed.Nat44EdPluginEnableDisable{Enable: true})
		d.Must(err)
		_, err = nat.Nat44ForwardingEnableDisable(d.Ctx, &nat44_ed.Nat44ForwardingEnableDisable{Enable: true})
		d.Must(err)
		_, err = nat.Nat44InterfaceAddDelFeature(d.Ctx, &nat44_ed.Nat44InterfaceAddDelFeature{IsAdd: true, SwIfIndex: d.Sw("uplink0")})
		d.Must(err)
		for _, i := range []string{"host0", "tap2"} {
			_, err = nat.Nat44InterfaceAddDelFeature(d.Ctx, &nat44_ed.Nat44InterfaceAddDelFeature{IsAdd: true, Flags: nat_types.NAT_IS_INSIDE, SwIfIndex: d.Sw(i)})
			d.Must(err)
		}
		_, err = nat.Nat44AddDelAddressRange(d.Ctx, &nat44_ed.Nat44AddDelAddressRange{IsAdd: true, VrfID: ^uint32(0),
			FirstIPAddress: ip_types.IP4Address{192, 168, 16, 1}, LastIPAddress: ip_types.IP4Address{192, 168, 16, 1}})
		d.Must(err)
		locals := []nat44_ed.Nat44LbAddrPort{{Addr: ip_types.IP4Address{10, 1, 1, 2}, Port: 8080, Probability: 1}, {Addr: ip_types.IP4Address{10, 1, 2, 2}, Port: 8080, Probability: 1}}
		_, err = nat.Nat44AddDelLbStaticMapping(d.Ctx, &nat44_ed.Nat44AddDelLbStaticMapping{IsAdd: true, Flags: nat_types.NAT_IS_OUT2IN_ONLY | nat_types.NAT_IS_SELF_TWICE_NAT,
			ExternalAddr: ip_types.IP4Address{10, 96, 0, 10}, ExternalPort: 80, Protocol: 6, LocalNum: 2, Locals: locals})
		d.Retval("LB mapping 10.96.0.10:80, out2in-only", err)
		_, err = nat.Nat44AddDelLbStaticMapping(d.Ctx, &nat44_ed.Nat44AddDelLbStaticMapping{IsAdd: true, Flags: nat_types.NAT_IS_SELF_TWICE_NAT,
			ExternalAddr: ip_types.IP4Address{10, 96, 0, 11}, ExternalPort: 80, Protocol: 6, LocalNum: 2, Locals: locals})
		d.Retval("LB mapping 10.96.0.11:80, not out2in-only", err)
		d.Trace("the node (host0, inside only) to the LB mapping", tcp("host0", "172.30.1.2:40001", "10.96.0.10:80"))
	})
}
