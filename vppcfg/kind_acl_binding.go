package vppcfg

import "fmt"

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

// aclBindingKey keys the binding of one ACL to one direction of one interface.
func aclBindingKey(ifName string, dir ACLDirection, aclName string) Key {
	return Key{Kind: KindACLBinding, Name: ifName + "/" + dir.String() + "/" + aclName}
}

func (b *ACLBinding) Key() Key             { return aclBindingKey(b.Interface, b.Direction, b.ACL) }
func (b *ACLBinding) kind() Kind           { return KindACLBinding }
func (b *ACLBinding) Interfaces() []string { return []string{b.Interface} }
func (b *ACLBinding) Equal(o Item) bool {
	other, ok := o.(*ACLBinding)
	return ok && *b == *other
}
func (b *ACLBinding) String() string {
	return fmt.Sprintf("acl binding %s %s %s priority %d", b.Interface, b.Direction, b.ACL, b.Priority)
}

// Bindings are not created one by one: the diff merges them into one ACL
// list per interface, and the dump's lists map back to them
// (kind_acl_binding_merge.go). The CLI printer folds them the same way.
// VPP keeps no priority: an adopted binding takes the desired one.
func init() {
	register(kindSpec[*ACLBinding]{
		Kind: KindACLBinding, Name: "acl-binding",
		Merge: bindingMerger, WaitsFor: bindingWaitsFor, OpText: bindingOpText, AdoptDesired: true,
		Validate: func(k Key, v *ACLBinding) error {
			if v.Interface == "" {
				return invalid(k, "Interface", "empty")
			}
			if v.ACL == "" {
				return invalid(k, "ACL", "empty")
			}
			if v.Direction != ACLInput && v.Direction != ACLOutput {
				return invalid(k, "Direction", "unknown direction %d", v.Direction)
			}
			return nil
		},
	})
}
