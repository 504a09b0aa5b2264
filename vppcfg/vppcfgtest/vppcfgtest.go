// Package vppcfgtest is what tests and test doubles of the VPP layer need
// of it and renderers do not: what Commit rejects (Validate, ValidateSet),
// what VPP requires of a whole desired state (SharedSetting, IsNAT44), the
// VPP tags the engine writes (Tag, ParseTag), and the keys of items that
// renderers only reach through their items (ACLBindingKey and the like).
// Package renderer/renderertest's client and invariants are built on it.
package vppcfgtest

import (
	"net/netip"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
)

// Validate checks one item as Commit does: an error wrapping
// vppcfg.ErrInvalid names the key and the field VPP would reject, or would
// accept and then misbehave on (VPP 25.10 divides by zero on all-zero LB
// weights and aborts on a cnat translation without paths).
func Validate(it vppcfg.Item) error { return core.Validate(it) }

// ValidateSet checks one owner's whole desired set as Commit checks a
// transaction: the owner name, every item (Validate), and the items VPP
// cannot hold together (one mapping per external key, an output-feature
// interface that is also inside or outside). Of items with one key the
// last counts, as in a transaction, but each is validated. Test doubles of
// vppcfg.Client call it so that they reject what the layer rejects.
func ValidateSet(owner string, items []vppcfg.Item) error { return core.ValidateSet(owner, items) }

// SharedSetting is the setting VPP keeps once for a group of objects, the
// one the group's first object brought (cnat: whether a VIP address is a
// real IP, for all its ports): items of one group must agree on its value,
// or VPP silently keeps another one's. ok is false for kinds without one.
func SharedSetting(it vppcfg.Item) (group, value string, ok bool) { return core.SharedSetting(it) }

// IsNAT44 reports whether items of kind k belong to the NAT44 plugin
// (vppcfg.KindNAT44Global included): the others wait for the NAT44Global
// item, and disabling NAT44 removes them from VPP.
func IsNAT44(k vppcfg.Kind) bool {
	return k == vppcfg.KindNAT44Global || core.Describe(k).Gate == vppcfg.KindNAT44Global
}

// Tag returns the VPP tag the engine writes for an item of owner with the
// given label.
func Tag(owner, label string) string { return core.Tag(owner, label) }

// ParseTag splits a tag the engine wrote into owner and label; ok is false
// for tags it did not write.
func ParseTag(tag string) (owner, label string, ok bool) { return core.ParseTag(tag) }

// ACLBindingKey is the key of the binding of one ACL to one direction of
// one interface.
func ACLBindingKey(ifName string, dir vppcfg.ACLDirection, aclName string) vppcfg.Key {
	return (&vppcfg.ACLBinding{Interface: ifName, Direction: dir, ACL: aclName}).Key()
}

// CNATTranslationKey is the key of the translation of a VIP and protocol.
func CNATTranslationKey(vip netip.AddrPort, proto vppcfg.Protocol) vppcfg.Key {
	return (&vppcfg.CNATTranslation{VIP: vip, Protocol: proto}).Key()
}

// DropRouteKey is the key of a drop route.
func DropRouteKey(prefix netip.Prefix, vrf uint32) vppcfg.Key {
	return (&vppcfg.DropRoute{Prefix: prefix, VRF: vrf}).Key()
}

// NAT44InterfaceKey is the key of one NAT role of one interface.
func NAT44InterfaceKey(ifName string, role vppcfg.NAT44Role) vppcfg.Key {
	return (&vppcfg.NAT44Interface{Interface: ifName, Role: role}).Key()
}

// NAT44IdentityMappingKey is the key of an identity mapping.
func NAT44IdentityMappingKey(addr netip.Addr, port uint16, proto vppcfg.Protocol, vrf uint32) vppcfg.Key {
	return (&vppcfg.NAT44IdentityMapping{Addr: addr, Port: port, Protocol: proto, VRF: vrf}).Key()
}
