package cnat

import (
	"fmt"
	"net/netip"

	"go.fd.io/govpp/binapi/cnat"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip_types"

	"github.com/vppsvc/vppsvc/fakevpp/internal/apiaddr"
)

// Return values used by the cnat handlers (docs/fakevpp.md#pools-return-values-and-zero-values).
const (
	rvOK                   int32 = 0
	rvInvalidSwIfIndex     int32 = -2
	rvNoSuchEntry          int32 = -6
	rvInvalidValue         int32 = -7
	rvInvalidAddressFamily int32 = -97
	rvInvalidProtocol      int32 = -153
)

// endpoint is a decoded CnatEndpoint (cnat_endpoint_t).
//
// README.md#endpoints: with sw == ~0 the endpoint is the literal address and is always
// resolved; otherwise the literal address is ignored and the endpoint takes
// the interface's first address of its family once there is one.
type endpoint struct {
	addr     netip.Addr // the literal, or the resolved interface address
	sw       uint32
	ip6      bool // address family (from Addr.Af for literals, IfAf otherwise)
	port     uint16
	resolved bool // CNAT_EP_FLAG_RESOLVED
}

// decodeEndpoint is cnat_endpoint_decode (cnat_api.c). what names the field
// for violation details. The only error is -97 for an interface endpoint with
// an IfAf that is neither IPv4 nor IPv6.
func (p *Plugin) decodeEndpoint(in cnat.CnatEndpoint, what string) (endpoint, int32) {
	return p.decodeField(in, endpointField{name: what, path: -1})
}

// endpointField names an endpoint of a request in violation details ("Vip",
// "path[1].DstEp"). It is formatted only when a violation is recorded: every
// path of every translation update is decoded.
type endpointField struct {
	name string // the field, or within a path SrcEp or DstEp
	path int    // the index in Paths, or -1 outside them
}

func (f endpointField) String() string {
	if f.path < 0 {
		return f.name
	}
	return fmt.Sprintf("path[%d].%s", f.path, f.name)
}

// decodeField is decodeEndpoint for the field what.
func (p *Plugin) decodeField(in cnat.CnatEndpoint, what endpointField) (endpoint, int32) {
	ep := endpoint{sw: uint32(in.SwIfIndex), port: in.Port}
	if ep.sw == invalidIndex {
		a, ok := apiaddr.From(in.Addr)
		if !ok {
			// ip_address_decode2 leaves the family untouched for an unknown
			// Af: VPP then works on whatever was in memory.
			p.violate("cnat endpoint with an invalid address family",
				fmt.Sprintf("%s: Addr.Af=%d with SwIfIndex ~0; VPP leaves the address undefined, the fake uses 0.0.0.0", what, in.Addr.Af))
			a = netip.IPv4Unspecified()
		}
		ep.addr, ep.ip6 = a, a.Is6()
		return ep, rvOK
	}
	switch in.IfAf {
	case ip_types.ADDRESS_IP4:
	case ip_types.ADDRESS_IP6:
		ep.ip6 = true
	default:
		return ep, rvInvalidAddressFamily
	}
	if ep.sw == 0 {
		lit, _ := apiaddr.From(in.Addr)
		p.violate("cnat endpoint uses SwIfIndex 0 (local0)",
			fmt.Sprintf("%s: Addr %s is ignored and the endpoint never resolves; set SwIfIndex to ^uint32(0) for a literal address", what, lit))
	}
	ep.addr = unspecified(ep.ip6)
	return ep, rvOK
}

// resolve is cnat_resolve_ep: literals are resolved; an interface endpoint
// takes the interface's first address of its family if there is one. It never
// clears the resolved flag (VPP only sets it here), which matters for the SNAT
// addresses (see snat.go).
func (p *Plugin) resolve(ep *endpoint) {
	if ep.sw == invalidIndex {
		ep.resolved = true
		return
	}
	if a, ok := p.ifAddress(ep.sw, ep.ip6); ok {
		ep.addr, ep.resolved = a, true
	}
}

// addressChanged is the per-endpoint part of VPP's interface-address
// callbacks (cnat_if_addr_add_del_backend_cb and friends): an added address
// resolves an unresolved endpoint to exactly that address; a deleted address
// un-resolves the endpoint and re-resolves it to the first remaining address,
// if any. It reports whether the endpoint changed.
func (p *Plugin) addressChanged(ep *endpoint, sw uint32, addr netip.Addr, added bool) bool {
	if ep.sw == invalidIndex || ep.sw != sw || ep.ip6 != addr.Is6() {
		return false
	}
	if added {
		if ep.resolved {
			return false
		}
		ep.addr, ep.resolved = addr, true
		return true
	}
	ep.resolved = false
	if a, ok := p.ifAddress(sw, ep.ip6); ok {
		ep.addr, ep.resolved = a, true
	}
	return true
}

// encode is cnat_endpoint_encode: the address only when resolved (zero
// otherwise, Af 0 included), IfAf from the endpoint's family, SwIfIndex and
// Port as configured.
func (ep endpoint) encode() cnat.CnatEndpoint {
	out := cnat.CnatEndpoint{
		SwIfIndex: interface_types.InterfaceIndex(ep.sw),
		IfAf:      ip_types.ADDRESS_IP4,
		Port:      ep.port,
	}
	if ep.ip6 {
		out.IfAf = ip_types.ADDRESS_IP6
	}
	if ep.resolved {
		out.Addr = apiaddr.To(ep.addr)
	}
	return out
}

// String renders the endpoint for Dump and Steps: "10.0.0.1:80", "[fd00::1]:80",
// "sw5/ip4 (10.0.0.1):80" or "sw5/ip6 (unresolved):80".
func (ep endpoint) String() string {
	if ep.sw == invalidIndex {
		return netip.AddrPortFrom(ep.addr, ep.port).String()
	}
	fam := "ip4"
	if ep.ip6 {
		fam = "ip6"
	}
	a := "unresolved"
	if ep.resolved {
		a = ep.addr.String()
	}
	return fmt.Sprintf("sw%d/%s (%s):%d", ep.sw, fam, a, ep.port)
}

// InterfaceAddressChanged tells cnat that addr was added to (added=true) or
// removed from interface sw. Call it after the core has applied the change,
// as VPP runs its ip4/ip6 add_del_interface_address callbacks after updating
// the interface's address list; call it with added=false for each address an
// interface loses when it is deleted.
//
// It re-resolves, in ID order, every translation VIP and path endpoint and the
// SNAT addresses that name sw (README.md#endpoints: an endpoint resolves when
// the interface gets an address).
func (p *Plugin) InterfaceAddressChanged(sw uint32, addr netip.Addr, added bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	addr = addr.Unmap()
	if !addr.IsValid() || sw == invalidIndex {
		return
	}
	for _, t := range p.translations {
		if t == nil {
			continue
		}
		if t.vip.sw == sw && t.vip.ip6 == addr.Is6() {
			p.vipAddressChanged(t, addr, added)
		}
		changed := false
		for i := range t.paths {
			pa := &t.paths[i]
			c1 := p.addressChanged(&pa.src, sw, addr, added)
			c2 := p.addressChanged(&pa.dst, sw, addr, added)
			changed = changed || c1 || c2
		}
		if changed {
			t.restack()
			// cnat_if_addr_add_del_backend_cb tracks the path again
			// without releasing its earlier tracker.
			for i := range t.paths {
				if pa := &t.paths[i]; pa.active() && pa.route == nil {
					pa.route = p.trackRoute(pa.dst.addr)
				}
			}
		}
	}
	p.addressChanged(&p.snat.ip4, sw, addr, added)
	p.addressChanged(&p.snat.ip6, sw, addr, added)
}

func unspecified(ip6 bool) netip.Addr {
	if ip6 {
		return netip.IPv6Unspecified()
	}
	return netip.IPv4Unspecified()
}

// as46 converts a for use in a packet of the given family the way VPP's
// ip46_address_t does when a path mixes families: an IPv4 address becomes
// ::a.b.c.d in an IPv6 packet, an IPv6 address contributes its last four
// bytes to an IPv4 packet.
func as46(a netip.Addr, ip6 bool) netip.Addr {
	if a.Is6() == ip6 {
		return a
	}
	if ip6 {
		var b [16]byte
		v4 := a.As4()
		copy(b[12:], v4[:])
		return netip.AddrFrom16(b)
	}
	b := a.As16()
	return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
}
