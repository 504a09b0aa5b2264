package vppcfg

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// NAT44Timeouts are the NAT44-ED session timeouts in seconds; a zero field
// means VPP's default (udp 300, tcp-established 7440, tcp-transitory 240, icmp 60).
type NAT44Timeouts struct {
	UDP, TCPEstablished, TCPTransitory, ICMP uint32
}

// NAT44Global enables the NAT44-ED plugin with its global settings. There is
// one per VPP; every other NAT44 item depends on it.
type NAT44Global struct {
	InsideVRF, OutsideVRF uint32
	// SessionLimit is the per-thread session limit; 0 means VPP's default (64512).
	SessionLimit uint32
	// Forwarding lets out2in packets without a session or mapping pass untranslated.
	Forwarding bool
	Timeouts   NAT44Timeouts
}

func (g *NAT44Global) Key() Key { return NAT44GlobalKey() }
func (g *NAT44Global) Equal(o Item) bool {
	other, ok := o.(*NAT44Global)
	return ok && *g == *other
}
func (g *NAT44Global) String() string {
	return fmt.Sprintf("nat44 enabled inside-vrf %d outside-vrf %d sessions %d forwarding %t timeouts %+v",
		g.InsideVRF, g.OutsideVRF, g.SessionLimit, g.Forwarding, g.Timeouts)
}

// NAT44Address is one address of the normal pool (dynamic SNAT, LB VIPs that
// are not out2in-only) or of the twice-NAT pool (source of twice-NAT sessions).
type NAT44Address struct {
	Addr     netip.Addr
	TwiceNAT bool
	// VRF restricts the address to one inside VRF; AnyVRF for all.
	VRF uint32
}

func (a *NAT44Address) Key() Key { return NAT44AddressKey(a.Addr, a.TwiceNAT) }
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

// NAT44Role is the NAT role of an interface. Inside and outside may both be
// set on one interface (two items); Output excludes the other two.
type NAT44Role uint8

const (
	NAT44Inside NAT44Role = iota + 1
	NAT44Outside
	NAT44Output
)

func (r NAT44Role) String() string {
	switch r {
	case NAT44Inside:
		return "in"
	case NAT44Outside:
		return "out"
	case NAT44Output:
		return "output"
	}
	return "role?"
}

// NAT44Interface gives an interface one NAT role.
type NAT44Interface struct {
	Interface string
	Role      NAT44Role
}

func (i *NAT44Interface) Key() Key             { return NAT44InterfaceKey(i.Interface, i.Role) }
func (i *NAT44Interface) Interfaces() []string { return []string{i.Interface} }
func (i *NAT44Interface) Equal(o Item) bool {
	other, ok := o.(*NAT44Interface)
	return ok && *i == *other
}
func (i *NAT44Interface) String() string {
	return fmt.Sprintf("nat44 interface %s %s", i.Interface, i.Role)
}

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

// NAT44StaticMapping maps an external address:port to one local address:port
// (VPP's static mapping). A load-balanced mapping needs at least two locals,
// so a one-backend service uses this kind.
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

// NAT44LBLocal is one backend of a load-balanced mapping.
type NAT44LBLocal struct {
	Addr netip.AddrPort
	// Probability is a relative weight (1–255); 0 never receives new
	// sessions. The probabilities of one mapping sum to at most
	// MaxLBProbabilitySum.
	Probability uint8
	VRF         uint32
}

func (l NAT44LBLocal) String() string {
	return fmt.Sprintf("%s:%d@vrf%d", l.Addr, l.Probability, l.VRF)
}

// NAT44LBMapping balances an external address:port over several locals. The
// reconciler changes the local set in place, one local at a time, so that
// sessions to unchanged locals survive.
type NAT44LBMapping struct {
	External netip.AddrPort
	Protocol Protocol
	// Locals must hold at least two entries (VPP rejects fewer); keep them
	// sorted with SortLBLocals so that equal sets compare equal.
	Locals []NAT44LBLocal
	// Affinity is the sticky time in seconds for a client IP; 0 disables it.
	Affinity   uint32
	Out2InOnly bool
	TwiceNAT   TwiceNATMode
	Label      string
}

func (m *NAT44LBMapping) Key() Key {
	return NAT44MappingKey(KindNAT44LBMapping, m.External, m.Protocol)
}
func (m *NAT44LBMapping) Equal(o Item) bool {
	other, ok := o.(*NAT44LBMapping)
	return ok && m.External == other.External && m.Protocol == other.Protocol &&
		slices.Equal(m.Locals, other.Locals) && m.Affinity == other.Affinity &&
		m.Out2InOnly == other.Out2InOnly && m.TwiceNAT == other.TwiceNAT && m.Label == other.Label
}
func (m *NAT44LBMapping) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "nat44 lb mapping %s %s ->", m.Protocol, m.External)
	for _, l := range m.Locals {
		b.WriteString(" " + l.String())
	}
	writeMappingFlags(&b, false, m.Out2InOnly, m.TwiceNAT)
	if m.Affinity != 0 {
		fmt.Fprintf(&b, " affinity %d", m.Affinity)
	}
	writeLabel(&b, m.Label)
	return b.String()
}

// SortLBLocals puts locals in canonical order (address, port, VRF).
func SortLBLocals(locals []NAT44LBLocal) { slices.SortFunc(locals, compareLocals) }

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

func (m *NAT44IdentityMapping) Key() Key {
	return NAT44IdentityMappingKey(m.Addr, m.Port, m.Protocol, m.VRF)
}
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

// MaxLBProbabilitySum bounds the sum of an LB mapping's probabilities: VPP
// 25.10 keeps each local's running sum (nat44_lb_addr_port_t.prefix) in a
// u8, so a larger sum wraps and the draw picks from the wrong range, and a
// sum of 256 divides by zero on the first packet.
const MaxLBProbabilitySum = 255
