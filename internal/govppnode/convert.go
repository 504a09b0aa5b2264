package govppnode

import (
	"net/netip"

	"go.fd.io/govpp/binapi/ip_types"
)

// Address is a in binapi form, of a's family.
func Address(a netip.Addr) ip_types.Address {
	if a.Is4() {
		return ip_types.Address{Af: ip_types.ADDRESS_IP4, Un: ip_types.AddressUnionIP4(a.As4())}
	}
	return ip_types.Address{Af: ip_types.ADDRESS_IP6, Un: ip_types.AddressUnionIP6(a.As16())}
}

// FromAddress is a binapi address as a netip.Addr.
func FromAddress(a ip_types.Address) netip.Addr {
	if a.Af == ip_types.ADDRESS_IP6 {
		return netip.AddrFrom16(a.Un.GetIP6())
	}
	return netip.AddrFrom4(a.Un.GetIP4())
}

// Prefix is p in binapi form.
func Prefix(p netip.Prefix) ip_types.Prefix {
	return ip_types.Prefix{Address: Address(p.Addr()), Len: uint8(p.Bits())}
}

// FromPrefix is a binapi prefix as a netip.Prefix.
func FromPrefix(p ip_types.Prefix) netip.Prefix {
	return netip.PrefixFrom(FromAddress(p.Address), int(p.Len))
}

// AddressWithPrefix is p, an interface address with its prefix length, in
// binapi form.
func AddressWithPrefix(p netip.Prefix) ip_types.AddressWithPrefix {
	return ip_types.AddressWithPrefix(Prefix(p))
}
