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

func (a *ACL) Key() Key { return ACLKey(a.Name) }
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

// ACLDirection is the direction an ACL filters on an interface.
type ACLDirection uint8

const (
	ACLInput ACLDirection = iota + 1
	ACLOutput
)

func (d ACLDirection) String() string {
	if d == ACLOutput {
		return "output"
	}
	return "input"
}

// ACLBinding applies one ACL to one direction of one interface. VPP takes an
// interface's whole ACL list in one message, so the layer merges the bindings
// of an interface (from every owner) into one list ordered by Priority, then
// ACL name. Several renderers can thus filter on the same interface as long
// as each ACL only matches its own traffic and a shared lowest-priority ACL
// permits the rest.
type ACLBinding struct {
	Interface string
	Direction ACLDirection
	ACL       string
	Priority  int32
}

func (b *ACLBinding) Key() Key             { return ACLBindingKey(b.Interface, b.Direction, b.ACL) }
func (b *ACLBinding) Interfaces() []string { return []string{b.Interface} }
func (b *ACLBinding) Equal(o Item) bool {
	other, ok := o.(*ACLBinding)
	return ok && *b == *other
}
func (b *ACLBinding) String() string {
	return fmt.Sprintf("acl binding %s %s %s priority %d", b.Interface, b.Direction, b.ACL, b.Priority)
}
