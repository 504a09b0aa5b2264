package vppcfg

import (
	"fmt"
	"net/netip"
)

// NAT44Address is one address of the normal pool (dynamic SNAT, LB VIPs that
// are not out2in-only) or of the twice-NAT pool (source of twice-NAT sessions).
type NAT44Address struct {
	Addr     netip.Addr
	TwiceNAT bool
	// VRF restricts the address to one inside VRF; AnyVRF for all.
	VRF uint32
}

// nat44AddressKey keys a pool address; the normal and twice-NAT pools are
// separate in VPP, so the pool is part of the key.
func nat44AddressKey(addr netip.Addr, twiceNAT bool) Key {
	pool := "pool"
	if twiceNAT {
		pool = "twice-nat"
	}
	return Key{Kind: KindNAT44Address, Name: pool + "/" + addr.String()}
}

func (a *NAT44Address) Key() Key   { return nat44AddressKey(a.Addr, a.TwiceNAT) }
func (a *NAT44Address) kind() Kind { return KindNAT44Address }
func (a *NAT44Address) Equal(o Item) bool {
	other, ok := o.(*NAT44Address)
	return ok && *a == *other
}
func (a *NAT44Address) String() string {
	pool := "pool"
	if a.TwiceNAT {
		pool = "twice-nat"
	}
	return fmt.Sprintf("nat44 address %s %s vrf %s", pool, a.Addr, vrfString(a.VRF))
}

// A changed VRF re-adds the address (no in-place update).
func init() {
	register(kindSpec[*NAT44Address]{
		Kind: KindNAT44Address, Name: "nat44-address", Gate: KindNAT44Global,
		Validate: func(k Key, a *NAT44Address) error { return ip4(k, "Addr", a.Addr) },
		CLI: func(a *NAT44Address) []string {
			s := "nat44 add address " + a.Addr.String()
			if a.VRF != AnyVRF {
				s += fmt.Sprintf(" tenant-vrf %d", a.VRF)
			}
			if a.TwiceNAT {
				s += " twice-nat"
			}
			return []string{s}
		},
		Printable: func(a *NAT44Address, _ string) any {
			pool := "normal"
			if a.TwiceNAT {
				pool = "twice-nat"
			}
			return printableNAT44Address{Address: printableAddr(a.Addr), Pool: pool, VRF: vrfString(a.VRF)}
		},
	})
}

// printableNAT44Address is NAT44Address as the render document prints it.
type printableNAT44Address struct {
	Address string `json:"address"`
	Pool    string `json:"pool"`
	VRF     string `json:"vrf"`
}
