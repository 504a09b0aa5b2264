package govppdriver

import (
	"net/netip"

	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip_types"
)

// Conversions between net/netip (the layer's types) and binapi types. Items
// never carry binapi types; only this package builds or reads them.

// anyInterface is VPP's ~0: "no interface, use the literal address". The Go
// zero value 0 would mean local0, which never has an address, and leave a
// mapping silently pending forever.
const anyInterface = interface_types.InterfaceIndex(^uint32(0))

func ip4(a netip.Addr) ip_types.IP4Address {
	if !a.Is4() {
		return ip_types.IP4Address{}
	}
	return a.As4()
}

func fromIP4(a ip_types.IP4Address) netip.Addr { return netip.AddrFrom4(a) }

func ip6(a netip.Addr) ip_types.IP6Address {
	if !a.Is6() || a.Is4In6() {
		return ip_types.IP6Address{}
	}
	return a.As16()
}

func fromIP6(a ip_types.IP6Address) netip.Addr { return netip.AddrFrom16(a) }

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

// unspecified returns 0.0.0.0 or :: of a's family.
func unspecified(a netip.Addr) netip.Addr {
	if a.Is6() {
		return netip.IPv6Unspecified()
	}
	return netip.IPv4Unspecified()
}
