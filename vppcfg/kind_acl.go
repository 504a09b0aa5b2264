package vppcfg

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// ACLAction is what a matching rule does.
type ACLAction uint8

const (
	ACLDeny ACLAction = iota
	ACLPermit
	// ACLPermitReflect permits and creates a session that lets replies through.
	ACLPermitReflect
)

func (a ACLAction) String() string {
	switch a {
	case ACLPermit:
		return "permit"
	case ACLPermitReflect:
		return "permit+reflect"
	}
	return "deny"
}

// PortRange is an inclusive port range; the zero value means any port. For
// ICMP the source range is the type and the destination range the code.
type PortRange struct{ First, Last uint16 }

// AnyPort matches every port.
var AnyPort = PortRange{0, 65535}

// SinglePort matches one port.
func SinglePort(p uint16) PortRange { return PortRange{p, p} }

func (r PortRange) String() string {
	switch {
	case r == PortRange{} || r == AnyPort:
		return "any"
	case r.First == r.Last:
		return fmt.Sprint(r.First)
	}
	return fmt.Sprintf("%d-%d", r.First, r.Last)
}

// ACLRule is one rule; source and destination must be of the same family.
type ACLRule struct {
	Action   ACLAction
	Src, Dst netip.Prefix
	// Protocol 0 matches any L4 protocol (ports are then ignored).
	Protocol Protocol
	SrcPorts PortRange
	DstPorts PortRange
}

func (r ACLRule) String() string {
	s := fmt.Sprintf("%s src %s dst %s proto %s", r.Action, r.Src, r.Dst, r.Protocol)
	if r.Protocol != ProtoAny {
		s += fmt.Sprintf(" sport %s dport %s", r.SrcPorts, r.DstPorts)
	}
	return s
}

// ACL is a named, ordered rule list; first match wins and a packet that
// matches no rule of an interface's ACLs is denied. The name is stored as the
// ACL's VPP tag and must be unique. Changing the rules replaces them in place.
type ACL struct {
	Name  string
	Rules []ACLRule
}

// ACLKey keys an ACL by its name, which is also its VPP tag.
func ACLKey(name string) Key { return Key{Kind: KindACL, Name: name} }

func (a *ACL) Key() Key   { return ACLKey(a.Name) }
func (a *ACL) kind() Kind { return KindACL }
func (a *ACL) Equal(o Item) bool {
	other, ok := o.(*ACL)
	return ok && a.Name == other.Name && slices.Equal(a.Rules, other.Rules)
}
func (a *ACL) String() string {
	rules := make([]string, len(a.Rules))
	for i, r := range a.Rules {
		rules[i] = r.String()
	}
	return fmt.Sprintf("acl %s [%s]", a.Name, strings.Join(rules, "; "))
}

// The rules change in place (ACLAddReplace keeps the index and sessions).
// The name is the label of the VPP tag; VPP identifies an ACL by index,
// which the layer learns from the dump or the create reply.
func init() {
	register(kindSpec[*ACL]{
		Kind: KindACL, Name: "acl", KeyedByLabel: true, Remerge: true,
		Validate:      validateACL,
		Canonical:     canonicalACL,
		NeedsRecreate: func(_, _ *ACL) bool { return false },
		Label:         func(a *ACL) string { return a.Name },
		WithLabel: func(a *ACL, label string) *ACL {
			c := *a
			c.Name = label
			return &c
		},
		CLI:       aclCLI,
		Printable: aclPrintable,
	})
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

// canonicalACL writes port ranges as VPP stores them: "any" as 0-65535
// (0-255 for ICMP type and code), so that dumps compare equal.
func canonicalACL(v *ACL) *ACL {
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
	if rules == nil {
		return v
	}
	c := *v
	c.Rules = rules
	return &c
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

// aclCLI is one `set acl-plugin acl` line; an ACL without rules has none
// (VPP would deny everything it is applied to).
func aclCLI(a *ACL) []string {
	rules := make([]string, len(a.Rules))
	for i, r := range a.Rules {
		s := fmt.Sprintf("%s src %s dst %s", r.Action, r.Src, r.Dst)
		if r.Protocol != ProtoAny {
			s += fmt.Sprintf(" proto %d sport %s dport %s", uint8(r.Protocol), portRangeCLI(r.SrcPorts), portRangeCLI(r.DstPorts))
		}
		rules[i] = s
	}
	if len(rules) == 0 {
		return []string{"# acl " + a.Name + " has no rules: VPP denies everything it is applied to"}
	}
	return []string{"set acl-plugin acl " + strings.Join(rules, ", ") + " tag " + a.Name}
}

func portRangeCLI(r PortRange) string {
	if r == (PortRange{}) {
		r = AnyPort
	}
	if r.First == r.Last {
		return fmt.Sprint(r.First)
	}
	return fmt.Sprintf("%d-%d", r.First, r.Last)
}

// printableACL is ACL as the render document prints it.
type printableACL struct {
	Name string `json:"name"`
	Tag  string `json:"tag,omitempty"`
	// Rules are the ACL's rules; empty for a placeholder.
	Rules []printableACLRule `json:"rules"`
	// Placeholder is set on an empty filter shard: VPP holds one
	// permit-nothing rule in it, because an ACL with no rules denies
	// everything.
	Placeholder bool `json:"placeholder,omitempty"`
}

// printableACLRule leaves the ports out when the rule matches any protocol.
type printableACLRule struct {
	Action      string `json:"action"`
	Source      string `json:"source"`
	Destination string `json:"destination"`
	Protocol    string `json:"protocol"`
	SourcePorts string `json:"sourcePorts,omitempty"`
	DestPorts   string `json:"destinationPorts,omitempty"`
}

func aclPrintable(a *ACL, owner string) any {
	p := printableACL{Name: a.Name, Tag: printableTag(owner, a.Name), Rules: []printableACLRule{}}
	if a.IsPlaceholder() {
		p.Placeholder = true
		return p
	}
	for _, r := range a.Rules {
		pr := printableACLRule{Action: r.Action.String(), Source: r.Src.String(), Destination: r.Dst.String(), Protocol: r.Protocol.String()}
		if r.Protocol != ProtoAny {
			pr.SourcePorts, pr.DestPorts = r.SrcPorts.String(), r.DstPorts.String()
		}
		p.Rules = append(p.Rules, pr)
	}
	return p
}

// PlaceholderRule is the one rule of an ACL that must hold no rule: VPP
// denies everything on an ACL without rules, so an empty filter shard holds
// this instead. It permits TCP from and to the unspecified address of the
// family (ip6), which no packet carries, so it matches nothing.
func PlaceholderRule(ip6 bool) ACLRule {
	none := netip.IPv4Unspecified()
	if ip6 {
		none = netip.IPv6Unspecified()
	}
	p := netip.PrefixFrom(none, none.BitLen())
	return ACLRule{Action: ACLPermit, Src: p, Dst: p, Protocol: ProtoTCP, SrcPorts: AnyPort, DstPorts: AnyPort}
}

// IsPlaceholder reports whether the ACL holds only a PlaceholderRule: an
// empty filter shard.
func (a *ACL) IsPlaceholder() bool {
	return len(a.Rules) == 1 && (a.Rules[0] == PlaceholderRule(false) || a.Rules[0] == PlaceholderRule(true))
}
