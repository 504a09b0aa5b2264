package dataplane_test

// Differential cases of TTL and hop-limit expiry: a packet VPP would
// forward with TTL 1 is dropped and answered with a time exceeded from the
// receiving interface's address (docs/fakevpp.md "### TTL and hop limit").
// NAT44-ED answers before translating; ip4-rewrite/ip6-rewrite after the
// lookup, so behind cnat the error quotes the translated packet.

import (
	"fmt"
	"testing"

	"github.com/vppsvc/vppsvc/fakevpp"
)

// withTTL is p sent with a TTL (hop limit).
func withTTL(p fakevpp.Packet, ttl uint8) fakevpp.Packet {
	p.TTL = ttl
	return p
}

// traceTTL records what d.Trace records, the TTL the packet left with, and
// the ICMP error VPP sent about it, if one left.
func traceTTL(d *diffCase, label string, p fakevpp.Packet) fakevpp.Trace {
	tr := d.Trace(label, p)
	if tr.Verdict == fakevpp.Forward {
		d.Record(label+": left with TTL", tr.Out.TTL)
	}
	sent := "none"
	if tr.ICMP != nil && tr.ICMP.Verdict == fakevpp.Forward {
		sent = fmt.Sprintf("via %s as %s, TTL %d", tr.ICMP.Egress, tr.ICMP.Out, tr.ICMP.Out.TTL)
	}
	d.Record(label+": ICMP error from VPP", sent)
	return tr
}

func TestDiffTTL(t *testing.T) {
	// NAT44-ED in2out on tap2 (inside, unnumbered to host0), out2in on
	// uplink0; host0 has no NAT.
	runDifferential(t, "ttl/nat44", func(d *diffCase) {
		natTopology(d)
		traceTTL(d, "pod SYN out with TTL 1", withTTL(tcp("tap2", "10.1.1.2:40000", "8.8.8.8:443"), 1))
		traceTTL(d, "pod SYN out with TTL 2", withTTL(tcp("tap2", "10.1.1.2:40001", "8.8.8.8:443"), 2))
		first := traceTTL(d, "pod UDP out", fakevpp.Packet{Ingress: "tap2", Protocol: 17, Src: ap("10.1.1.2:5353"), Dst: ap("8.8.4.4:53")})
		reply := fakevpp.Packet{Ingress: "uplink0", Protocol: 17, Src: first.Out.Dst, Dst: first.Out.Src}
		traceTTL(d, "its reply with TTL 1", withTTL(reply, 1))
		traceTTL(d, "its reply with TTL 2", withTTL(reply, 2))
		traceTTL(d, "SYN with TTL 1 to the uplink's own address", withTTL(tcp("uplink0", "8.8.8.8:40000", "192.168.16.1:22"), 1))
		traceTTL(d, "SYN with TTL 1 from host0 to a pod (no NAT)", withTTL(tcp("host0", "172.30.1.2:40000", "10.1.1.2:80"), 1))
		traceTTL(d, "SYN with TTL 1 from host0 to its own address", withTTL(tcp("host0", "172.30.1.2:40000", "172.30.1.1:22"), 1))
		traceTTL(d, "echo request with TTL 1 from the pod", withTTL(fakevpp.Packet{Ingress: "tap2", Protocol: 1, Src: ap("10.1.1.2:77"), Dst: ap("8.8.8.8:77")}, 1))
	})

	// cnat, IPv4 and IPv6: the VIP is translated at the lookup, before
	// ip4-rewrite/ip6-rewrite's check.
	runDifferential(t, "ttl/cnat", func(d *diffCase) {
		cnatTopology(d)
		udpVIPs(d)
		for _, f := range []struct{ client, vip, pod, remote string }{
			{"198.51.100.7:1234", "10.96.0.10:80", "10.1.1.3:5353", "198.51.100.8:53"},
			{"[2001:db8::7]:1234", "[fd00:96::1]:80", "[fd00:1:1::3]:5353", "[2001:db8::8]:53"},
		} {
			udp := func(in, src, dst string) fakevpp.Packet {
				return fakevpp.Packet{Ingress: in, Protocol: 17, Src: ap(src), Dst: ap(dst)}
			}
			traceTTL(d, "client to the VIP with TTL 1", withTTL(udp("uplink0", f.client, f.vip), 1))
			traceTTL(d, "client to the VIP with TTL 2", withTTL(udp("uplink0", f.client, f.vip), 2))
			traceTTL(d, "pod out with TTL 1", withTTL(udp("tap2", f.pod, f.remote), 1))
		}
	})
}
