package dataplane_test

// Differential cases of the ACL plugin: reflect sessions (what they let
// back, for which protocols, after FIN and RST), port ranges at their
// edges, ICMP type and code (carried in the port fields), prefix lengths
// at the edges, first match across permit and deny, stateless permits.
// ACL session timeouts are set by CLI only (no binary API): the case that
// lowers them uses VPP's CLI and fakevpp's SetACLSessionTimeout.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"go.fd.io/govpp/binapi/acl"
	"go.fd.io/govpp/binapi/acl_types"
	"go.fd.io/govpp/binapi/ip_types"

	"github.com/vppsvc/vppsvc/dataplane"
	"github.com/vppsvc/vppsvc/fakevpp"
)

// aclRule is one ACL rule: action, protocol (0 any), prefixes, and the
// source (ICMP type) and destination (ICMP code) ranges.
func aclRule(action acl_types.ACLAction, proto ip_types.IPProto, src, dst string, sLo, sHi, dLo, dHi uint16) acl_types.ACLRule {
	s, err := ip_types.ParsePrefix(src)
	if err != nil {
		panic(err)
	}
	d, err := ip_types.ParsePrefix(dst)
	if err != nil {
		panic(err)
	}
	return acl_types.ACLRule{IsPermit: action, Proto: proto, SrcPrefix: s, DstPrefix: d,
		SrcportOrIcmptypeFirst: sLo, SrcportOrIcmptypeLast: sHi, DstportOrIcmpcodeFirst: dLo, DstportOrIcmpcodeLast: dHi}
}

// anyRules are rules of one action matching everything of both families.
func anyRules(action acl_types.ACLAction) []acl_types.ACLRule {
	return []acl_types.ACLRule{
		aclRule(action, 0, "0.0.0.0/0", "0.0.0.0/0", 0, 65535, 0, 65535),
		aclRule(action, 0, "::/0", "::/0", 0, 65535, 0, 65535),
	}
}

const (
	permit        = acl_types.ACL_ACTION_API_PERMIT
	deny          = acl_types.ACL_ACTION_API_DENY
	permitReflect = acl_types.ACL_ACTION_API_PERMIT_REFLECT
)

// addACL adds an ACL and records its retval; it returns the index.
func addACL(d *diffCase, tag string, rules ...acl_types.ACLRule) uint32 {
	d.t.Helper()
	r, err := acl.NewServiceClient(d.Conn).ACLAddReplace(d.Ctx, &acl.ACLAddReplace{ACLIndex: ^uint32(0), Tag: tag, Count: uint32(len(rules)), R: rules})
	d.Retval("acl_add_replace "+tag, err)
	if err != nil {
		return ^uint32(0)
	}
	return r.ACLIndex
}

// setACLs binds input and output lists to an interface.
func setACLs(d *diffCase, ifName string, in, out []uint32) {
	d.t.Helper()
	_, err := acl.NewServiceClient(d.Conn).ACLInterfaceSetACLList(d.Ctx, &acl.ACLInterfaceSetACLList{SwIfIndex: d.Sw(ifName),
		Count: uint8(len(in) + len(out)), NInput: uint8(len(in)), Acls: append(append([]uint32{}, in...), out...)})
	d.Retval("acl_interface_set_acl_list "+ifName, err)
}

// setACLTimeout sets one of the ACL plugin's session timeouts, by CLI on a
// real VPP (no binary API sets them; the default comes back when the case
// ends) and with SetACLSessionTimeout on fakevpp.
func setACLTimeout(d *diffCase, t fakevpp.ACLTimeout, sec int) {
	d.t.Helper()
	words := map[fakevpp.ACLTimeout]string{fakevpp.ACLTCPIdle: "tcp idle", fakevpp.ACLTCPTransient: "tcp transient", fakevpp.ACLUDPIdle: "udp idle"}[t]
	defaults := map[fakevpp.ACLTimeout]int{fakevpp.ACLTCPIdle: 86400, fakevpp.ACLTCPTransient: 120, fakevpp.ACLUDPIdle: 600}
	switch n := d.Node.(type) {
	case *dataplane.Fake:
		n.VPP.SetACLSessionTimeout(t, time.Duration(sec)*time.Second)
	case dataplane.Real:
		cli := func(sec int) error {
			out, err := n.CLI(fmt.Sprintf("set acl-plugin session timeout %s %d", words, sec))
			if err == nil && strings.TrimSpace(out) != "" {
				err = fmt.Errorf("set acl-plugin session timeout: %s", strings.TrimSpace(out))
			}
			return err
		}
		d.Must(cli(sec))
		d.t.Cleanup(func() {
			if err := cli(defaults[t]); err != nil {
				d.t.Errorf("restoring the ACL %s timeout: %v", words, err)
			}
		})
	}
	d.Record("acl session timeout "+words, sec)
}

func udp(in, src, dst string) fakevpp.Packet {
	return fakevpp.Packet{Ingress: in, Protocol: 17, Src: ap(src), Dst: ap(dst)}
}

func TestDiffACL(t *testing.T) {
	// A reflect rule on the pod interface's input, deny all on its output:
	// replies of the pod's flows come back, for TCP, UDP, ICMP echo
	// (sessions key ICMP on type and code, not the identifier), a portless
	// protocol and IPv6; unsolicited packets and ICMP errors about the
	// pod's flows do not; a TCP session still passes after FIN and RST.
	runDifferential(t, "acl/reflect", func(d *diffCase) {
		cnatTopology(d)
		setACLs(d, "tap2", []uint32{addACL(d, "reflect", anyRules(permitReflect)...)}, []uint32{addACL(d, "deny", anyRules(deny)...)})
		syn := d.Trace("TCP from the pod", tcp("tap2", "10.1.1.2:40000", "8.8.8.8:443"))
		d.Trace("UDP from the pod", udp("tap2", "10.1.1.2:5353", "8.8.4.4:53"))
		d.Trace("echo from the pod", fakevpp.Packet{Ingress: "tap2", Protocol: 1, Src: ap("10.1.1.2:100"), Dst: ap("8.8.8.8:100")})
		d.Trace("echo reply with another identifier", fakevpp.Packet{Ingress: "uplink0", Protocol: 1, Src: ap("8.8.8.8:101"), Dst: ap("10.1.1.2:101"), EchoReply: true})
		d.Trace("echo request from the pinged host", fakevpp.Packet{Ingress: "uplink0", Protocol: 1, Src: ap("8.8.8.8:100"), Dst: ap("10.1.1.2:100")})
		d.Trace("GRE from the pod", fakevpp.Packet{Ingress: "tap2", Protocol: 47, Src: ap("10.1.1.2:0"), Dst: ap("8.8.8.8:0")})
		d.Trace("TCP over IPv6 from the pod", tcp("tap2", "[fd00:1:1::2]:40000", "[2001:db8::8]:443"))
		d.Trace("TTL exceeded about the pod's TCP flow", icmpError("uplink0", "192.168.16.254", fakevpp.ICMP4TimeExceeded, 0, syn.Out))
		d.Trace("unsolicited TCP from outside", tcp("uplink0", "8.8.8.8:443", "10.1.1.2:40001"))
		d.Trace("the pod's FIN", pktFlags(tcp("tap2", "10.1.1.2:40000", "8.8.8.8:443"), fin|ack))
		d.Trace("the pod's RST", pktFlags(tcp("tap2", "10.1.1.2:40000", "8.8.8.8:443"), rst))
		d.Trace("a late ACK from the server", pktFlags(tcp("uplink0", "8.8.8.8:443", "10.1.1.2:40000"), ack))
	})

	// A plain permit makes no session: with deny all on the way back the
	// replies are dropped.
	runDifferential(t, "acl/stateless", func(d *diffCase) {
		cnatTopology(d)
		setACLs(d, "tap2", []uint32{addACL(d, "permit", anyRules(permit)...)}, []uint32{addACL(d, "deny", anyRules(deny)...)})
		d.Trace("TCP from the pod", tcp("tap2", "10.1.1.2:40000", "8.8.8.8:443"))
		d.Trace("UDP from the pod", udp("tap2", "10.1.1.2:5353", "8.8.4.4:53"))
	})

	// Port ranges include both ends; a range given high to low.
	runDifferential(t, "acl/port-ranges", func(d *diffCase) {
		cnatTopology(d)
		ports := addACL(d, "ports",
			aclRule(permit, ip_types.IP_API_PROTO_TCP, "0.0.0.0/0", "0.0.0.0/0", 0, 65535, 1000, 2000),
			aclRule(permit, ip_types.IP_API_PROTO_UDP, "0.0.0.0/0", "0.0.0.0/0", 53, 53, 1024, 65535),
			aclRule(permit, ip_types.IP_API_PROTO_UDP, "0.0.0.0/0", "0.0.0.0/0", 0, 65535, 0, 0))
		addACL(d, "inverted", aclRule(permit, ip_types.IP_API_PROTO_TCP, "0.0.0.0/0", "0.0.0.0/0", 0, 65535, 2000, 1000))
		// Indexes depend on what the real VPP freed before (LIFO reuse).
		Dump[*acl.ACLDetails](d, "acl_dump", &acl.ACLDump{ACLIndex: ^uint32(0)}, "ACLIndex")
		setACLs(d, "uplink0", []uint32{ports}, nil)
		for _, c := range []struct{ label, proto, src, dst string }{
			{"TCP to 999", "tcp", "8.8.8.8:40000", "10.1.1.2:999"},
			{"TCP to 1000", "tcp", "8.8.8.8:40000", "10.1.1.2:1000"},
			{"TCP to 2000", "tcp", "8.8.8.8:40000", "10.1.1.2:2000"},
			{"TCP to 2001", "tcp", "8.8.8.8:40000", "10.1.1.2:2001"},
			{"UDP from 53 to 1023", "udp", "8.8.8.8:53", "10.1.1.2:1023"},
			{"UDP from 53 to 1024", "udp", "8.8.8.8:53", "10.1.1.2:1024"},
			{"UDP from 53 to 65535", "udp", "8.8.8.8:53", "10.1.1.2:65535"},
			{"UDP from 54 to 1024", "udp", "8.8.8.8:54", "10.1.1.2:1024"},
			{"UDP from 54 to 0", "udp", "8.8.8.8:54", "10.1.1.2:0"},
		} {
			p := tcp("uplink0", c.src, c.dst)
			if c.proto == "udp" {
				p = udp("uplink0", c.src, c.dst)
			}
			d.Trace(c.label, p)
		}
	})

	// ICMP rules match the type in the source range and the code in the
	// destination range, for requests, replies and errors alike.
	runDifferential(t, "acl/icmp-type-code", func(d *diffCase) {
		cnatTopology(d)
		setACLs(d, "uplink0", []uint32{addACL(d, "icmp",
			aclRule(permit, ip_types.IP_API_PROTO_ICMP, "0.0.0.0/0", "0.0.0.0/0", 8, 8, 0, 0),
			aclRule(permit, ip_types.IP_API_PROTO_ICMP, "0.0.0.0/0", "0.0.0.0/0", 3, 3, 0, 3),
			aclRule(permit, ip_types.IP_API_PROTO_ICMP6, "::/0", "::/0", 128, 128, 0, 255))}, nil)
		about := udp("tap2", "10.1.1.2:5353", "8.8.4.4:53")
		about6 := udp("tap2", "[fd00:1:1::2]:5353", "[2001:db8::8]:53")
		d.Trace("echo request", fakevpp.Packet{Ingress: "uplink0", Protocol: 1, Src: ap("8.8.8.8:7"), Dst: ap("10.1.1.2:7")})
		d.Trace("echo reply", fakevpp.Packet{Ingress: "uplink0", Protocol: 1, Src: ap("8.8.8.8:7"), Dst: ap("10.1.1.2:7"), EchoReply: true})
		d.Trace("port unreachable (3/3)", icmpError("uplink0", "8.8.4.4", fakevpp.ICMP4DestUnreach, 3, about))
		d.Trace("fragmentation needed (3/4)", icmpError("uplink0", "8.8.4.4", fakevpp.ICMP4DestUnreach, 4, about))
		d.Trace("TTL exceeded (11/0)", icmpError("uplink0", "192.168.16.254", fakevpp.ICMP4TimeExceeded, 0, about))
		d.Trace("ICMPv6 echo request", fakevpp.Packet{Ingress: "uplink0", Protocol: 58, Src: ap("[2001:db8::8]:7"), Dst: ap("[fd00:1:1::2]:7")})
		d.Trace("ICMPv6 echo reply", fakevpp.Packet{Ingress: "uplink0", Protocol: 58, Src: ap("[2001:db8::8]:7"), Dst: ap("[fd00:1:1::2]:7"), EchoReply: true})
		d.Trace("ICMPv6 port unreachable", icmpError("uplink0", "2001:db8::8", fakevpp.ICMP6DestUnreach, fakevpp.ICMP6PortUnreachable, about6))
	})

	// /32 and /128 match one address, /0 all of a family; the first match
	// wins, so a deny before a permit-all holds; a list of IPv4 rules only
	// drops IPv6; prefix lengths past the family's width are refused.
	runDifferential(t, "acl/prefixes", func(d *diffCase) {
		cnatTopology(d)
		in := addACL(d, "edges",
			aclRule(deny, 0, "8.8.8.8/32", "0.0.0.0/0", 0, 65535, 0, 65535),
			aclRule(permit, 0, "0.0.0.0/0", "0.0.0.0/0", 0, 65535, 0, 65535),
			aclRule(deny, 0, "2001:db8::7/128", "::/0", 0, 65535, 0, 65535),
			aclRule(permit, 0, "::/0", "::/0", 0, 65535, 0, 65535))
		v4only := addACL(d, "v4-only", aclRule(permit, 0, "0.0.0.0/0", "10.1.1.0/24", 0, 65535, 0, 65535))
		bad := aclRule(permit, 0, "0.0.0.0/0", "0.0.0.0/0", 0, 65535, 0, 65535)
		bad.SrcPrefix.Len = 33
		addACL(d, "/33", bad)
		bad6 := aclRule(permit, 0, "::/0", "::/0", 0, 65535, 0, 65535)
		bad6.DstPrefix.Len = 129
		addACL(d, "/129", bad6)
		mixed := aclRule(permit, 0, "0.0.0.0/0", "::/0", 0, 65535, 0, 65535)
		addACL(d, "mixed families", mixed)
		hostBits := addACL(d, "host bits", aclRule(permit, 0, "8.8.8.8/24", "10.1.1.2/16", 0, 65535, 0, 65535))
		Dump[*acl.ACLDetails](d, "acl_dump of host bits (all when it was refused)", &acl.ACLDump{ACLIndex: hostBits}, "ACLIndex")
		setACLs(d, "uplink0", []uint32{in}, nil)
		setACLs(d, "tap2", nil, []uint32{v4only})
		d.Trace("from 8.8.8.8", udp("uplink0", "8.8.8.8:53", "10.1.1.2:5353"))
		d.Trace("from 8.8.8.9", udp("uplink0", "8.8.8.9:53", "10.1.1.2:5353"))
		d.Trace("from 2001:db8::7", udp("uplink0", "[2001:db8::7]:53", "[fd00:1:1::2]:5353"))
		d.Trace("from 2001:db8::8 (out through the v4-only list)", udp("uplink0", "[2001:db8::8]:53", "[fd00:1:1::2]:5353"))
	})

	// Reflect sessions expire after their idle timeout: UDP (and other
	// protocols) after "udp idle", TCP before its handshake completes and
	// after a FIN after "tcp transient", established TCP after "tcp idle".
	runDifferential(t, "acl/reflect-timeouts", func(d *diffCase) {
		cnatTopology(d)
		setACLs(d, "tap2", []uint32{addACL(d, "reflect", anyRules(permitReflect)...)}, []uint32{addACL(d, "deny", anyRules(deny)...)})
		setACLTimeout(d, fakevpp.ACLUDPIdle, 1)
		setACLTimeout(d, fakevpp.ACLTCPTransient, 1)
		setACLTimeout(d, fakevpp.ACLTCPIdle, 6)
		d.Trace("UDP from the pod", udp("tap2", "10.1.1.2:5353", "8.8.4.4:53"))
		d.Trace("SYN from the pod", tcp("tap2", "10.1.1.2:40000", "8.8.8.8:443"))
		d.Trace("SYN from the pod, second flow", tcp("tap2", "10.1.1.2:40001", "8.8.8.8:443"))
		d.Trace("ACK on the second flow", pktFlags(tcp("tap2", "10.1.1.2:40001", "8.8.8.8:443"), ack))
		d.Wait(2500 * time.Millisecond)
		d.Trace("the UDP server's late reply", udp("uplink0", "8.8.4.4:53", "10.1.1.2:5353"))
		d.Trace("a late SYN|ACK on the first flow", pktFlags(tcp("uplink0", "8.8.8.8:443", "10.1.1.2:40000"), syn|ack))
		d.Trace("an ACK on the established flow", pktFlags(tcp("uplink0", "8.8.8.8:443", "10.1.1.2:40001"), ack))
		d.Trace("the pod's FIN on it", pktFlags(tcp("tap2", "10.1.1.2:40001", "8.8.8.8:443"), fin|ack))
		d.Wait(2500 * time.Millisecond)
		d.Trace("an ACK 2.5 s after the FIN", pktFlags(tcp("uplink0", "8.8.8.8:443", "10.1.1.2:40001"), ack))
	})
}
