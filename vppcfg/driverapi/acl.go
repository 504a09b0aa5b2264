package driverapi

import (
	"fmt"
	"slices"
	"strings"
)

// ACLAssignment is the full ACL lists of one interface, the value VPP takes
// in one message: what the layer sends (an OpUpdate of the interface's
// ACLListKey) and what a dump reports for each interface with ACLs
// (indexes only). VPP takes ACL bindings (vppcfg.ACLBinding) merged so,
// and the layer maps the lists back to bindings. Foreign ACLs (not created by this layer) keep their
// place in front of ours.
type ACLAssignment struct {
	Interface string
	// Input and Output are our ACL names in evaluation order.
	Input, Output []string
	// InputIndexes and OutputIndexes are the VPP indexes to send, foreign
	// ones first; filled in by the layer right before Apply.
	InputIndexes, OutputIndexes []uint32
}

// ACLListKey is the key of an interface's merged ACL lists. No binding has
// it: a binding's key names its ACL too.
func ACLListKey(ifName string) Key { return Key{Kind: KindACLBinding, Name: ifName} }

func (a *ACLAssignment) Key() Key             { return ACLListKey(a.Interface) }
func (a *ACLAssignment) Interfaces() []string { return []string{a.Interface} }
func (a *ACLAssignment) Equal(o Item) bool {
	other, ok := o.(*ACLAssignment)
	return ok && a.Interface == other.Interface && slices.Equal(a.Input, other.Input) && slices.Equal(a.Output, other.Output) &&
		slices.Equal(a.InputIndexes, other.InputIndexes) && slices.Equal(a.OutputIndexes, other.OutputIndexes)
}
func (a *ACLAssignment) String() string {
	if len(a.Input)+len(a.Output) == 0 && len(a.InputIndexes)+len(a.OutputIndexes) > 0 {
		return fmt.Sprintf("acl lists %s in=%v out=%v", a.Interface, a.InputIndexes, a.OutputIndexes)
	}
	return fmt.Sprintf("acl lists %s in=[%s] out=[%s]", a.Interface, strings.Join(a.Input, ","), strings.Join(a.Output, ","))
}
