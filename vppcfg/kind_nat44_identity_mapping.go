package vppcfg

import (
	"fmt"
	"net/netip"
	"strings"
)

// NAT44IdentityMapping exempts an address (and optionally one port) from
// translation: matching traffic passes untranslated and creates no session.
type NAT44IdentityMapping struct {
	Addr     netip.Addr
	Port     uint16
	Protocol Protocol
	AddrOnly bool
	VRF      uint32
	Label    string
}

// nat44IdentityMappingKey keys an identity mapping by address, port, protocol and VRF.
func nat44IdentityMappingKey(addr netip.Addr, port uint16, proto Protocol, vrf uint32) Key {
	return Key{Kind: KindNAT44IdentityMapping, Name: fmt.Sprintf("%s/%s/vrf%d", netip.AddrPortFrom(addr, port), proto, vrf)}
}

func (m *NAT44IdentityMapping) Key() Key {
	return nat44IdentityMappingKey(m.Addr, m.Port, m.Protocol, m.VRF)
}
func (m *NAT44IdentityMapping) kind() Kind { return KindNAT44IdentityMapping }
func (m *NAT44IdentityMapping) Equal(o Item) bool {
	other, ok := o.(*NAT44IdentityMapping)
	return ok && *m == *other
}
func (m *NAT44IdentityMapping) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "nat44 identity mapping %s %s vrf %d", m.Protocol, netip.AddrPortFrom(m.Addr, m.Port), m.VRF)
	if m.AddrOnly {
		b.WriteString(" addr-only")
	}
	writeLabel(&b, m.Label)
	return b.String()
}

// Any change re-creates the mapping. Its external key has no VRF, yet
// identity mappings of one address in several VRFs coexist in VPP.
func init() {
	register(kindSpec[*NAT44IdentityMapping]{
		Kind: KindNAT44IdentityMapping, Name: "nat44-identity-mapping", Gate: KindNAT44Global, ShareExternal: true,
		Validate: func(k Key, v *NAT44IdentityMapping) error {
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
		},
		Label: func(m *NAT44IdentityMapping) string { return m.Label },
		WithLabel: func(m *NAT44IdentityMapping, label string) *NAT44IdentityMapping {
			c := *m
			c.Label = label
			return &c
		},
		ExternalKey: func(_ Key, m *NAT44IdentityMapping) (string, bool) {
			if m.AddrOnly {
				return addrOnlyExternal(m.Addr), true
			}
			return addrPortProto(netip.AddrPortFrom(m.Addr, m.Port), m.Protocol), true
		},
		CLI: func(m *NAT44IdentityMapping) []string {
			s := "nat44 add identity mapping " + m.Addr.String()
			if !m.AddrOnly {
				s += fmt.Sprintf(" %s %d", m.Protocol, m.Port)
			}
			return []string{s + fmt.Sprintf(" vrf %d", m.VRF)}
		},
		Printable: func(m *NAT44IdentityMapping, owner string) any {
			return printableIdentityMapping{Protocol: m.Protocol.String(), Address: printableAddr(m.Addr), Port: m.Port,
				AddrOnly: m.AddrOnly, VRF: vrfString(m.VRF), Label: m.Label, Tag: printableTag(owner, m.Label)}
		},
	})
}

// printableIdentityMapping is NAT44IdentityMapping as the render document
// prints it.
type printableIdentityMapping struct {
	Protocol string `json:"protocol"`
	Address  string `json:"address"`
	Port     uint16 `json:"port,omitempty"`
	AddrOnly bool   `json:"addrOnly,omitempty"`
	VRF      string `json:"vrf"`
	Label    string `json:"label,omitempty"`
	Tag      string `json:"tag,omitempty"`
}
