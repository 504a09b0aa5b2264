package dataplane_test

// Differential cases of ICMP messages other than an echo with code 0 and
// an error (fakevpp.Packet.ICMP): the ACL plugin's type and code ranges
// and reflect sessions, NAT44-ED's and cnat's handling of those types
// (docs/fakevpp.md#icmp-messages).

import (
	"testing"

	"go.fd.io/govpp/binapi/cnat"
	"go.fd.io/govpp/binapi/feature"
	"go.fd.io/govpp/binapi/ip_types"

	"github.com/vppsvc/vppsvc/fakevpp"
)

// icmpMsg is an ICMP (ICMPv6 for IPv6 addresses) message of typ and code
// that is not an error, from src to dst (address:identifier).
func icmpMsg(ingress, src, dst string, typ, code uint8) fakevpp.Packet {
	p := fakevpp.Packet{Ingress: ingress, Protocol: 1, Src: ap(src), Dst: ap(dst)}
	if p.Src.Addr().Is6() {
		p.Protocol = 58
	}
	p.SetICMP(typ, code)
	return p
}

func TestDiffICMPTypes(t *testing.T) {
	// Type and code ranges on messages that are neither an echo with code
	// 0 nor an error: echoes with a code, timestamp and address mask
	// requests, an unassigned type; ICMPv6 echoes with a code and
	// neighbour discovery types (forwarded: not addressed to VPP).
	runDifferential(t, "acl/icmp-any-type", func(d *diffCase) {
		cnatTopology(d)
		icmp, icmp6 := ip_types.IP_API_PROTO_ICMP, ip_types.IP_API_PROTO_ICMP6
		in := addACL(d, "icmp any type in",
			aclRule(permit, icmp, "0.0.0.0/0", "0.0.0.0/0", 8, 8, 1, 5),
			aclRule(permit, icmp, "0.0.0.0/0", "0.0.0.0/0", 0, 0, 7, 7),
			aclRule(permit, icmp, "0.0.0.0/0", "0.0.0.0/0", 13, 18, 0, 0),
			aclRule(permit, icmp6, "::/0", "::/0", 128, 129, 1, 255),
			aclRule(permit, icmp6, "::/0", "::/0", 133, 137, 0, 0))
		setACLs(d, "uplink0", []uint32{in}, nil)
		d.Must(d.Node.AddNeighbour("tap2", addr("10.1.1.2")))
		d.Must(d.Node.AddNeighbour("tap2", addr("fd00:1:1::2")))
		for _, c := range []struct {
			label     string
			typ, code uint8
		}{
			{"echo request code 3", 8, 3},
			{"echo request code 0", 8, 0},
			{"echo request code 6", 8, 6},
			{"echo reply code 7", 0, 7},
			{"echo reply code 0", 0, 0},
			{"timestamp request (13/0)", 13, 0},
			{"timestamp request code 1 (13/1)", 13, 1},
			{"address mask reply (18/0)", 18, 0},
			{"unassigned type 42", 42, 0},
		} {
			d.Trace(c.label, icmpMsg("uplink0", "8.8.8.8:77", "10.1.1.2:77", c.typ, c.code))
		}
		for _, c := range []struct {
			label     string
			typ, code uint8
		}{
			{"ICMPv6 echo request code 1", 128, 1},
			{"ICMPv6 echo request code 0", 128, 0},
			{"ICMPv6 echo reply code 9", 129, 9},
			{"ICMPv6 router solicitation (133/0)", 133, 0},
			{"ICMPv6 neighbour advertisement code 1 (136/1)", 136, 1},
			{"ICMPv6 node information query (139/0)", 139, 0},
		} {
			d.Trace(c.label, icmpMsg("uplink0", "[2001:db8::8]:77", "[fd00:1:1::2]:77", c.typ, c.code))
		}
	})

	// permit+reflect on the pod's input, deny all on its output: the
	// request types with a reply (echo, timestamp, information, address
	// mask; ICMPv6 echo and node information) let their reply of the same
	// code back, a reply of another code is dropped; any other type makes
	// no way back.
	runDifferential(t, "acl/icmp-reflect-types", func(d *diffCase) {
		cnatTopology(d)
		setACLs(d, "tap2", []uint32{addACL(d, "reflect", anyRules(permitReflect)...)}, []uint32{addACL(d, "deny", anyRules(deny)...)})
		d.Must(d.Node.AddNeighbour("uplink0", addr("192.168.16.254")))
		for _, c := range []struct {
			label     string
			typ, code uint8
		}{
			{"echo request code 3", 8, 3},
			{"timestamp request (13/0)", 13, 0},
			{"information request (15/0)", 15, 0},
			{"address mask request code 2 (17/2)", 17, 2},
			{"unassigned type 42", 42, 0},
		} {
			d.Trace(c.label+" from the pod", icmpMsg("tap2", "10.1.1.2:300", "8.8.8.8:300", c.typ, c.code))
		}
		d.Trace("echo reply code 0 to the code-3 echo", icmpMsg("uplink0", "8.8.8.8:300", "10.1.1.2:300", 0, 0))
		d.Trace("echo reply code 3, another identifier", icmpMsg("uplink0", "8.8.8.8:301", "10.1.1.2:301", 0, 3))
		d.Trace("timestamp reply code 1 (14/1)", icmpMsg("uplink0", "8.8.8.8:300", "10.1.1.2:300", 14, 1))
		d.Trace("type 42 back", icmpMsg("uplink0", "8.8.8.8:300", "10.1.1.2:300", 42, 0))
		d.Trace("echo reply code 5 from the pod", icmpMsg("tap2", "10.1.1.2:302", "8.8.8.8:302", 0, 5))
		d.Trace("echo request code 5 back", icmpMsg("uplink0", "8.8.8.8:302", "10.1.1.2:302", 8, 5))
		// reverse_l4_u64_slowpath_valid checks type <= sizeof the tables:
		// for 18 it reads one byte past icmp4_valid_new.
		d.Trace("address mask reply (18/0) from the pod", icmpMsg("tap2", "10.1.1.2:303", "8.8.8.8:303", 18, 0))
		d.Trace("address mask request (17/0) back", icmpMsg("uplink0", "8.8.8.8:303", "10.1.1.2:303", 17, 0))
		for _, c := range []struct {
			label     string
			typ, code uint8
		}{
			{"ICMPv6 echo request code 2", 128, 2},
			{"ICMPv6 node information query (139/1)", 139, 1},
			{"ICMPv6 router solicitation (133/0)", 133, 0},
		} {
			d.Trace(c.label+" from the pod", icmpMsg("tap2", "[fd00:1:1::2]:300", "[2001:db8::8]:300", c.typ, c.code))
		}
		d.Trace("ICMPv6 echo reply code 0 to the code-2 echo", icmpMsg("uplink0", "[2001:db8::8]:300", "[fd00:1:1::2]:300", 129, 0))
	})

	// NAT44-ED translates echoes of any code (the identifier, the code
	// kept) and drops every other type that is not an error, in both
	// directions, before it looks for a session or a mapping.
	runDifferential(t, "nat44/icmp-types", func(d *diffCase) {
		natTopology(d)
		d.Trace("echo request code 3 from the pod", icmpMsg("tap2", "10.1.1.2:4000", "8.8.8.8:4000", 8, 3))
		d.Trace("echo reply code 9 from the pod", icmpMsg("tap2", "10.1.1.2:4001", "8.8.8.8:4001", 0, 9))
		d.Trace("timestamp request from the pod", icmpMsg("tap2", "10.1.1.2:4002", "8.8.8.8:4002", 13, 0))
		d.Trace("address mask request from the pod", icmpMsg("tap2", "10.1.1.2:4003", "8.8.8.8:4003", 17, 0))
		d.Trace("timestamp request from outside to the pool address", icmpMsg("uplink0", "8.8.8.8:4004", "192.168.16.1:4004", 13, 0))
		d.Trace("echo request code 1 from outside to the pool address", icmpMsg("uplink0", "8.8.8.8:4005", "192.168.16.1:4005", 8, 1))
		sessions(d, "sessions", "10.1.1.2")
	})

	// cnat: cnat-snat source-NATs echoes of any code by their identifier;
	// other types have no session key (cnat_session_make_key) and pass
	// untranslated.
	runDifferential(t, "cnat/icmp-types", func(d *diffCase) {
		cnatTopology(d)
		c := cnat.NewServiceClient(d.Conn)
		_, err := c.CnatSetSnatAddresses(d.Ctx, &cnat.CnatSetSnatAddresses{SnatIP4: ip4a("192.168.16.1"),
			SnatIP6: ip_types.IP6Address(addr("fd00:16::1").As16()), SwIfIndex: noIf})
		d.Retval("snat addresses", err)
		fc := feature.NewServiceClient(d.Conn)
		for _, f := range []feature.FeatureEnableDisable{
			{ArcName: "ip4-unicast", FeatureName: "cnat-snat-ip4"}, {ArcName: "ip6-unicast", FeatureName: "cnat-snat-ip6"}} {
			f.Enable, f.SwIfIndex = true, d.Sw("tap2")
			_, err = fc.FeatureEnableDisable(d.Ctx, &f)
			d.Retval(f.FeatureName+" on tap2", err)
		}
		traceAllocPort(d, "echo request code 3 from the pod", icmpMsg("tap2", "10.1.1.2:5000", "8.8.8.8:5000", 8, 3))
		d.Trace("timestamp request from the pod", icmpMsg("tap2", "10.1.1.2:5001", "8.8.8.8:5001", 13, 0))
		traceAllocPort(d, "ICMPv6 echo request code 4 from the pod", icmpMsg("tap2", "[fd00:1:1::2]:5002", "[2001:db8::8]:5002", 128, 4))
		d.Trace("ICMPv6 router solicitation from the pod", icmpMsg("tap2", "[fd00:1:1::2]:5003", "[2001:db8::8]:5003", 133, 0))
	})
}
