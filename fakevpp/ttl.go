package fakevpp

import (
	"fmt"
	"net/netip"
)

// TTL and hop-limit expiry, read against VPP 25.10 (docs/fakevpp.md "###
// TTL and hop limit"):
//
//   - ip4_ttl_and_checksum_check (ip4_forward.c) and the hop-limit check of
//     ip6_rewrite_inline (ip6_forward.c) decrement the TTL of a packet that
//     is forwarded (ip4-rewrite, after the lookup and before the output
//     features); one that would leave with 0 goes to ip4-icmp-error
//     (ip6-icmp-error) as time exceeded, code 0 (in transit). Packets VPP
//     generated itself (VNET_BUFFER_F_LOCALLY_ORIGINATED) are not checked,
//     nor are packets delivered locally (no rewrite).
//   - NAT44-ED checks first: nat44-ed-in2out (not the output feature) and
//     nat44-ed-out2in send a packet with TTL 1 to ip4-icmp-error before
//     translating it, so the error quotes the packet as it arrived.
//   - ip4_icmp_error (icmp4.c) and ip6_icmp_error (icmp6.c) build the error
//     from the packet as it is at that point (up to 576 bytes for IPv4,
//     1280 for IPv6: the whole of the fake's packets), to its source, from
//     the address of the packet's receiving interface (an unnumbered one's
//     donor) that shares the longest prefix with that source
//     (ip4_sas_by_sw_if_index, ip6_sas_by_sw_if_index in ip_sas.c), with
//     TTL 255; an interface without an address of the family drops it.
//     The error goes to ip4-lookup/ip6-lookup: it skips the input features
//     of the receiving interface (ACL, NAT44-ED, cnat-snat) but takes the
//     lookup nodes and the output features of its egress.
//
// Not modelled: packets arriving with TTL 0 (ip4-input answers them the
// same way; Packet.TTL 0 means DefaultTTL), and the rate limit of both
// error nodes (throttle_check, one error per source and destination every
// 10 µs for IPv4, 1 ms for IPv6).

// DefaultTTL is the TTL (hop limit) of a Packet that gives none.
const DefaultTTL uint8 = 64

// icmpErrorTTL is the TTL of the errors VPP generates.
const icmpErrorTTL uint8 = 255

// rewriteTTL is the TTL check of ip4-rewrite/ip6-rewrite on a forwarded
// packet.
func rewriteTTL(c *pktCtx) {
	if c.pkt.local {
		return
	}
	if c.pkt.ttl <= 1 {
		c.timeExceeded(c.family() + "-rewrite")
		return
	}
	c.pkt.ttl--
}

// natTTL is NAT44-ED's check of a packet with TTL 1, before translation.
func natTTL(c *pktCtx, node string) bool {
	if c.pkt.ttl != 1 || c.pkt.local {
		return false
	}
	c.timeExceeded(node)
	return true
}

// timeExceeded ends the packet in node and sends VPP's time exceeded about
// it, as it is now, back to its source.
func (c *pktCtx) timeExceeded(node string) {
	about := c.pkt
	errNode := c.family() + "-icmp-error"
	c.step("%s: TTL %d expires: to %s", node, about.ttl, errNode)
	c.verdict, c.reason, c.done = Drop, fmt.Sprintf("%s: TTL %d: time exceeded", node, about.ttl), true
	src, ok := c.v.sourceAddressFor(c.rx, about.src.Addr())
	if !ok {
		c.step("%s: %s has no %s address: no error sent", errNode, c.rx.name, c.family())
		c.sent = &SentICMP{Verdict: Drop, Reason: errNode + ": no source address"}
		return
	}
	e := pkt{proto: protoICMP, src: netip.AddrPortFrom(src, 0), dst: netip.AddrPortFrom(about.src.Addr(), 0),
		isErr: true, icmpType: ICMP4TimeExceeded, icmpCode: ICMPTTLExceededTransit, errFull: true,
		inner: innerOf(about),
		ttl:   icmpErrorTTL, local: true}
	if !about.is4() {
		e.proto, e.icmpType = protoICMP6, ICMP6TimeExceeded
	}
	g := &pktCtx{v: c.v, pkt: e, rx: c.rx}
	g.step("%s: sends %s", errNode, g.pkt)
	c.v.route(g)
	c.steps = append(c.steps, g.steps...)
	c.sent = &SentICMP{Verdict: g.verdict, Out: g.pkt.public(c.rx.name), Reason: g.reason}
	if g.verdict == Forward {
		c.sent.Egress = g.tx.name
	}
}

// sourceAddressFor is ip4_sas_by_sw_if_index/ip6_sas_by_sw_if_index: of
// the interface's addresses of dst's family (its donor's when it is
// unnumbered), the first that shares the longest prefix with dst.
func (v *VPP) sourceAddressFor(ifc *iface, dst netip.Addr) (netip.Addr, bool) {
	if ifc.unnumbered {
		if d := v.iface(ifc.unnumberedTo); d != nil {
			ifc = d
		}
	}
	var best netip.Addr
	bestLen := -1
	for _, p := range ifc.addrs {
		a := p.Addr()
		if a.Is4() != dst.Is4() {
			continue
		}
		if l := commonPrefixLen(a, dst); l > bestLen {
			best, bestLen = a, l
		}
	}
	return best, best.IsValid()
}

// commonPrefixLen is the number of leading bits a and b share.
func commonPrefixLen(a, b netip.Addr) int {
	x, y := a.AsSlice(), b.AsSlice()
	n := 0
	for i := range x {
		d := x[i] ^ y[i]
		if d == 0 {
			n += 8
			continue
		}
		for d&0x80 == 0 {
			n++
			d <<= 1
		}
		return n
	}
	return n
}
