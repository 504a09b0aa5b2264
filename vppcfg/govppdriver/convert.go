package govppdriver

import (
	"net/netip"

	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip_types"
)

// Conversions between net/netip (the layer's types) and binapi types, beside
// those of package govppnode. Items never carry binapi types; only this
// package builds or reads them.

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

// unspecified returns 0.0.0.0 or :: of a's family.
func unspecified(a netip.Addr) netip.Addr {
	if a.Is6() {
		return netip.IPv6Unspecified()
	}
	return netip.IPv4Unspecified()
}
