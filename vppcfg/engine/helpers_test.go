package engine

// Test address plan (used across this package's tests, as in vppcfg's):
//   10.96.0.0/16  service VIPs (NAT44 LB and static mappings, cnat VIPs)
//   10.1.1.0/24   pod backends
//   1.1.1.1       NAT44 pool address
//   fd00::/64     IPv6 VIPs and backends
//   tap0, tap1    pod interfaces; eth0 uplink

import (
	"net/netip"
	"strings"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
)

func ap(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }
func addr(s string) netip.Addr   { return netip.MustParseAddr(s) }
func pfx(s string) netip.Prefix  { return netip.MustParsePrefix(s) }

// lb builds an out2in-only TCP LB mapping; locals are "addr:port@prob".
func lb(ext string, locals ...string) *vppcfg.NAT44LBMapping {
	m := &vppcfg.NAT44LBMapping{External: ap(ext), Protocol: vppcfg.ProtoTCP, Out2InOnly: true, Label: "svc"}
	for _, l := range locals {
		a, prob, _ := strings.Cut(l, "@")
		p := uint8(10)
		if prob != "" {
			var v int
			for _, c := range prob {
				v = v*10 + int(c-'0')
			}
			p = uint8(v)
		}
		m.Locals = append(m.Locals, vppcfg.NAT44LBLocal{Addr: ap(a), Probability: p})
	}
	vppcfg.SortLBLocals(m.Locals)
	return m
}

func static(ext, local string) *vppcfg.NAT44StaticMapping {
	return &vppcfg.NAT44StaticMapping{External: ap(ext), Protocol: vppcfg.ProtoTCP, Local: ap(local), Out2InOnly: true, Label: "svc"}
}

func acl(name string, dstPorts ...uint16) *vppcfg.ACL {
	a := &vppcfg.ACL{Name: name}
	for _, p := range dstPorts {
		a.Rules = append(a.Rules, vppcfg.ACLRule{Action: vppcfg.ACLPermit, Src: pfx("0.0.0.0/0"), Dst: pfx("10.1.1.0/24"),
			Protocol: vppcfg.ProtoTCP, SrcPorts: vppcfg.AnyPort, DstPorts: vppcfg.SinglePort(p)})
	}
	return a
}

func binding(ifName string, dir vppcfg.ACLDirection, aclName string, prio int32) *vppcfg.ACLBinding {
	return &vppcfg.ACLBinding{Interface: ifName, Direction: dir, ACL: aclName, Priority: prio}
}

func cnat(vip string, lbType vppcfg.CNATLBType, dsts ...string) *vppcfg.CNATTranslation {
	t := &vppcfg.CNATTranslation{VIP: ap(vip), Protocol: vppcfg.ProtoTCP, LBType: lbType}
	for _, d := range dsts {
		t.Paths = append(t.Paths, vppcfg.CNATPath{Dst: ap(d)})
	}
	return t
}

var global = &vppcfg.NAT44Global{}

// items builds a desired map.
func items(its ...vppcfg.Item) map[vppcfg.Key]vppcfg.Item {
	m := map[vppcfg.Key]vppcfg.Item{}
	for _, it := range its {
		m[it.Key()] = core.Canonical(it) // as the store keeps desired items
	}
	return m
}

// desiredOf is the diff's view of desired items, owned by nobody.
func desiredOf(m map[vppcfg.Key]vppcfg.Item) core.DesiredItems {
	d := make(core.DesiredItems, len(m))
	for k, it := range m {
		d[k] = core.DesiredEntry{Item: it}
	}
	return d
}

// applied builds an applied map owned by "a".
func applied(its ...vppcfg.Item) map[vppcfg.Key]appliedEntry {
	m := map[vppcfg.Key]appliedEntry{}
	for _, it := range its {
		m[it.Key()] = appliedEntry{Item: it, Owner: newOwnerRef("a")}
	}
	return m
}

func opStrings(ops []task) []string {
	out := make([]string, 0, len(ops))
	for _, op := range ops {
		out = append(out, core.OpText(op.Op))
	}
	return out
}
