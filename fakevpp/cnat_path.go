package fakevpp

import (
	"fmt"
	"strings"

	"github.com/vppsvc/vppsvc/fakevpp/internal/cnat"
)

// cnat's two places in the graph (fakevpp/internal/cnat/README.md#where-cnat-acts,
// docs/fakevpp.md#packet-pipeline):
//
//   - cnat-snat-ip4/ip6, a feature of the ingress interface's unicast arc,
//     switched on per interface with FeatureEnableDisable;
//   - ip4-cnat-tx/ip6-cnat-tx, where the FIB lookup hands every packet whose
//     destination is a cnat entry (a VIP or a learned client): after all
//     ingress features, before all egress features.
//
// The third place, the feature-arc nodes cnat-input/cnat-output, is in
// cnat_feature.go.

// cnatMaxLookups bounds the lookup → cnat-tx → lookup loop of return traffic
// of source-NATed flows. Each pass needs another matching session, so real
// configurations end after two; the bound only stops a looping one.
const cnatMaxLookups = 8

// cnatSnatNode is cnat-snat-ip4/ip6 on the ingress interface; the engine
// passes packets untouched where the feature is off. VPP gives the node no
// order against acl-plugin-in and NAT44 (no runs_before/after); the fake runs
// it after both (orderCnatSnat), just before the lookup.
func cnatSnatNode(c *pktCtx) {
	defer c.v.cnatViolations()
	r := c.v.cnat().Snat(cnatFlow(c.pkt), c.rx.index, c.v.clock())
	applyCnat(c, "cnat-snat-"+c.family(), r)
}

// cnatVIPNode is the part of ip4-lookup/ip6-lookup that hits a cnat entry:
// the packet goes to ip4-cnat-tx/ip6-cnat-tx instead of being forwarded.
// Passed packets continue with the FIB lookup of their destination (a real
// IP's own route or receive entry), translated ones with the lookup of the
// new destination; return traffic of a source-NATed flow (Relookup) is looked
// up in full again and may enter cnat once more.
func cnatVIPNode(c *pktCtx) {
	v := c.v
	defer v.cnatViolations()
	eng := v.cnat()
	node := c.family() + "-cnat-tx"
	fib := v.fibs().cur[famIdx(!c.pkt.is4())]
	for i := 0; v.reachesTable0(fib, c.pkt.dst.Addr()) && eng.Routes(c.pkt.dst.Addr()); i++ {
		if i == cnatMaxLookups {
			v.violate("cnat lookup loop", fmt.Sprintf("%s still hits a cnat entry after %d lookups", c.pkt, cnatMaxLookups))
			c.drop(node, "lookup loop")
			return
		}
		c.step("%s-lookup: %s is a cnat entry → %s", c.family(), c.pkt.dst.Addr(), node)
		r := eng.VIP(cnatFlow(c.pkt), v.clock())
		applyCnat(c, node, r)
		if c.done || r.Verdict != cnat.Forward || !r.Relookup {
			return
		}
	}
}

// applyCnat carries an engine result over to the packet: its steps, the
// rewritten addresses and ports, the candidate backends of a new
// load-balanced session (Trace.Endpoints), or the drop.
func applyCnat(c *pktCtx, node string, r cnat.Result) {
	for _, s := range r.Steps {
		c.step("%s", s)
	}
	switch r.Verdict {
	case cnat.Drop:
		c.dropAfterSteps(node, strings.TrimPrefix(r.DropReason, "cnat: "))
	case cnat.Forward:
		c.pkt.src, c.pkt.dst = r.Flow.Src, r.Flow.Dst
		if c.pkt.isErr && r.Flow.Inner != nil {
			c.pkt.inner.src, c.pkt.inner.dst = r.Flow.Inner.Src, r.Flow.Inner.Dst
		}
		if r.NewSession && len(r.Candidates) > 0 {
			c.endpoints = r.Candidates
		}
	}
}

// cnatFlow is the part of the packet cnat reads. The fake's ICMP packets are
// echo requests or replies whose identifier is already in both ports, which
// is how the engine expects echo flows.
func cnatFlow(p pkt) cnat.Flow {
	f := cnat.Flow{Proto: p.proto, Src: p.src, Dst: p.dst, TCPFlags: p.tcpFlags}
	if p.isErr {
		// An ICMP error: cnat finds the session of the quoted packet.
		in := cnatFlow(p.inner.pkt())
		f.ICMPType, f.Inner = p.icmpType, &in
		return f
	}
	if p.isICMP() {
		f.ICMPType = p.icmpType
	}
	return f
}
