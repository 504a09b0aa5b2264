package vppcfg

import (
	"cmp"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// ErrInvalid marks an item the layer rejects; Commit wraps it with the key
// and the offending field, so renderers find the bug without reading VPP logs.
var ErrInvalid = errors.New("invalid item")

// ErrConflict marks a Put that collides with another owner's item.
var ErrConflict = errors.New("conflicting items")

func invalid(k Key, field, format string, args ...any) error {
	return fmt.Errorf("%w %s: %s: %s", ErrInvalid, k, field, fmt.Sprintf(format, args...))
}

// validateItem checks one item (of key k) for values VPP would reject, or would accept
// and then misbehave on (VPP 25.10 divides by zero on all-zero LB weights and
// aborts on a cnat translation without paths).
func validateItem(k Key, it Item) error {
	switch v := it.(type) {
	case *NAT44Global:
		return nil
	case *NAT44Address:
		return ip4(k, "Addr", v.Addr)
	case *NAT44Interface:
		if v.Interface == "" {
			return invalid(k, "Interface", "empty")
		}
		if v.Role < NAT44Inside || v.Role > NAT44Output {
			return invalid(k, "Role", "unknown role %d", v.Role)
		}
	case *NAT44StaticMapping:
		return validateStatic(k, v)
	case *NAT44IdentityMapping:
		if err := ip4(k, "Addr", v.Addr); err != nil {
			return err
		}
		if v.AddrOnly && (v.Port != 0 || v.Protocol != ProtoAny) {
			return invalid(k, "AddrOnly", "addr-only identity mapping with port %d protocol %s (both must be 0)", v.Port, v.Protocol)
		}
		if !v.AddrOnly {
			if err := natProto(k, v.Protocol); err != nil {
				return err
			}
		}
		return tagSafe(k, "Label", v.Label)
	case *NAT44LBMapping:
		return validateLB(k, v)
	case *CNATTranslation:
		return validateCNAT(k, v)
	case *DropRoute:
		if !v.Prefix.IsValid() || v.Prefix != v.Prefix.Masked() || v.Prefix.Addr().Is4In6() {
			return invalid(k, "Prefix", "%s is not a masked IPv4 or IPv6 prefix", v.Prefix)
		}
		if v.VRF == AnyVRF {
			return invalid(k, "VRF", "%d is VPP's \"any VRF\" marker, not a table", v.VRF)
		}
	case *CNATSnatConfig:
		if v.SnatIP4.IsValid() && !v.SnatIP4.Is4() {
			return invalid(k, "SnatIP4", "%s is not IPv4", v.SnatIP4)
		}
		if v.SnatIP6.IsValid() && !v.SnatIP6.Is6() {
			return invalid(k, "SnatIP6", "%s is not IPv6", v.SnatIP6)
		}
		if v.Policy > CNATSnatPolicyK8s {
			return invalid(k, "Policy", "unknown policy %d", v.Policy)
		}
		for i, p := range v.ExcludePrefixes {
			if err := prefix(k, fmt.Sprintf("ExcludePrefixes[%d]", i), p); err != nil {
				return err
			}
		}
	case *CNATSnatInterface:
		if v.Interface == "" {
			return invalid(k, "Interface", "empty")
		}
		if v.Table > CNATSnatHost {
			return invalid(k, "Table", "unknown table %d", v.Table)
		}
	case *InterfaceFeature:
		for field, s := range map[string]string{"Interface": v.Interface, "Arc": v.Arc, "Feature": v.Feature} {
			if s == "" || len(s) > MaxTagLen {
				return invalid(k, field, "must be 1 to %d bytes, got %q", MaxTagLen, s)
			}
		}
	case *ACL:
		return validateACL(k, v)
	case *ACLBinding:
		if v.Interface == "" {
			return invalid(k, "Interface", "empty")
		}
		if v.ACL == "" {
			return invalid(k, "ACL", "empty")
		}
		if v.Direction != ACLInput && v.Direction != ACLOutput {
			return invalid(k, "Direction", "unknown direction %d", v.Direction)
		}
	default:
		return fmt.Errorf("%w: unknown item type %T", ErrInvalid, it)
	}
	return nil
}

func validateStatic(k Key, v *NAT44StaticMapping) error {
	if err := ip4(k, "External", v.External.Addr()); err != nil {
		return err
	}
	if err := ip4(k, "Local", v.Local.Addr()); err != nil {
		return err
	}
	if v.AddrOnly {
		if v.External.Port() != 0 || v.Local.Port() != 0 || v.Protocol != ProtoAny {
			return invalid(k, "AddrOnly", "addr-only mapping with ports %d/%d protocol %s (all must be 0)",
				v.External.Port(), v.Local.Port(), v.Protocol)
		}
		if v.TwiceNAT != TwiceNATOff {
			return invalid(k, "TwiceNAT", "%s cannot be combined with AddrOnly (VPP rejects it)", v.TwiceNAT)
		}
	} else if err := natProto(k, v.Protocol); err != nil {
		return err
	}
	if v.TwiceNAT > TwiceNATSelf {
		return invalid(k, "TwiceNAT", "unknown mode %d", v.TwiceNAT)
	}
	if v.TwiceNATAddr.IsValid() && !v.TwiceNATAddr.Is4() {
		return invalid(k, "TwiceNATAddr", "%s is not IPv4", v.TwiceNATAddr)
	}
	return tagSafe(k, "Label", v.Label)
}

func validateLB(k Key, v *NAT44LBMapping) error {
	if err := ip4(k, "External", v.External.Addr()); err != nil {
		return err
	}
	if err := natProto(k, v.Protocol); err != nil {
		return err
	}
	if len(v.Locals) < 2 {
		return invalid(k, "Locals", "%d local(s); an LB mapping needs at least 2 (use a static mapping for one)", len(v.Locals))
	}
	total := 0
	for i, l := range v.Locals {
		if a := l.Addr.Addr(); !a.IsValid() || !a.Is4() {
			return ip4(k, fmt.Sprintf("Locals[%d].Addr", i), a)
		}
		total += int(l.Probability)
	}
	if i, ok := firstDuplicateLocal(v.Locals); ok {
		l := v.Locals[i]
		return invalid(k, fmt.Sprintf("Locals[%d]", i), "duplicate local %s vrf %d", l.Addr, l.VRF)
	}
	if total == 0 {
		return invalid(k, "Locals", "all probabilities are 0 (VPP would divide by zero)")
	}
	if total > MaxLBProbabilitySum {
		return invalid(k, "Locals", "probabilities sum to %d, over %d: VPP keeps the running sum in 8 bits, so it would draw backends from a wrapped range (or divide by zero)", total, MaxLBProbabilitySum)
	}
	if v.TwiceNAT > TwiceNATSelf {
		return invalid(k, "TwiceNAT", "unknown mode %d", v.TwiceNAT)
	}
	return tagSafe(k, "Label", v.Label)
}

func validateCNAT(k Key, v *CNATTranslation) error {
	if !v.VIP.Addr().IsValid() {
		return invalid(k, "VIP", "invalid address")
	}
	switch v.Protocol {
	case ProtoTCP, ProtoUDP, ProtoSCTP:
	default:
		return invalid(k, "Protocol", "%s not supported by cnat translations (tcp, udp, sctp)", v.Protocol)
	}
	if v.LBType > CNATLBMaglev {
		return invalid(k, "LBType", "unknown type %d", v.LBType)
	}
	if len(v.Paths) == 0 {
		return invalid(k, "Paths", "empty (VPP 25.10 aborts on a translation without paths)")
	}
	for i, p := range v.Paths {
		f := fmt.Sprintf("Paths[%d]", i)
		if !p.Dst.Addr().IsValid() || p.Dst.Addr().Is4() != v.VIP.Addr().Is4() {
			return invalid(k, f+".Dst", "%s is not an address of the VIP's family", p.Dst)
		}
		if p.Dst.Port() == 0 {
			return invalid(k, f+".Dst", "port 0 (cnat would rewrite the destination port to 0)")
		}
		if s := p.Src.Addr(); s.IsValid() && !s.IsUnspecified() && s.Is4() != v.VIP.Addr().Is4() {
			return invalid(k, f+".Src", "%s is not an address of the VIP's family", s)
		}
	}
	return nil
}

func validateACL(k Key, v *ACL) error {
	if v.Name == "" {
		return invalid(k, "Name", "empty")
	}
	if err := tagSafe(k, "Name", v.Name); err != nil {
		return err
	}
	for i, r := range v.Rules {
		f := fmt.Sprintf("Rules[%d]", i)
		if err := prefix(k, f+".Src", r.Src); err != nil {
			return err
		}
		if err := prefix(k, f+".Dst", r.Dst); err != nil {
			return err
		}
		if r.Src.Addr().Is4() != r.Dst.Addr().Is4() {
			return invalid(k, f, "source %s and destination %s are of different families", r.Src, r.Dst)
		}
		if r.Action > ACLPermitReflect {
			return invalid(k, f+".Action", "unknown action %d", r.Action)
		}
		if r.SrcPorts.First > r.SrcPorts.Last && r.SrcPorts != (PortRange{}) {
			return invalid(k, f+".SrcPorts", "first %d > last %d", r.SrcPorts.First, r.SrcPorts.Last)
		}
		if r.DstPorts.First > r.DstPorts.Last && r.DstPorts != (PortRange{}) {
			return invalid(k, f+".DstPorts", "first %d > last %d", r.DstPorts.First, r.DstPorts.Last)
		}
	}
	return nil
}

func ip4(k Key, field string, a netip.Addr) error {
	if !a.IsValid() || !a.Is4() {
		return invalid(k, field, "%s is not an IPv4 address (NAT44 is IPv4 only)", a)
	}
	return nil
}

func natProto(k Key, p Protocol) error {
	switch p {
	case ProtoTCP, ProtoUDP, ProtoICMP:
		return nil
	}
	return invalid(k, "Protocol", "%s not supported by NAT44 (tcp, udp, icmp)", p)
}

func prefix(k Key, field string, p netip.Prefix) error {
	if !p.IsValid() {
		return invalid(k, field, "invalid prefix")
	}
	if p.Masked() != p {
		return invalid(k, field, "host bits set in %s (VPP rejects it; use %s)", p, p.Masked())
	}
	return nil
}

func tagSafe(k Key, field, s string) error {
	if strings.ContainsRune(s, 0) {
		return invalid(k, field, "contains NUL")
	}
	return nil
}

// canonical returns the item with its lists in canonical order, copying it
// only when its order differs, so that equal configurations compare equal.
func canonical(it Item) Item {
	switch v := it.(type) {
	case *NAT44LBMapping:
		if !slices.IsSortedFunc(v.Locals, compareLocals) {
			c := *v
			c.Locals = slices.Clone(v.Locals)
			SortLBLocals(c.Locals)
			return &c
		}
	case *CNATTranslation:
		norm := false
		for _, p := range v.Paths {
			norm = norm || canonicalSrc(p.Src, v.VIP.Addr()) != p.Src
		}
		if norm || !slices.IsSortedFunc(v.Paths, comparePaths) {
			c := *v
			c.Paths = slices.Clone(v.Paths)
			for i := range c.Paths {
				c.Paths[i].Src = canonicalSrc(c.Paths[i].Src, v.VIP.Addr())
			}
			SortCNATPaths(c.Paths)
			return &c
		}
	case *ACL:
		// VPP stores port ranges as sent and "any" as 0-65535 (0-255 for
		// ICMP type and code); store them that way so dumps compare equal.
		var rules []ACLRule
		for i, r := range v.Rules {
			c := canonicalRule(r)
			if c != r && rules == nil {
				rules = slices.Clone(v.Rules)
			}
			if rules != nil {
				rules[i] = c
			}
		}
		if rules != nil {
			c := *v
			c.Rules = rules
			return &c
		}
	case *CNATSnatConfig:
		if !slices.IsSortedFunc(v.ExcludePrefixes, comparePrefixes) {
			c := *v
			c.ExcludePrefixes = slices.Clone(v.ExcludePrefixes)
			slices.SortFunc(c.ExcludePrefixes, comparePrefixes)
			return &c
		}
	}
	return it
}

// compareLocals orders locals by address, port and VRF (canonical order).
func compareLocals(a, b NAT44LBLocal) int {
	if c := a.Addr.Compare(b.Addr); c != 0 {
		return c
	}
	return cmp.Compare(a.VRF, b.VRF)
}

func comparePaths(a, b CNATPath) int {
	if c := a.Dst.Compare(b.Dst); c != 0 {
		return c
	}
	return a.Src.Compare(b.Src)
}

// comparePrefixes orders prefixes by address, then length.
func comparePrefixes(a, b netip.Prefix) int {
	if c := a.Addr().Compare(b.Addr()); c != 0 {
		return c
	}
	return a.Bits() - b.Bits()
}

func canonicalRule(r ACLRule) ACLRule {
	for _, pr := range []*PortRange{&r.SrcPorts, &r.DstPorts} {
		if *pr == (PortRange{}) {
			*pr = AnyPort
		}
		if r.Protocol == ProtoICMP || r.Protocol == ProtoICMP6 {
			pr.First, pr.Last = min(pr.First, 255), min(pr.Last, 255)
		}
	}
	return r
}

// canonicalSrc writes "no source NAT" one way: the zero AddrPort when no
// port is pinned, the unspecified address of the VIP's family otherwise.
func canonicalSrc(src netip.AddrPort, vip netip.Addr) netip.AddrPort {
	if src.Addr().IsValid() && !src.Addr().IsUnspecified() {
		return src
	}
	if src.Port() == 0 {
		return netip.AddrPort{}
	}
	if vip.Is6() {
		return netip.AddrPortFrom(netip.IPv6Unspecified(), src.Port())
	}
	return netip.AddrPortFrom(netip.IPv4Unspecified(), src.Port())
}

// firstDuplicateLocal returns the index of the first local whose address
// and VRF an earlier one has. Every endpoint change validates its mapping:
// a few locals are compared pairwise, without allocating.
func firstDuplicateLocal(ls []NAT44LBLocal) (int, bool) {
	if len(ls) > 32 {
		seen := make(map[localID]bool, len(ls))
		for i, l := range ls {
			if seen[idOf(l)] {
				return i, true
			}
			seen[idOf(l)] = true
		}
		return 0, false
	}
	for i := 1; i < len(ls); i++ {
		for j := range i {
			if idOf(ls[j]) == idOf(ls[i]) {
				return i, true
			}
		}
	}
	return 0, false
}
