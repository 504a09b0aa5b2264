package dataplane_test

// Differential cases of VRF tables: interfaces in a table, lookups per
// table, routes that continue in another table, and NAT44-ED with its
// inside interface in a pod VRF (how Contiv and Calico-VPP separate pods
// from the host).

import (
	"net/netip"
	"testing"

	"go.fd.io/govpp/binapi/cnat"
	"go.fd.io/govpp/binapi/fib_types"
	interfaces "go.fd.io/govpp/binapi/interface"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip"
	"go.fd.io/govpp/binapi/ip_types"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/binapi/nat_types"
)

// podVRF is an uplink in table 0 and a pod interface tap5 in table 10 of
// both families, with the pod 10.10.0.5 / fd00:10::5 behind it. The pod
// VRF's default routes continue in table 0; table 0 reaches the pods only
// when leak is set.
func podVRF(d *diffCase, leak bool) {
	d.Must(d.Node.AddInterface("uplink0", pfx("192.168.16.1/24"), pfx("fd00:16::1/64")))
	d.Must(d.Node.AddRoute(pfx("0.0.0.0/0"), "uplink0"))
	d.Must(d.Node.AddRoute(pfx("::/0"), "uplink0"))
	d.Must(d.Node.AddInterface("tap5"))
	for _, ip6 := range []bool{false, true} {
		d.Must(d.Node.AddTable(10, ip6))
		d.Must(d.Node.SetTable("tap5", 10, ip6))
	}
	d.Must(d.Node.AddAddress("tap5", pfx("10.10.0.1/24")))
	d.Must(d.Node.AddAddress("tap5", pfx("fd00:10::1/64")))
	d.Must(d.Node.AddNeighbour("tap5", netip.MustParseAddr("10.10.0.5")))
	d.Must(d.Node.AddNeighbour("tap5", netip.MustParseAddr("fd00:10::5")))
	d.Must(d.Node.AddRouteToTable(10, pfx("0.0.0.0/0"), 0))
	d.Must(d.Node.AddRouteToTable(10, pfx("::/0"), 0))
	if leak {
		d.Must(d.Node.AddRouteToTable(0, pfx("10.10.0.0/24"), 10))
		d.Must(d.Node.AddRouteToTable(0, pfx("fd00:10::/64"), 10))
	}
}

func TestDiffVRF(t *testing.T) {
	// Tables 61 and 71–72 are used by no other case: NAT44-ED leaks its
	// enable-time VRFs on a real VPP (vrf/nat44-enable-vrfs), so a case
	// that expects a table to be missing must not share its ID.
	runDifferential(t, "vrf/set-table", func(d *diffCase) {
		d.Must(d.Node.AddInterface("uplink0", pfx("192.168.16.1/24")))
		d.Must(d.Node.AddInterface("tap5"))
		d.Must(d.Node.AddInterface("tap6"))
		d.Must(d.Node.SetUnnumbered("tap6", "uplink0"))
		c := interfaces.NewServiceClient(d.Conn)
		ipc := ip.NewServiceClient(d.Conn)
		set := func(label, name string, vrf uint32, ip6 bool) {
			_, err := c.SwInterfaceSetTable(d.Ctx, &interfaces.SwInterfaceSetTable{SwIfIndex: d.Sw(name), VrfID: vrf, IsIPv6: ip6})
			d.Retval(label, err)
		}
		get := func(label, name string, ip6 bool) {
			r, err := c.SwInterfaceGetTable(d.Ctx, &interfaces.SwInterfaceGetTable{SwIfIndex: d.Sw(name), IsIPv6: ip6})
			d.Retval(label, err)
			d.Record(label+" vrf", r.VrfID)
		}
		set("tap5 into missing table 61", "tap5", 61, false)
		for _, ip6 := range []bool{false, true} {
			_, err := ipc.IPTableAddDel(d.Ctx, &ip.IPTableAddDel{IsAdd: true, Table: ip.IPTable{TableID: 61, IsIP6: ip6}})
			d.Retval("add table 61", err)
		}
		_, err := ipc.IPTableAddDel(d.Ctx, &ip.IPTableAddDel{IsAdd: true, Table: ip.IPTable{TableID: 61}})
		d.Retval("add table 61 again", err)
		set("tap5 into table 61", "tap5", 61, false)
		set("tap5 into ip6 table 61", "tap5", 61, true)
		get("tap5 ip4 table", "tap5", false)
		get("tap5 ip6 table", "tap5", true)
		set("uplink0 (has an address) into table 61", "uplink0", 61, false)
		set("tap6 (unnumbered) into table 61", "tap6", 61, false)
		set("tap6 ip6 (unnumbered) into table 61", "tap6", 61, true)
		get("uplink0 ip4 table", "uplink0", false)
		_, err = c.SwInterfaceSetTable(d.Ctx, &interfaces.SwInterfaceSetTable{SwIfIndex: ^interface_types.InterfaceIndex(0) - 1, VrfID: 61})
		d.Retval("unknown interface into table 61", err)
		// Deleting a table an interface holds: the API's lock goes, the
		// interface keeps the table.
		_, err = ipc.IPTableAddDel(d.Ctx, &ip.IPTableAddDel{IsAdd: false, Table: ip.IPTable{TableID: 61}})
		d.Retval("delete table 61", err)
		get("tap5 ip4 table after the delete", "tap5", false)
		set("tap5 back to table 0", "tap5", 0, false)
		set("tap5 into deleted table 61", "tap5", 61, false)
		_, err = ipc.IPTableAddDel(d.Ctx, &ip.IPTableAddDel{IsAdd: false, Table: ip.IPTable{TableID: 77}})
		d.Retval("delete missing table 77", err)
	})
	runDifferential(t, "vrf/routes-across-tables", func(d *diffCase) {
		podVRF(d, false)
		d.Trace("pod to the internet: table 10 default continues in table 0", tcp("tap5", "10.10.0.5:40000", "8.8.8.8:443"))
		d.Trace("pod v6 to the internet", tcp("tap5", "[fd00:10::5]:40000", "[2001:db8::8]:443"))
		d.Trace("outside to the pod, table 0 has no route", tcp("uplink0", "8.8.8.8:443", "10.10.0.5:40001"))
		d.Trace("outside to tap5's address, not in table 0", tcp("uplink0", "8.8.8.8:443", "10.10.0.1:22"))
		d.Trace("pod to uplink0's own address (table 0 receive)", tcp("tap5", "10.10.0.5:40002", "192.168.16.1:22"))
		d.Must(d.Node.AddRouteToTable(0, pfx("10.10.0.0/24"), 10))
		d.Trace("outside to the pod after the leak route", tcp("uplink0", "8.8.8.8:443", "10.10.0.5:40003"))
		d.Trace("outside to tap5's address after the leak route", tcp("uplink0", "8.8.8.8:443", "10.10.0.1:22"))
	})
	runDifferential(t, "vrf/overlapping-tables", func(d *diffCase) {
		podVRF(d, false)
		// tap6 in table 20 with the same subnet as tap5: each table
		// resolves it to its own interface. (Both pods are neighbours on
		// both interfaces: fakevpp does not model neighbour resolution,
		// a real VPP drops into an unresolved neighbour.)
		d.Must(d.Node.AddInterface("tap6"))
		d.Must(d.Node.AddTable(20, false))
		d.Must(d.Node.SetTable("tap6", 20, false))
		d.Must(d.Node.AddAddress("tap6", pfx("10.10.0.1/24")))
		for _, ifc := range []string{"tap5", "tap6"} {
			for _, a := range []string{"10.10.0.5", "10.10.0.6"} {
				d.Must(d.Node.AddNeighbour(ifc, netip.MustParseAddr(a)))
			}
		}
		d.Must(d.Node.AddRouteToTable(20, pfx("0.0.0.0/0"), 0))
		d.Trace("tap6's pod to the internet, no way back in table 0", tcp("tap6", "10.10.0.6:40000", "8.8.8.8:443"))
		d.Trace("tap6's pod to 10.10.0.5: table 20's own subnet", tcp("tap6", "10.10.0.6:40001", "10.10.0.5:80"))
		d.Trace("tap5's pod to 10.10.0.6: table 10's own subnet", tcp("tap5", "10.10.0.5:40002", "10.10.0.6:80"))
		d.Must(d.Node.AddRouteIn(20, pfx("172.16.0.0/16"), "uplink0"))
		d.Trace("tap6's pod to a table-20 route out of uplink0", tcp("tap6", "10.10.0.6:40004", "172.16.3.4:80"))
		d.Trace("tap5's pod to the same: table 10 falls back to table 0", tcp("tap5", "10.10.0.5:40005", "172.16.3.4:80"))
		d.Must(d.Node.AddRouteToTable(0, pfx("10.10.0.0/24"), 20))
		d.Trace("outside to 10.10.0.5: table 0 leaks into table 20", tcp("uplink0", "8.8.8.8:443", "10.10.0.5:40006"))
	})
	runDifferential(t, "vrf/route-api", func(d *diffCase) {
		d.Must(d.Node.AddInterface("uplink0", pfx("192.168.16.1/24")))
		c := ip.NewServiceClient(d.Conn)
		route := func(label string, table uint32, dst string, path ip.IPRoute) {
			path.TableID, path.Prefix = table, ipPrefix(pfx(dst))
			_, err := c.IPRouteAddDel(d.Ctx, &ip.IPRouteAddDel{IsAdd: true, Route: path})
			d.Retval(label, err)
		}
		deag := func(next uint32) ip.IPRoute {
			return ip.IPRoute{NPaths: 1, Paths: []fibPath{{SwIfIndex: ^uint32(0), TableID: next, Weight: 1}}}
		}
		route("route in missing table 71", 71, "10.30.0.0/16", deag(0))
		_, err := c.IPTableAddDel(d.Ctx, &ip.IPTableAddDel{IsAdd: true, Table: ip.IPTable{TableID: 71}})
		d.Retval("add table 71", err)
		route("route in table 71 into missing table 72", 71, "10.31.0.0/16", deag(72))
		route("route in table 71 into table 0", 71, "0.0.0.0/0", deag(0))
		_, err = c.IPRouteAddDel(d.Ctx, &ip.IPRouteAddDel{IsAdd: false, Route: ip.IPRoute{TableID: 71, Prefix: ipPrefix(pfx("10.99.0.0/16"))}})
		d.Retval("delete a missing route in table 71", err)
	})
	runDifferential(t, "vrf/nat44-inside-vrf", func(d *diffCase) {
		podVRF(d, false)
		nat := nat44_ed.NewServiceClient(d.Conn)
		_, err := nat.Nat44EdPluginEnableDisable(d.Ctx, &nat44_ed.Nat44EdPluginEnableDisable{Enable: true})
		d.Must(err)
		_, err = nat.Nat44InterfaceAddDelFeature(d.Ctx, &nat44_ed.Nat44InterfaceAddDelFeature{IsAdd: true, SwIfIndex: d.Sw("uplink0")})
		d.Must(err)
		_, err = nat.Nat44InterfaceAddDelFeature(d.Ctx, &nat44_ed.Nat44InterfaceAddDelFeature{IsAdd: true, Flags: nat_types.NAT_IS_INSIDE, SwIfIndex: d.Sw("tap5")})
		d.Must(err)
		_, err = nat.Nat44AddDelAddressRange(d.Ctx, &nat44_ed.Nat44AddDelAddressRange{IsAdd: true, FirstIPAddress: ip4a("192.168.16.100"), LastIPAddress: ip4a("192.168.16.100"), VrfID: ^uint32(0)})
		d.Retval("pool address", err)
		_, err = nat.Nat44AddDelStaticMappingV2(d.Ctx, &nat44_ed.Nat44AddDelStaticMappingV2{IsAdd: true, Flags: nat_types.NAT_IS_OUT2IN_ONLY,
			LocalIPAddress: ip4a("10.10.0.5"), ExternalIPAddress: ip4a("192.168.16.1"), Protocol: 6, LocalPort: 8080, ExternalPort: 30000,
			ExternalSwIfIndex: ^interface_types.InterfaceIndex(0), VrfID: 10})
		d.Retval("static mapping into VRF 10", err)
		// SNAT from the pod VRF: the session's outside side is table 0
		// (where 8.8.8.8 resolves through the outside interface); the
		// reply is forwarded in table 10 although table 0 has no route
		// to the pod.
		d.Trace("pod to the internet, SNAT", tcp("tap5", "10.10.0.5:40000", "8.8.8.8:443"))
		d.Trace("outside to the static mapping, DNAT into table 10", tcp("uplink0", "198.51.100.7:1234", "192.168.16.1:30000"))
		d.Trace("outside to the pod directly, no mapping", tcp("uplink0", "198.51.100.7:1235", "10.10.0.5:8080"))
		Dump[*nat44_ed.Nat44StaticMappingDetails](d, "static mappings", &nat44_ed.Nat44StaticMappingDump{})
		Dump[*nat44_ed.Nat44UserDetails](d, "users", &nat44_ed.Nat44UserDump{})
		Dump[*nat44_ed.Nat44UserSessionV3Details](d, "sessions of 10.10.0.5 in VRF 10", &nat44_ed.Nat44UserSessionV3Dump{IPAddress: ip4a("10.10.0.5"), VrfID: 10},
			"LastHeard", "TimeSinceLastHeard", "TotalBytes", "TotalPkts", "OutsidePort")
		Dump[*nat44_ed.Nat44UserSessionV3Details](d, "sessions of 10.10.0.5 in VRF 0", &nat44_ed.Nat44UserSessionV3Dump{IPAddress: ip4a("10.10.0.5")},
			"LastHeard", "TimeSinceLastHeard", "TotalBytes", "TotalPkts", "OutsidePort")
	})
}

type fibPath = fib_types.FibPath

func ipPrefix(p netip.Prefix) ip_types.Prefix {
	a := ip_types.Address{Af: ip_types.ADDRESS_IP6, Un: ip_types.AddressUnionIP6(p.Addr().As16())}
	if p.Addr().Is4() {
		a = ip_types.Address{Af: ip_types.ADDRESS_IP4, Un: ip_types.AddressUnionIP4(p.Addr().As4())}
	}
	return ip_types.Prefix{Address: a, Len: uint8(p.Bits())}
}

func ip4a(s string) ip_types.IP4Address { return ip_types.IP4Address(netip.MustParseAddr(s).As4()) }

func TestDiffVRFSessionLimit(t *testing.T) {
	runDifferential(t, "vrf/nat44-session-limit", func(d *diffCase) {
		podVRF(d, false)
		d.Must(d.Node.AddInterface("tap2", pfx("10.1.1.1/24")))
		nat := nat44_ed.NewServiceClient(d.Conn)
		_, err := nat.Nat44EdPluginEnableDisable(d.Ctx, &nat44_ed.Nat44EdPluginEnableDisable{Enable: true, Sessions: 100})
		d.Must(err)
		for _, f := range []struct {
			name  string
			flags nat_types.NatConfigFlags
		}{{"uplink0", 0}, {"tap5", nat_types.NAT_IS_INSIDE}, {"tap2", nat_types.NAT_IS_INSIDE}} {
			_, err := nat.Nat44InterfaceAddDelFeature(d.Ctx, &nat44_ed.Nat44InterfaceAddDelFeature{IsAdd: true, Flags: f.flags, SwIfIndex: d.Sw(f.name)})
			d.Must(err)
		}
		_, err = nat.Nat44AddDelAddressRange(d.Ctx, &nat44_ed.Nat44AddDelAddressRange{IsAdd: true, FirstIPAddress: ip4a("192.168.16.100"), LastIPAddress: ip4a("192.168.16.100"), VrfID: ^uint32(0)})
		d.Must(err)
		limit := func(label string, n, vrf uint32) {
			_, err := nat.Nat44SetSessionLimit(d.Ctx, &nat44_ed.Nat44SetSessionLimit{SessionLimit: n, VrfID: vrf})
			d.Retval(label, err)
		}
		limit("limit 2 in VRF 10", 2, 10)
		limit("limit in missing VRF 77", 5, 77)
		// The limit is held against all sessions, not the VRF's own.
		d.Trace("from tap2 (table 0): session 1", tcp("tap2", "10.1.1.2:40000", "8.8.8.8:443"))
		d.Trace("from the pod VRF: session 2", tcp("tap5", "10.10.0.5:41000", "8.8.8.8:443"))
		d.Trace("from the pod VRF: a third session is over VRF 10's limit", tcp("tap5", "10.10.0.5:41001", "8.8.8.8:443"))
		d.Trace("from tap2: table 0 keeps the enable-time limit", tcp("tap2", "10.1.1.2:40001", "8.8.8.8:443"))
		limit("limit 3 in VRF 0", 3, 0)
		d.Trace("from tap2: now over VRF 0's limit", tcp("tap2", "10.1.1.2:40002", "8.8.8.8:443"))
		rc, err := nat.Nat44ShowRunningConfig(d.Ctx, &nat44_ed.Nat44ShowRunningConfig{})
		d.Retval("running config", err)
		d.Record("running config sessions (the enable-time limit)", rc.Sessions)
	})
}

func TestDiffVRFCnat(t *testing.T) {
	runDifferential(t, "vrf/cnat-vip-from-a-vrf", func(d *diffCase) {
		podVRF(d, true)
		d.Must(d.Node.AddInterface("tap2"))
		d.Must(d.Node.SetUnnumbered("tap2", "uplink0"))
		d.Must(d.Node.AddRoute(pfx("10.1.1.2/32"), "tap2"))
		d.Must(d.Node.AddInterface("tap6"))
		d.Must(d.Node.AddTable(20, false))
		d.Must(d.Node.SetTable("tap6", 20, false))
		d.Must(d.Node.AddAddress("tap6", pfx("10.20.0.1/24")))
		d.Must(d.Node.AddNeighbour("tap6", netip.MustParseAddr("10.20.0.6")))
		c := cnat.NewServiceClient(d.Conn)
		_, err := c.CnatTranslationUpdate(d.Ctx, &cnat.CnatTranslationUpdate{Translation: cnat.CnatTranslation{
			Vip: cnatEndpoint("10.96.0.10:80"), IPProto: ip_types.IP_API_PROTO_TCP,
			Paths: []cnat.CnatEndpointTuple{{DstEp: cnatEndpoint("10.1.1.2:8080"), SrcEp: cnatEndpoint("0.0.0.0:0")}}}})
		d.Retval("VIP 10.96.0.10:80", err)
		// cnat's VIP entries are in table 0: a pod VRF meets them through
		// its default route into table 0, a VRF without one does not.
		d.Trace("from table 0", tcp("uplink0", "192.168.16.7:1234", "10.96.0.10:80"))
		d.Trace("from the pod VRF, default route into table 0", tcp("tap5", "10.10.0.5:40000", "10.96.0.10:80"))
		d.Trace("from table 20, no route", tcp("tap6", "10.20.0.6:40000", "10.96.0.10:80"))
		d.Must(d.Node.AddRouteIn(10, pfx("10.96.0.0/12"), "tap5"))
		d.Trace("from the pod VRF, a VRF route covers the VIP", tcp("tap5", "10.10.0.5:40001", "10.96.0.10:80"))
	})
}

func TestDiffVRFNATTables(t *testing.T) {
	runDifferential(t, "vrf/nat44-vrf-table", func(d *diffCase) {
		podVRF(d, true)
		// A second uplink in table 30 with its own default route.
		d.Must(d.Node.AddInterface("uplink2"))
		d.Must(d.Node.AddTable(30, false))
		d.Must(d.Node.SetTable("uplink2", 30, false))
		d.Must(d.Node.AddAddress("uplink2", pfx("203.0.113.1/24")))
		d.Must(d.Node.AddRouteIn(30, pfx("0.0.0.0/0"), "uplink2"))
		d.Must(d.Node.AddRouteToTable(30, pfx("10.10.0.0/24"), 10))
		nat := nat44_ed.NewServiceClient(d.Conn)
		_, err := nat.Nat44EdPluginEnableDisable(d.Ctx, &nat44_ed.Nat44EdPluginEnableDisable{Enable: true})
		d.Must(err)
		for _, f := range []struct {
			name  string
			flags nat_types.NatConfigFlags
		}{{"uplink0", 0}, {"uplink2", 0}, {"tap5", nat_types.NAT_IS_INSIDE}} {
			_, err := nat.Nat44InterfaceAddDelFeature(d.Ctx, &nat44_ed.Nat44InterfaceAddDelFeature{IsAdd: true, Flags: f.flags, SwIfIndex: d.Sw(f.name)})
			d.Must(err)
		}
		_, err = nat.Nat44AddDelAddressRange(d.Ctx, &nat44_ed.Nat44AddDelAddressRange{IsAdd: true, FirstIPAddress: ip4a("192.168.16.100"), LastIPAddress: ip4a("192.168.16.100"), VrfID: ^uint32(0)})
		d.Must(err)
		d.Trace("pod out without a NAT VRF table: the first outside FIB that resolves (table 0)", tcp("tap5", "10.10.0.5:40000", "8.8.8.8:443"))
		table := func(label string, vrf uint32, add bool) {
			_, err := nat.Nat44EdAddDelVrfTable(d.Ctx, &nat44_ed.Nat44EdAddDelVrfTable{TableVrfID: vrf, IsAdd: add})
			d.Retval(label, err)
		}
		route := func(label string, table, vrf uint32, add bool) {
			_, err := nat.Nat44EdAddDelVrfRoute(d.Ctx, &nat44_ed.Nat44EdAddDelVrfRoute{TableVrfID: table, VrfID: vrf, IsAdd: add})
			d.Retval(label, err)
		}
		route("route in a missing NAT VRF table", 10, 30, true)
		table("NAT VRF table 10", 10, true)
		table("NAT VRF table 10 again", 10, true)
		d.Trace("pod out, NAT VRF table without routes: stays in table 10", tcp("tap5", "10.10.0.5:40001", "8.8.8.8:443"))
		route("route 10 → 30", 10, 30, true)
		route("route 10 → 0", 10, 0, true)
		route("route 10 → 30 again", 10, 30, true)
		// VPP 25.10 answers the v2 dump with v1 details; the v1 dump
		// leaves the table ID 0 and sends the route IDs unswapped.
		Dump[*nat44_ed.Nat44EdVrfTablesDetails](d, "NAT VRF tables (v2 dump)", &nat44_ed.Nat44EdVrfTablesV2Dump{})
		Dump[*nat44_ed.Nat44EdVrfTablesDetails](d, "NAT VRF tables (v1 dump)", &nat44_ed.Nat44EdVrfTablesDump{})
		d.Trace("pod out: the first route FIB that resolves (table 30)", tcp("tap5", "10.10.0.5:40002", "8.8.8.8:443"))
		route("route 10 → 30 removed", 10, 30, false)
		route("route 10 → 30 removed again", 10, 30, false)
		d.Trace("pod out: table 0 now", tcp("tap5", "10.10.0.5:40003", "8.8.8.8:443"))
		table("NAT VRF table 10 removed", 10, false)
		table("NAT VRF table 10 removed again", 10, false)
		Dump[*nat44_ed.Nat44EdVrfTablesDetails](d, "NAT VRF tables at the end", &nat44_ed.Nat44EdVrfTablesV2Dump{})
	})
}

func TestDiffVRFNATEnableVRFs(t *testing.T) {
	runDifferential(t, "vrf/nat44-enable-vrfs", func(d *diffCase) {
		podVRF(d, false)
		// The only outside interface is uplink2 in table 30.
		d.Must(d.Node.AddInterface("uplink2"))
		d.Must(d.Node.AddTable(30, false))
		d.Must(d.Node.SetTable("uplink2", 30, false))
		d.Must(d.Node.AddAddress("uplink2", pfx("203.0.113.1/24")))
		d.Must(d.Node.AddRouteIn(30, pfx("0.0.0.0/0"), "uplink2"))
		nat := nat44_ed.NewServiceClient(d.Conn)
		_, err := nat.Nat44EdPluginEnableDisable(d.Ctx, &nat44_ed.Nat44EdPluginEnableDisable{Enable: true, InsideVrf: 10, OutsideVrf: 30})
		d.Retval("enable with inside VRF 10, outside VRF 30", err)
		rc, err := nat.Nat44ShowRunningConfig(d.Ctx, &nat44_ed.Nat44ShowRunningConfig{})
		d.Must(err)
		d.Record("running config VRFs", []uint32{rc.InsideVrf, rc.OutsideVrf})
		for _, f := range []struct {
			name  string
			flags nat_types.NatConfigFlags
		}{{"uplink2", 0}, {"tap5", nat_types.NAT_IS_INSIDE}} {
			_, err := nat.Nat44InterfaceAddDelFeature(d.Ctx, &nat44_ed.Nat44InterfaceAddDelFeature{IsAdd: true, Flags: f.flags, SwIfIndex: d.Sw(f.name)})
			d.Must(err)
		}
		_, err = nat.Nat44AddDelAddressRange(d.Ctx, &nat44_ed.Nat44AddDelAddressRange{IsAdd: true, FirstIPAddress: ip4a("203.0.113.100"), LastIPAddress: ip4a("203.0.113.100"), VrfID: ^uint32(0)})
		d.Must(err)
		// VrfID ~0: the mapping's local is in the enable-time inside VRF.
		_, err = nat.Nat44AddDelStaticMappingV2(d.Ctx, &nat44_ed.Nat44AddDelStaticMappingV2{IsAdd: true, Flags: nat_types.NAT_IS_OUT2IN_ONLY,
			LocalIPAddress: ip4a("10.10.0.5"), ExternalIPAddress: ip4a("203.0.113.1"), Protocol: 6, LocalPort: 8080, ExternalPort: 30000,
			ExternalSwIfIndex: ^interface_types.InterfaceIndex(0), VrfID: ^uint32(0)})
		d.Retval("static mapping with VRF ~0", err)
		Dump[*nat44_ed.Nat44StaticMappingDetails](d, "static mappings", &nat44_ed.Nat44StaticMappingDump{})
		d.Trace("pod out: the outside FIB is table 30", tcp("tap5", "10.10.0.5:40000", "8.8.8.8:443"))
		d.Trace("outside in on uplink2 to the mapping: into table 10", tcp("uplink2", "198.51.100.7:1234", "203.0.113.1:30000"))
		Dump[*nat44_ed.Nat44UserDetails](d, "users", &nat44_ed.Nat44UserDump{})
		// VPP never unlocks the enable-time VRFs: after the API's lock
		// and NAT44-ED are gone, table 30 still exists.
		ipc := ip.NewServiceClient(d.Conn)
		_, err = ipc.IPTableAddDel(d.Ctx, &ip.IPTableAddDel{IsAdd: false, Table: ip.IPTable{TableID: 30}})
		d.Retval("API's table 30 deleted", err)
		_, err = nat.Nat44EdPluginEnableDisable(d.Ctx, &nat44_ed.Nat44EdPluginEnableDisable{Enable: false})
		d.Retval("NAT44-ED disabled", err)
		d.Must(d.Node.AddInterface("tap7"))
		_, err = interfaces.NewServiceClient(d.Conn).SwInterfaceSetTable(d.Ctx, &interfaces.SwInterfaceSetTable{SwIfIndex: d.Sw("tap7"), VrfID: 30})
		d.Retval("tap7 into table 30 after all that", err)
	})
}
