package model

import (
	"net/netip"
	"slices"
	"strings"
)

// IPAddresses is a set of IP addresses, kept sorted and free of duplicates so
// that equality, iteration and String are deterministic. The zero value is an
// empty set. Build one with NewIPAddresses; do not append to it directly.
type IPAddresses []netip.Addr

// NewIPAddresses returns the set of the given addresses; invalid addresses are
// dropped and IPv4-mapped IPv6 addresses are unmapped to IPv4.
func NewIPAddresses(addrs ...netip.Addr) IPAddresses {
	set := make(IPAddresses, 0, len(addrs))
	for _, a := range addrs {
		if a.IsValid() {
			set = append(set, a.Unmap())
		}
	}
	slices.SortFunc(set, netip.Addr.Compare)
	return slices.Compact(set)
}

// Has reports whether ip is in the set.
func (s IPAddresses) Has(ip netip.Addr) bool {
	_, found := slices.BinarySearchFunc(s, ip.Unmap(), netip.Addr.Compare)
	return found
}

// IPv4 returns the IPv4 members.
func (s IPAddresses) IPv4() IPAddresses { return s.filter(netip.Addr.Is4) }

// IPv6 returns the IPv6 members.
func (s IPAddresses) IPv6() IPAddresses { return s.filter(netip.Addr.Is6) }

func (s IPAddresses) filter(keep func(netip.Addr) bool) IPAddresses {
	var out IPAddresses
	for _, a := range s {
		if keep(a) {
			out = append(out, a)
		}
	}
	return out
}

// Union returns the set of addresses in s or in other.
func (s IPAddresses) Union(other IPAddresses) IPAddresses {
	return NewIPAddresses(append(slices.Clone(s), other...)...)
}

// Equal reports whether both sets hold the same addresses.
func (s IPAddresses) Equal(other IPAddresses) bool {
	return slices.Equal(s, other)
}

// String returns the addresses separated by commas, in order.
func (s IPAddresses) String() string {
	parts := make([]string, len(s))
	for i, a := range s {
		parts[i] = a.String()
	}
	return "{" + strings.Join(parts, ",") + "}"
}
