package vppnode

import (
	"net/netip"

	"go.fd.io/govpp/binapi/ip_types"
)

// Conversions between net/netip and binapi types.

func address(a netip.Addr) ip_types.Address {
	if a.Is4() {
		return ip_types.Address{Af: ip_types.ADDRESS_IP4, Un: ip_types.AddressUnionIP4(a.As4())}
	}
	return ip_types.Address{Af: ip_types.ADDRESS_IP6, Un: ip_types.AddressUnionIP6(a.As16())}
}

func fromAddress(a ip_types.Address) netip.Addr {
	if a.Af == ip_types.ADDRESS_IP6 {
		return netip.AddrFrom16(a.Un.GetIP6())
	}
	return netip.AddrFrom4(a.Un.GetIP4())
}

func prefix(p netip.Prefix) ip_types.Prefix {
	return ip_types.Prefix{Address: address(p.Addr()), Len: uint8(p.Bits())}
}

func fromPrefix(p ip_types.Prefix) netip.Prefix {
	return netip.PrefixFrom(fromAddress(p.Address), int(p.Len))
}
