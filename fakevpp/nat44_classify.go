package fakevpp

// NAT44-ED's place in the graph and nat44-ed-classify
// (docs/fakevpp.md#graph-position, #classification), read against
// nat44_ed_classify.c of VPP 25.10.

// natInputNode runs NAT44-ED on ip4-unicast according to the ingress
// interface's role.
func natInputNode(c *pktCtx) {
	n := c.v.nat()
	if !n.enabled || !c.pkt.is4() {
		return
	}
	rec := n.role(c.rx.index)
	isOutput := n.output(c.rx.index) != nil
	if rec == nil && !isOutput {
		return
	}
	switch {
	case isOutput:
		n.out2in(c)
	case rec.inside && rec.outside:
		n.classify(c)
	case rec.inside:
		n.in2out(c, false)
	default:
		n.out2in(c)
	}
}

// natOutputNode runs nat44-ed-in2out-output on ip4-output of an
// output-feature interface.
func natOutputNode(c *pktCtx) {
	n := c.v.nat()
	if !n.enabled || !c.pkt.is4() || c.tx == nil || n.output(c.tx.index) == nil {
		return
	}
	n.in2out(c, true)
}

// classify is nat44-ed-classify on an inside+outside interface: an existing
// session decides (except for ICMP), then pool addresses and mappings whose
// local differs from the external address send the packet to out2in.
func (n *natState) classify(c *pktCtx) {
	p := c.pkt
	toOut2In := func(why string) {
		c.step("%s: out2in (%s)", nodeClassify, why)
		n.out2in(c)
	}
	toIn2Out := func(why string) {
		c.step("%s: in2out (%s)", nodeClassify, why)
		n.in2out(c, false)
	}
	if p.proto != protoICMP {
		k := flowKey{p.src, p.dst, p.proto, fibOf(c.rx)}
		if s := n.flows[k]; s != nil {
			if s.hasI2O && s.i2o.match == k {
				toIn2Out("session, inside side")
			} else {
				toOut2In("session, outside side")
			}
			return
		}
	}
	if indexAddr(n.addrs, p.dst.Addr()) >= 0 {
		toOut2In("destination is a pool address")
		return
	}
	if m := n.byExt[extKey{addr: p.dst.Addr(), port: 0, proto: 0}]; m != nil {
		if m.local != m.ext {
			toOut2In("address-only mapping")
		} else {
			toIn2Out("identity mapping")
		}
		return
	}
	if m := n.byExt[extKey{addr: p.dst.Addr(), port: p.dst.Port(), proto: p.proto}]; m != nil && m.local != m.ext {
		toOut2In(kindName(m.kind) + " mapping")
		return
	}
	toIn2Out("no session or mapping")
}
