package dataplane_test

// Differential cases of addresses that follow an interface: NAT44-ED pool
// and twice-NAT addresses taken from an interface, static mappings bound
// to an interface's address, and cnat's SNAT addresses and translation
// endpoints given by sw_if_index, as the interface's address is added,
// removed and added again.

import (
	"testing"

	"go.fd.io/govpp/binapi/cnat"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip_types"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/binapi/nat_types"
)

// ifaddrNode is uplink0 (outside, with an address) and uplink1 (outside,
// no address yet) with NAT44-ED on and tap2 inside, unnumbered to host0.
func ifaddrNode(d *diffCase) nat44_ed.RPCService {
	d.Must(d.Node.AddInterface("uplink0", pfx("192.168.16.1/24")))
	d.Must(d.Node.AddInterface("uplink1"))
	d.Must(d.Node.AddInterface("host0", pfx("172.30.1.1/24")))
	d.Must(d.Node.AddInterface("tap2"))
	d.Must(d.Node.SetUnnumbered("tap2", "host0"))
	d.Must(d.Node.AddRoute(pfx("10.1.1.2/32"), "tap2"))
	d.Must(d.Node.AddRoute(pfx("0.0.0.0/0"), "uplink1"))
	nat := nat44_ed.NewServiceClient(d.Conn)
	_, err := nat.Nat44EdPluginEnableDisable(d.Ctx, &nat44_ed.Nat44EdPluginEnableDisable{Enable: true})
	d.Must(err)
	for _, f := range []struct {
		name  string
		flags nat_types.NatConfigFlags
	}{{"uplink0", 0}, {"uplink1", 0}, {"tap2", nat_types.NAT_IS_INSIDE}} {
		_, err := nat.Nat44InterfaceAddDelFeature(d.Ctx, &nat44_ed.Nat44InterfaceAddDelFeature{IsAdd: true, Flags: f.flags, SwIfIndex: d.Sw(f.name)})
		d.Must(err)
	}
	return nat
}

func natAddrDumps(d *diffCase, step string) {
	Dump[*nat44_ed.Nat44InterfaceAddrDetails](d, step+": interface addresses", &nat44_ed.Nat44InterfaceAddrDump{})
	Dump[*nat44_ed.Nat44AddressDetails](d, step+": pool", &nat44_ed.Nat44AddressDump{})
}

func TestDiffIfAddr(t *testing.T) {
	runDifferential(t, "ifaddr/nat44-pool-follows-interface", func(d *diffCase) {
		nat := ifaddrNode(d)
		ifAddr := func(label, name string, add bool, flags nat_types.NatConfigFlags) {
			_, err := nat.Nat44AddDelInterfaceAddr(d.Ctx, &nat44_ed.Nat44AddDelInterfaceAddr{IsAdd: add, SwIfIndex: d.Sw(name), Flags: flags})
			d.Retval(label, err)
		}
		ifAddr("uplink1 into the pool (no address yet)", "uplink1", true, 0)
		ifAddr("uplink1 into the pool again", "uplink1", true, 0)
		natAddrDumps(d, "before the address")
		d.Trace("pod out of uplink1, empty pool", tcp("tap2", "10.1.1.2:40000", "8.8.8.8:443"))
		d.Must(d.Node.AddAddress("uplink1", pfx("203.0.113.1/24")))
		natAddrDumps(d, "address added")
		d.Trace("pod out of uplink1, SNAT to its address", tcp("tap2", "10.1.1.2:40001", "8.8.8.8:443"))
		d.Must(d.Node.AddAddress("uplink1", pfx("203.0.114.1/24")))
		natAddrDumps(d, "second address added")
		d.Must(d.Node.DelAddress("uplink1", pfx("203.0.113.1/24")))
		natAddrDumps(d, "first address removed (the second is not taken)")
		Dump[*nat44_ed.Nat44UserDetails](d, "users after the address went", &nat44_ed.Nat44UserDump{})
		d.Must(d.Node.AddAddress("uplink1", pfx("203.0.113.1/24")))
		natAddrDumps(d, "first address re-added")
		d.Must(d.Node.DelAddress("uplink1", pfx("203.0.114.1/24")))
		natAddrDumps(d, "second address removed (not the pool's)")
		ifAddr("uplink1 out of the pool", "uplink1", false, 0)
		ifAddr("uplink1 out of the pool again", "uplink1", false, 0)
		natAddrDumps(d, "record removed")
		ifAddr("uplink0 (has an address) into the pool", "uplink0", true, 0)
		natAddrDumps(d, "uplink0's record")
		_, err := nat.Nat44AddDelInterfaceAddr(d.Ctx, &nat44_ed.Nat44AddDelInterfaceAddr{IsAdd: true, SwIfIndex: ^interface_types.InterfaceIndex(0) - 1})
		d.Retval("unknown interface into the pool", err)
	})
	runDifferential(t, "ifaddr/nat44-twice-nat-record", func(d *diffCase) {
		nat := ifaddrNode(d)
		for _, f := range []nat_types.NatConfigFlags{nat_types.NAT_IS_TWICE_NAT, 0} {
			_, err := nat.Nat44AddDelInterfaceAddr(d.Ctx, &nat44_ed.Nat44AddDelInterfaceAddr{IsAdd: true, SwIfIndex: d.Sw("uplink1"), Flags: f})
			d.Retval("uplink1 record "+f.String(), err)
		}
		natAddrDumps(d, "both records, no address")
		// Both records on one interface: the address callback finds the
		// normal record first and never looks at the twice-NAT one.
		d.Must(d.Node.AddAddress("uplink1", pfx("203.0.113.1/24")))
		natAddrDumps(d, "address added")
		_, err := nat.Nat44AddDelInterfaceAddr(d.Ctx, &nat44_ed.Nat44AddDelInterfaceAddr{IsAdd: false, SwIfIndex: d.Sw("uplink1")})
		d.Retval("normal record removed", err)
		natAddrDumps(d, "twice-NAT record left")
		d.Must(d.Node.DelAddress("uplink1", pfx("203.0.113.1/24")))
		d.Must(d.Node.AddAddress("uplink1", pfx("203.0.113.1/24")))
		natAddrDumps(d, "address removed and re-added")
	})
	runDifferential(t, "ifaddr/nat44-record-removed", func(d *diffCase) {
		nat := ifaddrNode(d)
		del := func(label string) {
			_, err := nat.Nat44AddDelInterfaceAddr(d.Ctx, &nat44_ed.Nat44AddDelInterfaceAddr{IsAdd: false, SwIfIndex: d.Sw("uplink1")})
			d.Retval(label, err)
		}
		_, err := nat.Nat44AddDelInterfaceAddr(d.Ctx, &nat44_ed.Nat44AddDelInterfaceAddr{IsAdd: true, SwIfIndex: d.Sw("uplink1")})
		d.Retval("uplink1 into the pool", err)
		d.Must(d.Node.AddAddress("uplink1", pfx("203.0.113.1/24")))
		d.Must(d.Node.AddAddress("uplink1", pfx("203.0.114.1/24")))
		d.Must(d.Node.DelAddress("uplink1", pfx("203.0.113.1/24")))
		natAddrDumps(d, "the pool's address removed, another left")
		// The record goes; then VPP removes the interface's first address
		// from the pool, where it is not.
		del("record removed")
		natAddrDumps(d, "record removed")
		del("record removed again")
	})
	runDifferential(t, "ifaddr/nat44-mapping-follows-interface", func(d *diffCase) {
		nat := ifaddrNode(d)
		sm := func(label string, add bool) {
			_, err := nat.Nat44AddDelStaticMappingV2(d.Ctx, &nat44_ed.Nat44AddDelStaticMappingV2{IsAdd: add, Flags: nat_types.NAT_IS_OUT2IN_ONLY,
				LocalIPAddress: ip4a("10.1.1.2"), Protocol: 6, LocalPort: 8080, ExternalPort: 30000, ExternalSwIfIndex: d.Sw("uplink1"), Tag: "web"})
			d.Retval(label, err)
		}
		dumps := func(step string) {
			Dump[*nat44_ed.Nat44StaticMappingDetails](d, step+": static mappings", &nat44_ed.Nat44StaticMappingDump{})
		}
		sm("mapping on uplink1's address (none yet)", true)
		sm("the same mapping again", true)
		dumps("pending")
		d.Must(d.Node.AddAddress("uplink1", pfx("203.0.113.1/24")))
		dumps("address added")
		d.Trace("to the mapping on uplink1's address", tcp("uplink1", "198.51.100.7:1234", "203.0.113.1:30000"))
		d.Must(d.Node.DelAddress("uplink1", pfx("203.0.113.1/24")))
		dumps("address removed")
		d.Must(d.Node.AddAddress("uplink1", pfx("203.0.113.9/24")))
		dumps("another address added")
		d.Trace("to the mapping on the new address", tcp("uplink1", "198.51.100.7:1235", "203.0.113.9:30000"))
		sm("mapping removed", false)
		dumps("removed")
		sm("mapping removed again", false)
	})
	runDifferential(t, "ifaddr/unnumbered-interface-address", func(d *diffCase) {
		// An unnumbered interface's "first address" is its donor's
		// (ip4_interface_first_address honours unnumbered).
		nat := ifaddrNode(d)
		_, err := nat.Nat44AddDelInterfaceAddr(d.Ctx, &nat44_ed.Nat44AddDelInterfaceAddr{IsAdd: true, SwIfIndex: d.Sw("tap2")})
		d.Retval("tap2 (unnumbered to host0) into the pool", err)
		natAddrDumps(d, "tap2's record")
		c := cnat.NewServiceClient(d.Conn)
		vip := cnat.CnatEndpoint{SwIfIndex: d.Sw("tap2"), IfAf: ip_types.ADDRESS_IP4, Port: 30080}
		_, err = c.CnatTranslationUpdate(d.Ctx, &cnat.CnatTranslationUpdate{Translation: cnat.CnatTranslation{
			Vip: vip, IPProto: ip_types.IP_API_PROTO_TCP,
			Paths: []cnat.CnatEndpointTuple{{DstEp: cnatEndpoint("10.1.1.2:8080"), SrcEp: cnatEndpoint("0.0.0.0:0")}}}})
		d.Retval("cnat VIP on tap2's address", err)
		Dump[*cnat.CnatTranslationDetails](d, "translations", &cnat.CnatTranslationDump{}, "ID")
	})
	runDifferential(t, "ifaddr/cnat-snat-follows-interface", func(d *diffCase) {
		d.Must(d.Node.AddInterface("uplink1"))
		c := cnat.NewServiceClient(d.Conn)
		get := func(step string) {
			r, err := c.CnatGetSnatAddresses(d.Ctx, &cnat.CnatGetSnatAddresses{})
			d.Retval(step+": get", err)
			d.RecordExcept(step+": snat addresses", r, "ID")
		}
		// VPP never clears an SNAT endpoint's resolved flag when the
		// addresses are set again: after a literal set (what every agent
		// and the real test node's reset do first) an interface's added
		// address is not taken, only a removal re-resolves
		// (cnat_set_snat, cnat_if_addr_add_del_snat_cb).
		_, err := c.CnatSetSnatAddresses(d.Ctx, &cnat.CnatSetSnatAddresses{SwIfIndex: ^interface_types.InterfaceIndex(0)})
		d.Retval("literal zero SNAT addresses", err)
		_, err = c.CnatSetSnatAddresses(d.Ctx, &cnat.CnatSetSnatAddresses{SwIfIndex: d.Sw("uplink1")})
		d.Retval("snat addresses from uplink1", err)
		get("no address")
		d.Must(d.Node.AddAddress("uplink1", pfx("203.0.113.1/24")))
		d.Must(d.Node.AddAddress("uplink1", pfx("2001:db8:113::1/64")))
		get("both families added")
		d.Must(d.Node.AddAddress("uplink1", pfx("203.0.114.1/24")))
		get("second IPv4 address added")
		d.Must(d.Node.DelAddress("uplink1", pfx("203.0.113.1/24")))
		get("first IPv4 address removed")
		d.Must(d.Node.DelAddress("uplink1", pfx("203.0.114.1/24")))
		get("no IPv4 address left")
		d.Must(d.Node.AddAddress("uplink1", pfx("203.0.113.1/24")))
		get("IPv4 address re-added")
		_, err = c.CnatSetSnatAddresses(d.Ctx, &cnat.CnatSetSnatAddresses{SnatIP4: ip4a("192.0.2.1"), SwIfIndex: ^interface_types.InterfaceIndex(0)})
		d.Retval("literal IPv4 SNAT address", err)
		get("literal")
	})
	runDifferential(t, "ifaddr/cnat-vip-follows-interface", func(d *diffCase) {
		d.Must(d.Node.AddInterface("uplink0", pfx("192.168.16.1/24")))
		d.Must(d.Node.AddInterface("uplink1"))
		d.Must(d.Node.AddInterface("tap2"))
		d.Must(d.Node.SetUnnumbered("tap2", "uplink0"))
		d.Must(d.Node.AddRoute(pfx("10.1.1.2/32"), "tap2"))
		c := cnat.NewServiceClient(d.Conn)
		vip := cnat.CnatEndpoint{SwIfIndex: d.Sw("uplink1"), IfAf: ip_types.ADDRESS_IP4, Port: 30080}
		r, err := c.CnatTranslationUpdate(d.Ctx, &cnat.CnatTranslationUpdate{Translation: cnat.CnatTranslation{
			Vip: vip, IPProto: ip_types.IP_API_PROTO_TCP, IsRealIP: 1,
			Paths: []cnat.CnatEndpointTuple{{DstEp: cnatEndpoint("10.1.1.2:8080"), SrcEp: cnatEndpoint("0.0.0.0:0")}}}})
		d.Retval("translation on uplink1's address", err)
		_ = r // its ID is a pool index: it depends on what the VPP held before
		dump := func(step string) {
			Dump[*cnat.CnatTranslationDetails](d, step+": translations", &cnat.CnatTranslationDump{}, "ID")
		}
		dump("no address")
		d.Must(d.Node.AddAddress("uplink1", pfx("203.0.113.1/24")))
		dump("address added")
		d.Trace("to the VIP on uplink1's address", tcp("uplink1", "203.0.113.7:1234", "203.0.113.1:30080"))
		d.Must(d.Node.DelAddress("uplink1", pfx("203.0.113.1/24")))
		dump("address removed")
		d.Must(d.Node.AddAddress("uplink1", pfx("203.0.113.9/24")))
		dump("another address added")
		d.Trace("to the VIP on the new address", tcp("uplink1", "203.0.113.7:1235", "203.0.113.9:30080"))
	})
}
