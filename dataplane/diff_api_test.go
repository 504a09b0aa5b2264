package dataplane_test

// Differential cases of messages the other cases do not send: LB locals
// added and removed, the legacy static-mapping message, static
// neighbours, the table dump, and cnat's translation delete and session
// purge. TestEveryServedMessageHasACase keeps this list complete.

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"

	"go.fd.io/govpp/binapi/cnat"
	"go.fd.io/govpp/binapi/ethernet_types"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip"
	"go.fd.io/govpp/binapi/ip_neighbor"
	"go.fd.io/govpp/binapi/ip_types"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/binapi/nat_types"
)

func TestDiffAPI(t *testing.T) {
	// nat44_lb_static_mapping_add_del_local: a local is added to and
	// removed from an LB mapping; the last two stay.
	runDifferential(t, "nat44/lb-locals", func(d *diffCase) {
		nat := natTopology(d)
		local := func(addr string, port uint16, prob uint8) nat44_ed.Nat44LbAddrPort {
			return nat44_ed.Nat44LbAddrPort{Addr: ip4a(addr), Port: port, Probability: prob}
		}
		_, err := nat.Nat44AddDelLbStaticMapping(d.Ctx, &nat44_ed.Nat44AddDelLbStaticMapping{IsAdd: true, Flags: nat_types.NAT_IS_OUT2IN_ONLY,
			ExternalAddr: ip4a("10.96.0.10"), ExternalPort: 80, Protocol: 6, LocalNum: 2,
			Locals: []nat44_ed.Nat44LbAddrPort{local("10.1.1.2", 8080, 1), local("10.1.1.3", 8080, 1)}})
		d.Retval("LB mapping 10.96.0.10:80 with two locals", err)
		_, err = nat.Nat44AddDelStaticMappingV2(d.Ctx, &nat44_ed.Nat44AddDelStaticMappingV2{IsAdd: true, Flags: nat_types.NAT_IS_OUT2IN_ONLY,
			LocalIPAddress: ip4a("10.1.1.5"), ExternalIPAddress: ip4a("10.96.0.11"), Protocol: 6, LocalPort: 8080, ExternalPort: 80, ExternalSwIfIndex: noIf})
		d.Retval("static mapping 10.96.0.11:80", err)
		op := func(label string, add bool, ext string, l nat44_ed.Nat44LbAddrPort) {
			d.t.Helper()
			_, err := nat.Nat44LbStaticMappingAddDelLocal(d.Ctx, &nat44_ed.Nat44LbStaticMappingAddDelLocal{IsAdd: add, ExternalAddr: ip4a(ext), ExternalPort: 80, Protocol: 6, Local: l})
			d.Retval(label, err)
		}
		op("add 10.1.1.4:8080", true, "10.96.0.10", local("10.1.1.4", 8080, 2))
		op("add 10.1.1.4:8080 again", true, "10.96.0.10", local("10.1.1.4", 8080, 2))
		op("add to a mapping that does not exist", true, "10.96.0.99", local("10.1.1.4", 8080, 1))
		op("add to a static mapping", true, "10.96.0.11", local("10.1.1.4", 8080, 1))
		Dump[*nat44_ed.Nat44LbStaticMappingDetails](d, "with three locals", &nat44_ed.Nat44LbStaticMappingDump{})
		// The draw is VPP's random number: recorded is that the packet
		// reached one of the locals.
		tr := d.Node.Trace(tcp("uplink0", "198.51.100.7:1234", "10.96.0.10:80"))
		d.Record("a client reaches one of the three", fmt.Sprintf("%s via %s, a local %t, reply ok %t", tr.Verdict, tr.Egress,
			slices.Contains([]string{"10.1.1.2:8080", "10.1.1.3:8080", "10.1.1.4:8080"}, tr.Out.Dst.String()), tr.ReplyOK))
		op("remove 10.1.1.9:8080 (not a local)", false, "10.96.0.10", local("10.1.1.9", 8080, 0))
		op("remove 10.1.1.2:8080", false, "10.96.0.10", local("10.1.1.2", 8080, 0))
		op("remove 10.1.1.3:8080 (one of the last two)", false, "10.96.0.10", local("10.1.1.3", 8080, 0))
		Dump[*nat44_ed.Nat44LbStaticMappingDetails](d, "at the end", &nat44_ed.Nat44LbStaticMappingDump{})
	})

	// nat44_add_del_static_mapping, the message before _v2: the same
	// mapping table.
	runDifferential(t, "nat44/static-mapping-legacy", func(d *diffCase) {
		nat := natTopology(d)
		m := nat44_ed.Nat44AddDelStaticMapping{IsAdd: true, Flags: nat_types.NAT_IS_OUT2IN_ONLY, LocalIPAddress: ip4a("10.1.1.2"),
			ExternalIPAddress: ip4a("192.168.16.1"), Protocol: 6, LocalPort: 8080, ExternalPort: 30080, ExternalSwIfIndex: noIf, Tag: "legacy"}
		_, err := nat.Nat44AddDelStaticMapping(d.Ctx, &m)
		d.Retval("add", err)
		_, err = nat.Nat44AddDelStaticMapping(d.Ctx, &m)
		d.Retval("add again", err)
		Dump[*nat44_ed.Nat44StaticMappingDetails](d, "mappings", &nat44_ed.Nat44StaticMappingDump{})
		d.Trace("a client to it", tcp("uplink0", "198.51.100.7:1234", "192.168.16.1:30080"))
		m.IsAdd = false
		_, err = nat.Nat44AddDelStaticMapping(d.Ctx, &m)
		d.Retval("delete", err)
		_, err = nat.Nat44AddDelStaticMapping(d.Ctx, &m)
		d.Retval("delete again", err)
		Dump[*nat44_ed.Nat44StaticMappingDetails](d, "mappings after", &nat44_ed.Nat44StaticMappingDump{})
	})

	// ip_neighbor_add_del: static neighbours in and out, the retvals.
	runDifferential(t, "routes/neighbours", func(d *diffCase) {
		d.Must(d.Node.AddInterface("uplink0", pfx("192.168.16.1/24"), pfx("fd00:16::1/64")))
		c := ip_neighbor.NewServiceClient(d.Conn)
		nbr := func(label string, add bool, sw interface_types.InterfaceIndex, addr string) {
			d.t.Helper()
			a, err := ip_types.ParseAddress(addr)
			d.Must(err)
			_, err = c.IPNeighborAddDel(d.Ctx, &ip_neighbor.IPNeighborAddDel{IsAdd: add, Neighbor: ip_neighbor.IPNeighbor{
				SwIfIndex: sw, Flags: ip_neighbor.IP_API_NEIGHBOR_FLAG_STATIC, MacAddress: ethernet_types.MacAddress{2, 0, 0, 0, 0, 7}, IPAddress: a}})
			d.Retval(label, err)
		}
		up := d.Sw("uplink0")
		nbr("add 192.168.16.7", true, up, "192.168.16.7")
		nbr("add 192.168.16.7 again", true, up, "192.168.16.7")
		nbr("add fd00:16::7", true, up, "fd00:16::7")
		nbr("add on an unknown index", true, noIf-1, "192.168.16.8")
		d.Trace("to the neighbour", udp("uplink0", "192.168.16.9:5000", "192.168.16.7:53"))
		nbr("delete 192.168.16.7", false, up, "192.168.16.7")
		nbr("delete fd00:16::7", false, up, "fd00:16::7")
	})

	// ip_table_dump: the tables of both families, with VPP's names.
	runDifferential(t, "vrf/table-dump", func(d *diffCase) {
		ipc := ip.NewServiceClient(d.Conn)
		for _, tb := range []ip.IPTable{{TableID: 61}, {TableID: 61, IsIP6: true}, {TableID: 62, Name: "pods"}} {
			_, err := ipc.IPTableAddDel(d.Ctx, &ip.IPTableAddDel{IsAdd: true, Table: tb})
			d.Retval(fmt.Sprintf("add table %d ip6 %t %q", tb.TableID, tb.IsIP6, tb.Name), err)
		}
		// Only tables 0, 61 and 62 are the case's: a real VPP may hold
		// others that earlier cases left locked.
		tables := func(label string) {
			d.t.Helper()
			all, err := dumpAll[*ip.IPTableDetails](d, &ip.IPTableDump{})
			d.Must(err)
			ours := slices.DeleteFunc(all, func(t *ip.IPTableDetails) bool { return !slices.Contains([]uint32{0, 61, 62}, t.Table.TableID) })
			d.Record(label, ours)
		}
		tables("tables")
		_, err := ipc.IPTableAddDel(d.Ctx, &ip.IPTableAddDel{Table: ip.IPTable{TableID: 61}})
		d.Retval("delete table 61", err)
		tables("tables after")
		_, err = ipc.IPTableAddDel(d.Ctx, &ip.IPTableAddDel{IsAdd: true, Table: ip.IPTable{TableID: 61, Name: "again"}})
		d.Retval("add table 61 again, named", err)
		_, err = ipc.IPTableAddDel(d.Ctx, &ip.IPTableAddDel{IsAdd: true, Table: ip.IPTable{TableID: 61, IsIP6: true, Name: "renamed?"}})
		d.Retval("add IPv6 table 61 (still there) with a name", err)
		tables("tables at the end")
	})

	// cnat_translation_del and cnat_session_purge: a translation deleted
	// by ID (an unknown ID answers its retval), and the sessions left
	// behind purged.
	runDifferential(t, "cnat/translation-del", func(d *diffCase) {
		cnatTopology(d)
		c := cnat.NewServiceClient(d.Conn)
		r, err := c.CnatTranslationUpdate(d.Ctx, &cnat.CnatTranslationUpdate{Translation: cnat.CnatTranslation{
			Vip: cnatEndpoint("10.96.0.10:80"), IPProto: ip_types.IP_API_PROTO_TCP,
			Paths: []cnat.CnatEndpointTuple{{DstEp: cnatEndpoint("10.1.1.2:8080"), SrcEp: cnatEndpoint("0.0.0.0:0")}}}})
		d.Retval("translation 10.96.0.10:80 → 10.1.1.2:8080", err)
		d.Trace("a client to the VIP", tcp("uplink0", "198.51.100.7:1234", "10.96.0.10:80"))
		sessions := func(label string) {
			d.t.Helper()
			ss, err := dumpAll[*cnat.CnatSessionDetails](d, &cnat.CnatSessionDump{})
			d.Must(err)
			n := 0
			for _, s := range ss {
				if netip.AddrFrom4(s.Session.Src.Addr.Un.GetIP4()) == netip.MustParseAddr("198.51.100.7") {
					n++
				}
			}
			d.Record(label+": cnat sessions of the client", n)
		}
		sessions("before the delete")
		_, err = c.CnatTranslationDel(d.Ctx, &cnat.CnatTranslationDel{ID: r.ID})
		d.Retval("delete it", err)
		_, err = c.CnatTranslationDel(d.Ctx, &cnat.CnatTranslationDel{ID: r.ID})
		d.Retval("delete it again", err)
		Dump[*cnat.CnatTranslationDetails](d, "translations", &cnat.CnatTranslationDump{}, "ID")
		sessions("after the delete")
		_, err = c.CnatSessionPurge(d.Ctx, &cnat.CnatSessionPurge{})
		d.Retval("cnat_session_purge", err)
		sessions("after the purge")
	})
}
