package vppcfg

import (
	"fmt"
	"net/netip"
	"strings"
)

// NAT44StaticMapping maps an external address:port to one local address:port
// (VPP's static mapping). A frontend whose backends change is better served
// by a NAT44LBMapping, one local included: a static mapping cannot become
// one in place, so a backend change deletes it with its sessions, and each
// add registers the external address on every outside interface.
type NAT44StaticMapping struct {
	External netip.AddrPort
	Protocol Protocol
	Local    netip.AddrPort
	// VRF is the VRF of the local side.
	VRF uint32
	// AddrOnly maps the whole address for all protocols and ports (ports and
	// protocol must then be zero).
	AddrOnly bool
	// Out2InOnly creates sessions only from outside; it also lets one local be
	// the target of several mappings.
	Out2InOnly bool
	TwiceNAT   TwiceNATMode
	// TwiceNATAddr, when valid and in the twice-NAT pool, is the source used by
	// this mapping's twice-NAT sessions.
	TwiceNATAddr netip.Addr
	// Label names the owner object (for example a service) in the VPP tag.
	Label string
}

func (m *NAT44StaticMapping) Key() Key {
	return NAT44MappingKey(KindNAT44StaticMapping, m.External, m.Protocol)
}
func (m *NAT44StaticMapping) kind() Kind { return KindNAT44StaticMapping }
func (m *NAT44StaticMapping) Equal(o Item) bool {
	other, ok := o.(*NAT44StaticMapping)
	return ok && *m == *other
}
func (m *NAT44StaticMapping) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "nat44 static mapping %s %s -> %s vrf %d", m.Protocol, m.External, m.Local, m.VRF)
	writeMappingFlags(&b, m.AddrOnly, m.Out2InOnly, m.TwiceNAT)
	if m.TwiceNATAddr.IsValid() {
		fmt.Fprintf(&b, " twice-nat-addr %s", m.TwiceNATAddr)
	}
	writeLabel(&b, m.Label)
	return b.String()
}

// Any change re-creates the mapping. VPP's dump omits the twice-NAT pool address.
func init() {
	register(kindSpec[*NAT44StaticMapping]{
		Kind: KindNAT44StaticMapping, Name: "nat44-static-mapping", Gate: KindNAT44Global,
		Validate: validateStatic,
		Label:    func(m *NAT44StaticMapping) string { return m.Label },
		WithLabel: func(m *NAT44StaticMapping, label string) *NAT44StaticMapping {
			c := *m
			c.Label = label
			return &c
		},
		Unobservable: func(o, d *NAT44StaticMapping) *NAT44StaticMapping {
			c := *o
			c.TwiceNATAddr = d.TwiceNATAddr
			return &c
		},
		ExternalKey: func(k Key, m *NAT44StaticMapping) (string, bool) {
			switch {
			case m.AddrOnly:
				return addrOnlyExternal(m.External.Addr()), true
			case k.Kind == KindNAT44StaticMapping:
				return k.Name, true // the key is built from the external key
			}
			return addrPortProto(m.External, m.Protocol), true
		},
		CLI: func(m *NAT44StaticMapping) []string {
			var b strings.Builder
			b.WriteString("nat44 add static mapping ")
			if m.AddrOnly {
				fmt.Fprintf(&b, "local %s external %s", m.Local.Addr(), m.External.Addr())
			} else {
				fmt.Fprintf(&b, "%s local %s %d external %s %d", m.Protocol, m.Local.Addr(), m.Local.Port(), m.External.Addr(), m.External.Port())
			}
			fmt.Fprintf(&b, " vrf %d", m.VRF)
			b.WriteString(twiceNATCLI(m.TwiceNAT))
			if m.Out2InOnly {
				b.WriteString(" out2in-only")
			}
			if m.TwiceNATAddr.IsValid() {
				fmt.Fprintf(&b, " exact %s", m.TwiceNATAddr)
			}
			writeTagCLI(&b, m.Label)
			return []string{b.String()}
		},
		Printable: func(m *NAT44StaticMapping, owner string) any {
			return printableStaticMapping{Protocol: m.Protocol.String(), External: printableAddrPort(m.External),
				Local: printableAddrPort(m.Local), VRF: vrfString(m.VRF), AddrOnly: m.AddrOnly, Out2InOnly: m.Out2InOnly,
				TwiceNAT: m.TwiceNAT.String(), TwiceNATAddress: printableAddr(m.TwiceNATAddr),
				Label: m.Label, Tag: printableTag(owner, m.Label)}
		},
		Translation: func(m *NAT44StaticMapping) frontendTranslation {
			return frontendTranslation{Frontend: m.External, Protocol: m.Protocol, Backends: []netip.AddrPort{m.Local},
				Name: "static-mapping", Flags: mappingFlags(m.TwiceNAT, m.Out2InOnly)}
		},
	})
}

// printableStaticMapping is NAT44StaticMapping as the render document prints it.
type printableStaticMapping struct {
	Protocol        string `json:"protocol"`
	External        string `json:"external"`
	Local           string `json:"local"`
	VRF             string `json:"vrf"`
	AddrOnly        bool   `json:"addrOnly,omitempty"`
	Out2InOnly      bool   `json:"out2inOnly"`
	TwiceNAT        string `json:"twiceNAT"`
	TwiceNATAddress string `json:"twiceNATAddress,omitempty"`
	Label           string `json:"label,omitempty"`
	Tag             string `json:"tag,omitempty"`
}

// mappingFlags are the translation flags of a static or LB mapping.
func mappingFlags(t TwiceNATMode, out2inOnly bool) []string {
	var flags []string
	if t != TwiceNATOff {
		flags = append(flags, t.String())
	}
	if out2inOnly {
		flags = append(flags, "out2in-only")
	}
	return flags
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
