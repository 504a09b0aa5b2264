package vppcfg

import (
	"cmp"
	"fmt"
	"net/netip"
	"strconv"
)

// Kind is the kind of a configuration item. The order of the constants is the
// order in which kinds are created (dependencies first); deletes run in
// reverse order.
type Kind uint8

const (
	KindNAT44Global Kind = iota + 1
	KindNAT44Address
	KindNAT44Interface
	KindNAT44StaticMapping
	KindNAT44IdentityMapping
	KindNAT44LBMapping
	KindCNATSnatConfig
	KindCNATSnatInterface
	KindInterfaceFeature
	KindCNATTranslation
	KindACL
	KindACLBinding
	KindDropRoute
)

var kindNames = map[Kind]string{
	KindNAT44Global:          "nat44-global",
	KindNAT44Address:         "nat44-address",
	KindNAT44Interface:       "nat44-interface",
	KindNAT44StaticMapping:   "nat44-static-mapping",
	KindNAT44IdentityMapping: "nat44-identity-mapping",
	KindNAT44LBMapping:       "nat44-lb-mapping",
	KindCNATSnatConfig:       "cnat-snat-config",
	KindCNATSnatInterface:    "cnat-snat-interface",
	KindInterfaceFeature:     "interface-feature",
	KindCNATTranslation:      "cnat-translation",
	KindACL:                  "acl",
	KindACLBinding:           "acl-binding",
	KindDropRoute:            "drop-route",
}

func (k Kind) String() string {
	if n, ok := kindNames[k]; ok {
		return n
	}
	return fmt.Sprintf("kind-%d", uint8(k))
}

// Key identifies one item. Keys are built only by the constructors in this
// package (one per kind), never by formatting strings at call sites.
type Key struct {
	Kind Kind
	Name string
}

func (k Key) String() string { return k.Kind.String() + "/" + k.Name }

// Compare orders keys by kind (creation order), then name.
func (k Key) Compare(o Key) int {
	if c := cmp.Compare(k.Kind, o.Kind); c != 0 {
		return c
	}
	return cmp.Compare(k.Name, o.Name)
}

// NAT44GlobalKey is the key of the single NAT44Global item.
func NAT44GlobalKey() Key { return Key{KindNAT44Global, "global"} }

// NAT44AddressKey keys a pool address; the normal and twice-NAT pools are
// separate in VPP, so the pool is part of the key.
func NAT44AddressKey(addr netip.Addr, twiceNAT bool) Key {
	pool := "pool"
	if twiceNAT {
		pool = "twice-nat"
	}
	return Key{KindNAT44Address, pool + "/" + addr.String()}
}

// NAT44InterfaceKey keys one NAT role of one interface.
func NAT44InterfaceKey(ifName string, role NAT44Role) Key {
	return Key{KindNAT44Interface, ifName + "/" + role.String()}
}

// NAT44MappingKey keys a static or load-balanced mapping by its external
// address, port and protocol: VPP's external key, shared by both kinds.
func NAT44MappingKey(kind Kind, external netip.AddrPort, proto Protocol) Key {
	return Key{kind, addrPortProto(external, proto)}
}

// addrPortProto returns "<addr>:<port>/<proto>" in one allocation: keys are
// built whenever an item's Key is asked for (several times per item in a
// commit), and building them by concatenation cost two allocations each, a
// tenth of a cold sync's allocations.
func addrPortProto(ap netip.AddrPort, proto Protocol) string {
	if !ap.Addr().IsValid() {
		// AppendTo writes nothing for it; keep String's "invalid AddrPort".
		return ap.String() + "/" + proto.String()
	}
	var buf [64]byte
	b := ap.AppendTo(buf[:0])
	b = append(b, '/')
	b = append(b, proto.String()...)
	return string(b)
}

// NAT44IdentityMappingKey keys an identity mapping by address, port, protocol and VRF.
func NAT44IdentityMappingKey(addr netip.Addr, port uint16, proto Protocol, vrf uint32) Key {
	return Key{KindNAT44IdentityMapping, fmt.Sprintf("%s/%s/vrf%d", netip.AddrPortFrom(addr, port), proto, vrf)}
}

// CNATTranslationKey keys a translation by VIP address, port and protocol, as cnat does.
func CNATTranslationKey(vip netip.AddrPort, proto Protocol) Key {
	return Key{KindCNATTranslation, addrPortProto(vip, proto)}
}

// CNATSnatConfigKey is the key of the single CNATSnatConfig item.
func CNATSnatConfigKey() Key { return Key{KindCNATSnatConfig, "global"} }

// CNATSnatInterfaceKey keys the membership of an interface in one SNAT policy table.
func CNATSnatInterfaceKey(ifName string, table CNATSnatTable) Key {
	return Key{KindCNATSnatInterface, ifName + "/" + table.String()}
}

// InterfaceFeatureKey keys a feature enabled on an interface's feature arc.
func InterfaceFeatureKey(ifName, arc, feature string) Key {
	return Key{KindInterfaceFeature, ifName + "/" + arc + "/" + feature}
}

// DropRouteKey keys a drop route by table and prefix.
func DropRouteKey(prefix netip.Prefix, vrf uint32) Key {
	// One allocation: a key is built on every diff of the service.
	var buf [64]byte
	b := append(buf[:0], "vrf"...)
	b = strconv.AppendUint(b, uint64(vrf), 10)
	b = append(b, '/')
	b = prefix.AppendTo(b)
	return Key{KindDropRoute, string(b)}
}

// ACLKey keys an ACL by its name, which is also its VPP tag.
func ACLKey(name string) Key { return Key{KindACL, name} }

// ACLBindingKey keys the binding of one ACL to one direction of one interface.
func ACLBindingKey(ifName string, dir ACLDirection, aclName string) Key {
	return Key{KindACLBinding, ifName + "/" + dir.String() + "/" + aclName}
}
