// Package acllists is the own state of vppcfg's merged ACL binding kind
// (kind_acl_binding_merge.go): the ACL lists VPP holds per interface. The
// engine keeps it for the kind as an opaque core.MergedState and never
// looks inside; it is a package of its own so that the engine's tests can
// build one.
package acllists

// Lists are the ACL lists per interface: Front are the foreign ACL indexes
// bound per interface, kept in front of ours; Order are our ACLs per
// interface, in VPP order.
type Lists struct {
	Front map[string]Indexes
	Order map[string]Names
}

// New returns empty lists.
func New() *Lists {
	return &Lists{Front: map[string]Indexes{}, Order: map[string]Names{}}
}

// ForgetInterface drops the lists of a deleted interface
// (core.MergedState).
func (l *Lists) ForgetInterface(ifName string) {
	delete(l.Front, ifName)
	delete(l.Order, ifName)
}

// Indexes are the ACL indexes bound to one interface.
type Indexes struct {
	Input, Output []uint32
}

// Names are the names of our ACLs bound to one interface, in VPP order.
type Names struct {
	Input, Output []string
}
