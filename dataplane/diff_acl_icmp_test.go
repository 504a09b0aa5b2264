package dataplane_test

// Differential case of ICMP type and code ranges in ACL rules, beside
// acl/icmp-type-code: ranges that span several types, code ranges that
// leave out code 0, ICMPv6 packet too big, first match between a deny of
// one type and a permit of all, and an output ACL.

import (
	"testing"

	"go.fd.io/govpp/binapi/ip_types"

	"github.com/vppsvc/vppsvc/fakevpp"
)

func TestDiffACLICMPRanges(t *testing.T) {
	runDifferential(t, "acl/icmp-ranges", func(d *diffCase) {
		cnatTopology(d)
		icmp, icmp6 := ip_types.IP_API_PROTO_ICMP, ip_types.IP_API_PROTO_ICMP6
		in := addACL(d, "icmp ranges in",
			// IPv4: types 3-5 with code 4 only; time exceeded denied
			// before a permit of every type with codes 1-255.
			aclRule(permit, icmp, "0.0.0.0/0", "0.0.0.0/0", 3, 5, 4, 4),
			aclRule(deny, icmp, "0.0.0.0/0", "0.0.0.0/0", 11, 11, 0, 255),
			aclRule(permit, icmp, "0.0.0.0/0", "0.0.0.0/0", 0, 255, 1, 255),
			// IPv6: types 1-2 (unreachable, packet too big), any code.
			aclRule(permit, icmp6, "::/0", "::/0", 1, 2, 0, 255))
		out := addACL(d, "icmp echo out", aclRule(permit, icmp, "0.0.0.0/0", "0.0.0.0/0", 0, 0, 0, 0))
		setACLs(d, "uplink0", []uint32{in}, nil)
		setACLs(d, "host0", nil, []uint32{out})
		about := udp("tap2", "10.1.1.2:5353", "8.8.4.4:53")
		about6 := udp("tap2", "[fd00:1:1::2]:5353", "[2001:db8::8]:53")
		tcp6 := fakevpp.Packet{Protocol: 6, Src: ap("[fd00:1:1::2]:40000"), Dst: ap("[2001:db8::8]:443")}
		for _, c := range []struct {
			label string
			p     fakevpp.Packet
		}{
			{"fragmentation needed (3/4)", icmpError("uplink0", "8.8.4.4", fakevpp.ICMP4DestUnreach, 4, about)},
			{"port unreachable (3/3): code out of 4-4, in 1-255", icmpError("uplink0", "8.8.4.4", fakevpp.ICMP4DestUnreach, 3, about)},
			{"network unreachable (3/0): code 0 matches nothing", icmpError("uplink0", "8.8.4.4", fakevpp.ICMP4DestUnreach, 0, about)},
			{"redirect (5/4)", icmpError("uplink0", "192.168.16.254", 5, 4, about)},
			{"time exceeded (11/1): the deny comes first", icmpError("uplink0", "192.168.16.254", fakevpp.ICMP4TimeExceeded, 1, about)},
			{"parameter problem (12/1)", icmpError("uplink0", "192.168.16.254", 12, 1, about)},
			{"echo request (8/0): code 0", fakevpp.Packet{Ingress: "uplink0", Protocol: 1, Src: ap("8.8.8.8:7"), Dst: ap("10.1.1.2:7")}},
			{"ICMPv6 packet too big (2/0)", icmpError("uplink0", "2001:db8::8", fakevpp.ICMP6PacketTooBig, 0, tcp6)},
			{"ICMPv6 port unreachable (1/4)", icmpError("uplink0", "2001:db8::8", fakevpp.ICMP6DestUnreach, fakevpp.ICMP6PortUnreachable, about6)},
			{"ICMPv6 time exceeded (3/0)", icmpError("uplink0", "2001:db8::8", fakevpp.ICMP6TimeExceeded, 0, about6)},
		} {
			d.Trace(c.label, c.p)
		}
		// The output ACL of host0 lets echo replies (0/0) out, nothing else
		// (172.30.1.2 is a static neighbour: no ARP glean).
		d.Must(d.Node.AddNeighbour("host0", addr("172.30.1.2")))
		d.Trace("echo reply out of host0", fakevpp.Packet{Ingress: "tap2", Protocol: 1, Src: ap("10.1.1.2:9"), Dst: ap("172.30.1.2:9"), EchoReply: true})
		d.Trace("echo request out of host0", fakevpp.Packet{Ingress: "tap2", Protocol: 1, Src: ap("10.1.1.2:9"), Dst: ap("172.30.1.2:9")})
		d.Trace("port unreachable out of host0", icmpError("tap2", "10.1.1.2", fakevpp.ICMP4DestUnreach, 3, udp("host0", "172.30.1.2:53", "10.1.1.2:5353")))
	})
}
