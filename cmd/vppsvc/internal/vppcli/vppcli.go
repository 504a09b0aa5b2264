// Package vppcli writes VPP configuration items as the VPP CLI lines an
// operator would type to get the same configuration (VPP 25.10 syntax, from
// the CLI definitions in nat44_ed_cli.c, cnat_translation.c,
// cnat_snat_policy.c and acl.c). Where the CLI cannot express a field that the
// binary API sets, the line carries a "# api:" comment naming it.
package vppcli

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/vppsvc/vppsvc/vppcfg"
)

// Lines returns the CLI lines for items, in creation order (kind, then key).
// ACL bindings refer to ACLs by index; the indexes are those a fresh VPP
// assigns when the ACLs are created in the order printed. The bindings of
// one interface are folded into one `binary-api acl_interface_set_acl_list`
// line (the API call the VPP layer makes: the whole list of the interface,
// input then output, in priority order), because `set acl-plugin interface`
// binds one ACL per line. Empty filter shards hold a placeholder rule that
// VPP needs; they are introduced by one comment that says so.
func Lines(items []vppcfg.Item) []string {
	items = slices.Clone(items)
	slices.SortFunc(items, compareItems)
	aclIndex := map[string]int{}
	var out []string
	for _, it := range items {
		if acl, ok := it.(*vppcfg.ACL); ok {
			aclIndex[acl.Name] = len(aclIndex)
		}
	}
	placeholderNoted := false
	bindings := map[string][2][]string{}
	var bindingIfs []string
	for _, it := range items {
		if b, ok := it.(*vppcfg.ACLBinding); ok {
			lists, seen := bindings[b.Interface]
			if !seen {
				bindingIfs = append(bindingIfs, b.Interface)
			}
			d := 0
			if b.Direction == vppcfg.ACLOutput {
				d = 1
			}
			lists[d] = append(lists[d], aclRef(b.ACL, aclIndex))
			bindings[b.Interface] = lists
			continue
		}
		if acl, ok := it.(*vppcfg.ACL); ok && IsPlaceholder(acl) && !placeholderNoted {
			placeholderNoted = true
			out = append(out, placeholderNote(items)...)
		}
		out = append(out, lines(it)...)
	}
	slices.Sort(bindingIfs)
	for _, ifName := range bindingIfs {
		out = append(out, aclListLine(ifName, bindings[ifName]))
	}
	return out
}

// aclRef is an ACL's index, or a placeholder naming it when the ACL is not
// among the items.
func aclRef(name string, aclIndex map[string]int) string {
	if idx, ok := aclIndex[name]; ok {
		return fmt.Sprint(idx)
	}
	return "<index of " + name + ">"
}

// aclListLine sets the whole ACL list of one interface.
func aclListLine(ifName string, lists [2][]string) string {
	var b strings.Builder
	b.WriteString("binary-api acl_interface_set_acl_list " + ifName)
	for d, dir := range []string{"input", "output"} {
		if len(lists[d]) > 0 {
			b.WriteString(" " + dir + " " + strings.Join(lists[d], " "))
		}
	}
	return b.String()
}

// placeholderNote explains, once, the placeholder ACLs among items.
func placeholderNote(items []vppcfg.Item) []string {
	var names []string
	for _, it := range items {
		if acl, ok := it.(*vppcfg.ACL); ok && IsPlaceholder(acl) {
			names = append(names, acl.Name)
		}
	}
	return Wrap("# ", "#   ", fmt.Sprintf("%d empty filter shards have no rules. VPP denies everything on an ACL "+
		"without rules, so each holds one placeholder permit-nothing rule (docs/glossary.md#filter-shard): %s",
		len(names), nameRanges(names)), Width)
}

// compareItems orders items by key, except ACL bindings of the same
// interface and direction, which are ordered by priority (then ACL name).
func compareItems(a, b vppcfg.Item) int {
	ba, okA := a.(*vppcfg.ACLBinding)
	bb, okB := b.(*vppcfg.ACLBinding)
	if okA && okB && ba.Interface == bb.Interface && ba.Direction == bb.Direction {
		if c := cmp.Compare(ba.Priority, bb.Priority); c != 0 {
			return c
		}
		return cmp.Compare(ba.ACL, bb.ACL)
	}
	return a.Key().Compare(b.Key())
}

func lines(it vppcfg.Item) []string {
	switch v := it.(type) {
	case *vppcfg.NAT44Global:
		return nat44Global(v)
	case *vppcfg.NAT44Address:
		s := "nat44 add address " + v.Addr.String()
		if v.VRF != vppcfg.AnyVRF {
			s += fmt.Sprintf(" tenant-vrf %d", v.VRF)
		}
		if v.TwiceNAT {
			s += " twice-nat"
		}
		return []string{s}
	case *vppcfg.NAT44Interface:
		switch v.Role {
		case vppcfg.NAT44Inside:
			return []string{"set interface nat44 in " + v.Interface}
		case vppcfg.NAT44Outside:
			return []string{"set interface nat44 out " + v.Interface}
		default:
			return []string{"set interface nat44 out " + v.Interface + " output-feature"}
		}
	case *vppcfg.NAT44StaticMapping:
		return []string{staticMapping(v)}
	case *vppcfg.NAT44LBMapping:
		return []string{lbMapping(v)}
	case *vppcfg.NAT44IdentityMapping:
		s := "nat44 add identity mapping " + v.Addr.String()
		if !v.AddrOnly {
			s += fmt.Sprintf(" %s %d", v.Protocol, v.Port)
		}
		return []string{s + fmt.Sprintf(" vrf %d", v.VRF)}
	case *vppcfg.CNATSnatConfig:
		return cnatSnat(v)
	case *vppcfg.CNATSnatInterface:
		return []string{fmt.Sprintf("set cnat snat-policy if table %s %s", snatTable(v.Table), v.Interface)}
	case *vppcfg.InterfaceFeature:
		return []string{fmt.Sprintf("set interface feature %s %s arc %s", v.Interface, v.Feature, v.Arc)}
	case *vppcfg.CNATTranslation:
		return []string{cnatTranslation(v)}
	case *vppcfg.ACL:
		return []string{acl(v)}
	case *vppcfg.DropRoute:
		return []string{fmt.Sprintf("ip route add %s table %d via drop  # api: path preference %#x marks it as vppsvc's", v.Prefix, v.VRF, vppcfg.DropRoutePreference)}
	}
	return []string{"# no CLI equivalent: " + it.String()}
}

func nat44Global(g *vppcfg.NAT44Global) []string {
	s := "nat44 plugin enable"
	if g.SessionLimit != 0 {
		s += fmt.Sprintf(" sessions %d", g.SessionLimit)
	}
	s += fmt.Sprintf(" inside-vrf %d outside-vrf %d", g.InsideVRF, g.OutsideVRF)
	out := []string{s}
	if g.Forwarding {
		out = append(out, "nat44 forwarding enable")
	}
	t := g.Timeouts
	for _, kv := range []struct {
		name string
		val  uint32
	}{{"udp", t.UDP}, {"tcp-established", t.TCPEstablished}, {"tcp-transitory", t.TCPTransitory}, {"icmp", t.ICMP}} {
		if kv.val != 0 {
			out = append(out, fmt.Sprintf("set nat timeout %s %d", kv.name, kv.val))
		}
	}
	return out
}

func staticMapping(m *vppcfg.NAT44StaticMapping) string {
	var b strings.Builder
	b.WriteString("nat44 add static mapping ")
	if m.AddrOnly {
		fmt.Fprintf(&b, "local %s external %s", m.Local.Addr(), m.External.Addr())
	} else {
		fmt.Fprintf(&b, "%s local %s %d external %s %d", m.Protocol, m.Local.Addr(), m.Local.Port(), m.External.Addr(), m.External.Port())
	}
	fmt.Fprintf(&b, " vrf %d", m.VRF)
	b.WriteString(twiceNAT(m.TwiceNAT))
	if m.Out2InOnly {
		b.WriteString(" out2in-only")
	}
	if m.TwiceNATAddr.IsValid() {
		fmt.Fprintf(&b, " exact %s", m.TwiceNATAddr)
	}
	writeTag(&b, m.Label)
	return b.String()
}

func lbMapping(m *vppcfg.NAT44LBMapping) string {
	var b strings.Builder
	fmt.Fprintf(&b, "nat44 add load-balancing static mapping protocol %s external %s", m.Protocol, m.External)
	for _, l := range m.Locals {
		fmt.Fprintf(&b, " local %s vrf %d probability %d", l.Addr, l.VRF, l.Probability)
	}
	b.WriteString(twiceNAT(m.TwiceNAT))
	if m.Out2InOnly {
		b.WriteString(" out2in-only")
	}
	if m.Affinity != 0 {
		fmt.Fprintf(&b, " affinity %d", m.Affinity)
	}
	writeTag(&b, m.Label)
	return b.String()
}

func twiceNAT(m vppcfg.TwiceNATMode) string {
	switch m {
	case vppcfg.TwiceNATAlways:
		return " twice-nat"
	case vppcfg.TwiceNATSelf:
		return " self-twice-nat"
	}
	return ""
}

// writeTag notes the label: the CLI cannot set the tag the API stores.
func writeTag(b *strings.Builder, label string) {
	if label != "" {
		fmt.Fprintf(b, "  # api: tag for %s", label)
	}
}

func cnatSnat(c *vppcfg.CNATSnatConfig) []string {
	var addrs []string
	for _, a := range []netip.Addr{c.SnatIP4, c.SnatIP6} {
		if a.IsValid() {
			addrs = append(addrs, a.String())
		}
	}
	out := []string{"set cnat snat-policy addr " + strings.Join(addrs, " "), "set cnat snat-policy " + c.Policy.String()}
	for _, p := range c.ExcludePrefixes {
		out = append(out, "set cnat snat-policy prefix "+p.String())
	}
	return out
}

func snatTable(t vppcfg.CNATSnatTable) string {
	if t == vppcfg.CNATSnatPod {
		return "k8s" // the CLI's name for the pod table
	}
	return t.String()
}

func cnatTranslation(t *vppcfg.CNATTranslation) string {
	var b strings.Builder
	kind := "vip"
	if t.IsRealIP {
		kind = "real"
	}
	fmt.Fprintf(&b, "cnat translation add proto %s %s %s %d", t.Protocol, kind, t.VIP.Addr(), t.VIP.Port())
	for _, p := range t.Paths {
		b.WriteString(" to ")
		if src := p.Src.Addr(); src.IsValid() && !src.IsUnspecified() {
			fmt.Fprintf(&b, "%s %d", src, p.Src.Port())
		}
		fmt.Fprintf(&b, "->%s %d", p.Dst.Addr(), p.Dst.Port())
	}
	if t.LBType == vppcfg.CNATLBMaglev {
		b.WriteString(" maglev")
	}
	var api []string
	if t.AllocPort {
		api = append(api, "flags alloc-port")
	}
	if t.NoReturnSession {
		api = append(api, "flags no-return-session")
	}
	if t.FlowHash != 0 {
		api = append(api, fmt.Sprintf("flow-hash-config 0x%x", uint8(t.FlowHash)))
	}
	if len(api) > 0 {
		b.WriteString("  # api: " + strings.Join(api, ", "))
	}
	return b.String()
}

func acl(a *vppcfg.ACL) string {
	rules := make([]string, len(a.Rules))
	for i, r := range a.Rules {
		s := fmt.Sprintf("%s src %s dst %s", r.Action, r.Src, r.Dst)
		if r.Protocol != vppcfg.ProtoAny {
			s += fmt.Sprintf(" proto %d sport %s dport %s", uint8(r.Protocol), portRange(r.SrcPorts), portRange(r.DstPorts))
		}
		rules[i] = s
	}
	if len(rules) == 0 {
		return "# acl " + a.Name + " has no rules: VPP denies everything it is applied to"
	}
	s := "set acl-plugin acl " + strings.Join(rules, ", ") + " tag " + a.Name
	if IsPlaceholder(a) {
		s += "  # placeholder"
	}
	return s
}

func portRange(r vppcfg.PortRange) string {
	if r == (vppcfg.PortRange{}) {
		r = vppcfg.AnyPort
	}
	if r.First == r.Last {
		return fmt.Sprint(r.First)
	}
	return fmt.Sprintf("%d-%d", r.First, r.Last)
}
