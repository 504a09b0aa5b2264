package dataplane_test

// Differential cases of the dumps and replies vppsvc's driver reads: the
// fields VPP fills in, one by one.

import (
	"errors"
	"io"
	"net/netip"
	"testing"

	"go.fd.io/govpp/binapi/acl"
	"go.fd.io/govpp/binapi/acl_types"
	"go.fd.io/govpp/binapi/cnat"
	interfaces "go.fd.io/govpp/binapi/interface"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip_types"
	"go.fd.io/govpp/binapi/memclnt"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/binapi/nat_types"
	"go.fd.io/govpp/binapi/vpe"

	"github.com/vppsvc/vppsvc/fakevpp"
)

const noIf = ^interface_types.InterfaceIndex(0)

func TestDiffDump(t *testing.T) {
	runDifferential(t, "dump/version", func(d *diffCase) {
		// The driver checks the version; build date and directory differ
		// by nature, and the version is recorded as the release it names
		// (a build of the tag says "25.10-release", fakevpp.Release).
		v, err := vpe.NewServiceClient(d.Conn).ShowVersion(d.Ctx, &vpe.ShowVersion{})
		d.Retval("show_version", err)
		if v != nil {
			v.Version = fakevpp.Release(v.Version)
		}
		d.RecordExcept("show_version reply", v, "BuildDate", "BuildDirectory")
		p, err := memclnt.NewServiceClient(d.Conn).ControlPing(d.Ctx, &memclnt.ControlPing{})
		d.Retval("control_ping", err)
		d.Record("control_ping vpe_pid set", p.VpePID != 0)
	})
	runDifferential(t, "dump/sw-interfaces", func(d *diffCase) {
		// What the driver reads (index and name), the flags and the MTUs;
		// the MAC, device type, duplex and the test node's tag are the
		// packet generator's on a real VPP and differ by nature.
		d.Must(d.Node.AddInterface("uplink0", pfx("192.168.16.1/24")))
		d.Must(d.Node.AddInterface("tap2"))
		omit := []string{"L2Address", "InterfaceDevType", "Tag", "LinkDuplex"}
		Dump[*interfaces.SwInterfaceDetails](d, "all (~0)", &interfaces.SwInterfaceDump{SwIfIndex: noIf}, omit...)
		Dump[*interfaces.SwInterfaceDetails](d, "index 0 (all, the zero value)", &interfaces.SwInterfaceDump{}, omit...)
		Dump[*interfaces.SwInterfaceDetails](d, "tap2 only", &interfaces.SwInterfaceDump{SwIfIndex: d.Sw("tap2")}, omit...)
		Dump[*interfaces.SwInterfaceDetails](d, "an unknown index", &interfaces.SwInterfaceDump{SwIfIndex: noIf - 1}, omit...)
		Dump[*interfaces.SwInterfaceDetails](d, "name filter UPLINK", &interfaces.SwInterfaceDump{NameFilterValid: true, NameFilter: "UPLINK"}, omit...)
	})
	runDifferential(t, "dump/nat44", func(d *diffCase) {
		d.Must(d.Node.AddInterface("uplink0", pfx("192.168.16.1/24")))
		d.Must(d.Node.AddInterface("uplink1", pfx("192.168.17.1/24")))
		d.Must(d.Node.AddInterface("tap2"))
		d.Must(d.Node.AddInterface("tap3"))
		nat := nat44_ed.NewServiceClient(d.Conn)
		_, err := nat.Nat44EdPluginEnableDisable(d.Ctx, &nat44_ed.Nat44EdPluginEnableDisable{Enable: true, Sessions: 20000, InsideVrf: 0, OutsideVrf: 0})
		d.Retval("enable", err)
		rc, err := nat.Nat44ShowRunningConfig(d.Ctx, &nat44_ed.Nat44ShowRunningConfig{})
		d.Retval("running config", err)
		d.Record("running config", rc)
		feature := func(name string, flags nat_types.NatConfigFlags) {
			_, err := nat.Nat44InterfaceAddDelFeature(d.Ctx, &nat44_ed.Nat44InterfaceAddDelFeature{IsAdd: true, Flags: flags, SwIfIndex: d.Sw(name)})
			d.Retval("feature "+name+" "+flags.String(), err)
		}
		feature("uplink0", 0)
		feature("tap2", nat_types.NAT_IS_INSIDE)
		feature("tap3", nat_types.NAT_IS_INSIDE)
		feature("tap3", 0)
		_, err = nat.Nat44EdAddDelOutputInterface(d.Ctx, &nat44_ed.Nat44EdAddDelOutputInterface{IsAdd: true, SwIfIndex: d.Sw("uplink1")})
		d.Retval("output feature uplink1", err)
		Dump[*nat44_ed.Nat44InterfaceDetails](d, "interfaces", &nat44_ed.Nat44InterfaceDump{})
		s, err := nat.Nat44EdOutputInterfaceGet(d.Ctx, &nat44_ed.Nat44EdOutputInterfaceGet{})
		d.Must(err)
		var outs []*nat44_ed.Nat44EdOutputInterfaceDetails
		for {
			det, r, err := s.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			d.Must(err)
			if r != nil {
				d.RecordExcept("output interfaces reply", r, "Cursor")
				break
			}
			outs = append(outs, det)
		}
		d.Record("output interfaces", outs)
		for _, a := range []struct {
			first string
			vrf   uint32
			flags nat_types.NatConfigFlags
		}{{"192.168.16.100", ^uint32(0), 0}, {"192.168.16.101", 0, 0}, {"192.168.16.200", ^uint32(0), nat_types.NAT_IS_TWICE_NAT}} {
			_, err := nat.Nat44AddDelAddressRange(d.Ctx, &nat44_ed.Nat44AddDelAddressRange{IsAdd: true, FirstIPAddress: ip4a(a.first), LastIPAddress: ip4a(a.first), VrfID: a.vrf, Flags: a.flags})
			d.Retval("pool "+a.first, err)
		}
		Dump[*nat44_ed.Nat44AddressDetails](d, "addresses", &nat44_ed.Nat44AddressDump{})
		for _, m := range []nat44_ed.Nat44AddDelStaticMappingV2{
			{Flags: nat_types.NAT_IS_OUT2IN_ONLY, LocalIPAddress: ip4a("10.1.1.2"), ExternalIPAddress: ip4a("192.168.16.1"), Protocol: 6, LocalPort: 8080, ExternalPort: 30000, Tag: "np"},
			{Flags: nat_types.NAT_IS_ADDR_ONLY, LocalIPAddress: ip4a("10.1.1.3"), ExternalIPAddress: ip4a("192.168.16.50"), Tag: "eip"},
			{Flags: nat_types.NAT_IS_TWICE_NAT | nat_types.NAT_IS_OUT2IN_ONLY, LocalIPAddress: ip4a("10.1.1.4"), ExternalIPAddress: ip4a("192.168.16.51"), Protocol: 17, LocalPort: 53, ExternalPort: 53},
			{Flags: nat_types.NAT_IS_SELF_TWICE_NAT | nat_types.NAT_IS_OUT2IN_ONLY, LocalIPAddress: ip4a("10.1.1.5"), ExternalIPAddress: ip4a("192.168.16.52"), Protocol: 6, LocalPort: 80, ExternalPort: 80, VrfID: 0, Tag: "self"},
		} {
			m.IsAdd, m.ExternalSwIfIndex = true, noIf
			_, err := nat.Nat44AddDelStaticMappingV2(d.Ctx, &m)
			d.Retval("static mapping "+m.Flags.String(), err)
		}
		Dump[*nat44_ed.Nat44StaticMappingDetails](d, "static mappings", &nat44_ed.Nat44StaticMappingDump{})
		for _, m := range []nat44_ed.Nat44AddDelIdentityMapping{
			{Flags: nat_types.NAT_IS_ADDR_ONLY, IPAddress: ip4a("192.168.16.1"), Tag: "host"},
			{IPAddress: ip4a("192.168.16.1"), Protocol: 6, Port: 22, SwIfIndex: noIf},
			{Protocol: 17, Port: 4789, SwIfIndex: d.Sw("uplink1"), Tag: "vxlan"},
		} {
			m.IsAdd = true
			if m.SwIfIndex == 0 {
				m.SwIfIndex = noIf
			}
			_, err := nat.Nat44AddDelIdentityMapping(d.Ctx, &m)
			d.Retval("identity mapping "+m.Tag, err)
		}
		Dump[*nat44_ed.Nat44IdentityMappingDetails](d, "identity mappings", &nat44_ed.Nat44IdentityMappingDump{})
		_, err = nat.Nat44AddDelLbStaticMapping(d.Ctx, &nat44_ed.Nat44AddDelLbStaticMapping{IsAdd: true, Flags: nat_types.NAT_IS_OUT2IN_ONLY | nat_types.NAT_IS_SELF_TWICE_NAT,
			ExternalAddr: ip4a("192.168.16.60"), ExternalPort: 80, Protocol: 6, Affinity: 10800, Tag: "lb",
			Locals: []nat44_ed.Nat44LbAddrPort{{Addr: ip4a("10.1.1.2"), Port: 8080, Probability: 30}, {Addr: ip4a("10.1.1.3"), Port: 8080, Probability: 70}}})
		d.Retval("LB mapping", err)
		_, err = nat.Nat44AddDelLbStaticMapping(d.Ctx, &nat44_ed.Nat44AddDelLbStaticMapping{IsAdd: true, ExternalAddr: ip4a("192.168.16.61"), ExternalPort: 53, Protocol: 17,
			Locals: []nat44_ed.Nat44LbAddrPort{{Addr: ip4a("10.1.1.2"), Port: 53, Probability: 1}, {Addr: ip4a("10.1.1.3"), Port: 53, Probability: 1}}})
		d.Retval("LB mapping without flags", err)
		Dump[*nat44_ed.Nat44LbStaticMappingDetails](d, "LB mappings", &nat44_ed.Nat44LbStaticMappingDump{})
	})
	runDifferential(t, "dump/acl", func(d *diffCase) {
		d.Must(d.Node.AddInterface("uplink0", pfx("192.168.16.1/24")))
		d.Must(d.Node.AddInterface("tap2"))
		a := acl.NewServiceClient(d.Conn)
		p4 := func(s string) ip_types.Prefix { return ipPrefix(pfx(s)) }
		r1, err := a.ACLAddReplace(d.Ctx, &acl.ACLAddReplace{ACLIndex: ^uint32(0), Tag: "pod-in", R: []acl_types.ACLRule{
			{IsPermit: acl_types.ACL_ACTION_API_PERMIT_REFLECT, SrcPrefix: p4("10.1.1.0/24"), DstPrefix: p4("0.0.0.0/0"), Proto: 6,
				SrcportOrIcmptypeFirst: 1024, SrcportOrIcmptypeLast: 65535, DstportOrIcmpcodeFirst: 443, DstportOrIcmpcodeLast: 443, TCPFlagsMask: 0x12, TCPFlagsValue: 0x02},
			{IsPermit: acl_types.ACL_ACTION_API_PERMIT, SrcPrefix: p4("fd00:1::/64"), DstPrefix: p4("::/0"), Proto: 58, SrcportOrIcmptypeFirst: 128, SrcportOrIcmptypeLast: 128, DstportOrIcmpcodeLast: 255},
			{IsPermit: acl_types.ACL_ACTION_API_DENY, SrcPrefix: p4("0.0.0.0/0"), DstPrefix: p4("0.0.0.0/0")},
		}})
		d.Retval("acl pod-in", err)
		r2, err := a.ACLAddReplace(d.Ctx, &acl.ACLAddReplace{ACLIndex: ^uint32(0), Tag: "deny", R: []acl_types.ACLRule{
			{IsPermit: acl_types.ACL_ACTION_API_DENY, SrcPrefix: p4("::/0"), DstPrefix: p4("::/0"), Proto: 17, DstportOrIcmpcodeFirst: 53, DstportOrIcmpcodeLast: 53}}})
		d.Retval("acl deny", err)
		Dump[*acl.ACLDetails](d, "all ACLs", &acl.ACLDump{ACLIndex: ^uint32(0)}, "ACLIndex")
		Dump[*acl.ACLDetails](d, "the deny ACL", &acl.ACLDump{ACLIndex: r2.ACLIndex}, "ACLIndex")
		_, err = a.ACLInterfaceSetACLList(d.Ctx, &acl.ACLInterfaceSetACLList{SwIfIndex: d.Sw("tap2"), Count: 3, NInput: 1, Acls: []uint32{r1.ACLIndex, r2.ACLIndex, r1.ACLIndex}})
		d.Retval("tap2's list", err)
		// ACL indexes are pool slots; recorded as the tags' order instead.
		lists, err := dumpAll[*acl.ACLInterfaceListDetails](d, &acl.ACLInterfaceListDump{SwIfIndex: noIf})
		d.Must(err)
		type list struct {
			Interface     string
			Count, NInput uint8
			Acls          []string
		}
		var out []list
		for _, l := range lists {
			var names []string
			for _, i := range l.Acls {
				names = append(names, map[uint32]string{r1.ACLIndex: "pod-in", r2.ACLIndex: "deny"}[i])
			}
			out = append(out, list{d.ifName(uint32(l.SwIfIndex)), l.Count, l.NInput, names})
		}
		d.Record("interface lists", out)
		one, err := dumpAll[*acl.ACLInterfaceListDetails](d, &acl.ACLInterfaceListDump{SwIfIndex: d.Sw("uplink0")})
		d.Must(err)
		d.RecordExcept("list of uplink0 alone", one, "Acls")
	})
	runDifferential(t, "dump/cnat", func(d *diffCase) {
		d.Must(d.Node.AddInterface("uplink0", pfx("192.168.16.1/24")))
		c := cnat.NewServiceClient(d.Conn)
		for _, tr := range []cnat.CnatTranslation{
			{Vip: cnatEndpoint("10.96.0.10:53"), IPProto: ip_types.IP_API_PROTO_UDP, IsRealIP: 0, Flags: uint8(cnat.CNAT_TRANSLATION_ALLOC_PORT),
				Paths: []cnat.CnatEndpointTuple{{DstEp: cnatEndpoint("10.1.1.2:53"), SrcEp: cnatEndpoint("0.0.0.0:0")}, {DstEp: cnatEndpoint("10.1.1.3:53"), SrcEp: cnatEndpoint("0.0.0.0:0"), Flags: uint8(cnat.CNAT_EPT_NO_NAT)}}},
			{Vip: cnatEndpoint("192.168.16.1:30080"), IPProto: ip_types.IP_API_PROTO_TCP, IsRealIP: 1, LbType: cnat.CNAT_LB_TYPE_MAGLEV,
				Paths: []cnat.CnatEndpointTuple{{DstEp: cnatEndpoint("10.1.1.2:8080"), SrcEp: cnatEndpoint("0.0.0.0:0")}}},
			{Vip: cnatEndpoint("[fd00:96::1]:443"), IPProto: ip_types.IP_API_PROTO_TCP, Flags: uint8(cnat.CNAT_TRANSLATION_NO_RETURN_SESSION),
				Paths: []cnat.CnatEndpointTuple{{DstEp: cnatEndpoint("[fd00:1:1::2]:8443"), SrcEp: cnatEndpoint("[::]:0")}}},
		} {
			_, err := c.CnatTranslationUpdate(d.Ctx, &cnat.CnatTranslationUpdate{Translation: tr})
			d.Retval("translation "+tr.Vip.Addr.String(), err)
		}
		Dump[*cnat.CnatTranslationDetails](d, "translations", &cnat.CnatTranslationDump{}, "ID")
		_, err := c.CnatSetSnatAddresses(d.Ctx, &cnat.CnatSetSnatAddresses{SnatIP4: ip4a("192.168.16.1"), SnatIP6: ip_types.IP6Address(netip.MustParseAddr("fd00:16::1").As16()), SwIfIndex: noIf})
		d.Retval("snat addresses", err)
		g, err := c.CnatGetSnatAddresses(d.Ctx, &cnat.CnatGetSnatAddresses{})
		d.Retval("get snat addresses", err)
		d.RecordExcept("snat addresses", g, "ID")
		_, err = c.CnatSetSnatPolicy(d.Ctx, &cnat.CnatSetSnatPolicy{Policy: cnat.CNAT_POLICY_IF_PFX})
		d.Retval("snat policy if-pfx", err)
		_, err = c.CnatSnatPolicyAddDelIf(d.Ctx, &cnat.CnatSnatPolicyAddDelIf{SwIfIndex: d.Sw("uplink0"), IsAdd: 1, Table: cnat.CNAT_POLICY_INCLUDE_V4})
		d.Retval("snat policy interface", err)
		_, err = c.CnatSnatPolicyAddDelIf(d.Ctx, &cnat.CnatSnatPolicyAddDelIf{SwIfIndex: d.Sw("uplink0"), IsAdd: 1, Table: 9})
		d.Retval("snat policy interface, table 9", err)
		_, err = c.CnatSnatPolicyAddDelExcludePfx(d.Ctx, &cnat.CnatSnatPolicyAddDelExcludePfx{IsAdd: 1, Prefix: ipPrefix(pfx("10.0.0.0/8"))})
		d.Retval("exclude 10/8", err)
		_, err = c.CnatSnatPolicyAddDelExcludePfx(d.Ctx, &cnat.CnatSnatPolicyAddDelExcludePfx{IsAdd: 0, Prefix: ipPrefix(pfx("172.16.0.0/12"))})
		d.Retval("remove an exclusion that is not there", err)
	})
}
