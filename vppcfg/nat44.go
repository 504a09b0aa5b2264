package vppcfg

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
)

// What the NAT44 mapping kinds (static, identity, LB) share.

// TwiceNATMode says when a mapping also translates the source of sessions it
// creates from outside.
type TwiceNATMode uint8

const (
	// TwiceNATOff keeps the client's source address.
	TwiceNATOff TwiceNATMode = iota
	// TwiceNATAlways rewrites every client's source to a twice-NAT pool address.
	TwiceNATAlways
	// TwiceNATSelf rewrites the source only when the client is the chosen
	// backend itself (a pod reaching itself through its service).
	TwiceNATSelf
)

func (m TwiceNATMode) String() string {
	switch m {
	case TwiceNATAlways:
		return "twice-nat"
	case TwiceNATSelf:
		return "self-twice-nat"
	}
	return "no-twice-nat"
}

// NAT44MappingKey keys a static or load-balanced mapping by its external
// address, port and protocol: VPP's external key, shared by both kinds.
func NAT44MappingKey(kind Kind, external netip.AddrPort, proto Protocol) Key {
	return Key{Kind: kind, Name: addrPortProto(external, proto)}
}

// addrOnlyExternal is the external key of an address-only mapping: the
// whole address, every port and protocol.
func addrOnlyExternal(a netip.Addr) string { return a.String() + "/addr-only" }

func writeMappingFlags(b *strings.Builder, addrOnly, out2inOnly bool, twice TwiceNATMode) {
	if addrOnly {
		b.WriteString(" addr-only")
	}
	if out2inOnly {
		b.WriteString(" out2in-only")
	}
	if twice != TwiceNATOff {
		b.WriteString(" " + twice.String())
	}
}

func writeLabel(b *strings.Builder, label string) {
	if label != "" {
		b.WriteString(" label " + label)
	}
}

func vrfString(vrf uint32) string {
	if vrf == AnyVRF {
		return "any"
	}
	return fmt.Sprint(vrf)
}

func ip4(k Key, field string, a netip.Addr) error {
	if !a.IsValid() || !a.Is4() {
		return invalid(k, field, "%s is not an IPv4 address (NAT44 is IPv4 only)", a)
	}
	return nil
}

func natProto(k Key, p Protocol) error {
	switch p {
	case ProtoTCP, ProtoUDP, ProtoICMP:
		return nil
	}
	return invalid(k, "Protocol", "%s not supported by NAT44 (tcp, udp, icmp)", p)
}

// twiceNATCLI is the CLI flag of a twice-NAT mode.
func twiceNATCLI(m TwiceNATMode) string {
	switch m {
	case TwiceNATAlways:
		return " twice-nat"
	case TwiceNATSelf:
		return " self-twice-nat"
	}
	return ""
}

// writeTagCLI notes the label: the CLI cannot set the tag the API stores.
func writeTagCLI(b *strings.Builder, label string) {
	if label != "" {
		fmt.Fprintf(b, "  # api: tag for %s", label)
	}
}

// ExternalKey is VPP's external identity of a NAT44 mapping: static, LB and
// identity mappings share one namespace keyed by address, port and
// protocol, without VRF (or by address alone for address-only mappings),
// so VPP holds one mapping per external key, whatever its kind. ok is false
// for kinds outside that namespace. The layer rejects a transaction that
// would put two mappings on one external key, except identity mappings of
// one address in several VRFs.
func ExternalKey(it Item) (string, bool) {
	if it == nil {
		return "", false
	}
	return core.ExternalKeyOf(Key{}, it)
}
