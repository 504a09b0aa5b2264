// Package apiaddr converts between VPP's binary-API addresses and
// net/netip, for the fakevpp core and its self-contained plugin engines,
// which cannot import each other.
package apiaddr

import (
	"net/netip"

	"go.fd.io/govpp/binapi/ip_types"
)

// From converts a binapi address; false for an unknown family.
func From(a ip_types.Address) (netip.Addr, bool) {
	switch a.Af {
	case ip_types.ADDRESS_IP4:
		return netip.AddrFrom4(a.Un.GetIP4()), true
	case ip_types.ADDRESS_IP6:
		return netip.AddrFrom16(a.Un.GetIP6()), true
	}
	return netip.Addr{}, false
}

// To converts to a binapi address of a's family.
func To(a netip.Addr) ip_types.Address {
	if a.Is4() {
		return ip_types.Address{Af: ip_types.ADDRESS_IP4, Un: ip_types.AddressUnionIP4(a.As4())}
	}
	return ip_types.Address{Af: ip_types.ADDRESS_IP6, Un: ip_types.AddressUnionIP6(a.As16())}
}
