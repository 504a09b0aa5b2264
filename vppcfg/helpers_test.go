package vppcfg

// Test address plan (used across this package's tests):
//   10.96.0.0/16  service VIPs (NAT44 LB and static mappings, cnat VIPs)
//   10.1.1.0/24   pod backends
//   1.1.1.1       NAT44 pool address
//   fd00::/64     IPv6 VIPs and backends
//   tap0, tap1    pod interfaces; eth0 uplink

import (
	"net/netip"
	"strings"
)

func ap(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }
func addr(s string) netip.Addr   { return netip.MustParseAddr(s) }
func pfx(s string) netip.Prefix  { return netip.MustParsePrefix(s) }

// lb builds an out2in-only TCP LB mapping; locals are "addr:port@prob".
func lb(ext string, locals ...string) *NAT44LBMapping {
	m := &NAT44LBMapping{External: ap(ext), Protocol: ProtoTCP, Out2InOnly: true, Label: "svc"}
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
		m.Locals = append(m.Locals, NAT44LBLocal{Addr: ap(a), Probability: p})
	}
	SortLBLocals(m.Locals)
	return m
}

func static(ext, local string) *NAT44StaticMapping {
	return &NAT44StaticMapping{External: ap(ext), Protocol: ProtoTCP, Local: ap(local), Out2InOnly: true, Label: "svc"}
}

func acl(name string, dstPorts ...uint16) *ACL {
	a := &ACL{Name: name}
	for _, p := range dstPorts {
		a.Rules = append(a.Rules, ACLRule{Action: ACLPermit, Src: pfx("0.0.0.0/0"), Dst: pfx("10.1.1.0/24"),
			Protocol: ProtoTCP, SrcPorts: AnyPort, DstPorts: SinglePort(p)})
	}
	return a
}

func binding(ifName string, dir ACLDirection, aclName string, prio int32) *ACLBinding {
	return &ACLBinding{Interface: ifName, Direction: dir, ACL: aclName, Priority: prio}
}

func cnat(vip string, lbType CNATLBType, dsts ...string) *CNATTranslation {
	t := &CNATTranslation{VIP: ap(vip), Protocol: ProtoTCP, LBType: lbType}
	for _, d := range dsts {
		t.Paths = append(t.Paths, CNATPath{Dst: ap(d)})
	}
	return t
}

var global = &NAT44Global{}
