package cnat

import (
	"net/netip"

	"github.com/vppsvc/vppsvc/renderer"
)

// Family is what sets a face of this package apart: the address family it
// serves, the renderer's name, and cnat's per-family feature nodes. The
// faces (renderer/ipv6, renderer/cnat4) each pass one of IPv4 and IPv6.
type Family struct {
	// Name is the renderer's name in logs and the prefix of its ACL names.
	Name string
	// IP is the address family the renderer serves.
	IP renderer.Family
	// Doc is the document describing the renderer, named in warnings.
	Doc string
	// SCTP is set when cnat translates SCTP in the family: the renderer
	// then renders SCTP ports as it does TCP and UDP ones; otherwise it
	// skips them with a warning.
	SCTP bool
}

// IPv6 is the IPv6 face (renderer/ipv6). VPP 25.10's cnat keys IPv6
// sessions for TCP, UDP and ICMPv6 only (cnat_session_make_key in
// cnat_node.h), so IPv6 SCTP is never translated.
var IPv6 = Family{Name: "ipv6", IP: renderer.IPv6, Doc: "docs/renderer-ipv6.md"}

// IPv4 is the IPv4 face (renderer/cnat4). cnat keys and translates IPv4
// SCTP (the SCTP cases of cnat_session_make_key and
// cnat_ip4_translate_sctp in cnat_node.h).
var IPv4 = Family{Name: "cnat4", IP: renderer.IPv4, Doc: "docs/renderer-cnat4.md", SCTP: true}

// is6 reports whether the face serves IPv6.
func (f Family) is6() bool { return f.IP == renderer.IPv6 }

// unspecified is the family's unspecified address.
func (f Family) unspecified() netip.Addr {
	if f.is6() {
		return netip.IPv6Unspecified()
	}
	return netip.IPv4Unspecified()
}

// suffix is the suffix of cnat's feature and arc names: "ip6" or "ip4".
func (f Family) suffix() string {
	if f.is6() {
		return "ip6"
	}
	return "ip4"
}

// InputFeature and OutputFeature are cnat's feature nodes of the
// hairpin-only mode for the family.
func (f Family) InputFeature() string  { return "cnat-input-" + f.suffix() }
func (f Family) OutputFeature() string { return "cnat-output-" + f.suffix() }

// inputArc and outputArc are the arcs those features run on.
func (f Family) inputArc() string  { return f.suffix() + "-unicast" }
func (f Family) outputArc() string { return f.suffix() + "-output" }

// Prefixes returns the prefixes of ps in the family, masked. An
// IPv4-mapped IPv6 prefix is in neither.
func (f Family) Prefixes(ps []netip.Prefix) []netip.Prefix {
	var out []netip.Prefix
	for _, p := range ps {
		a := p.Addr()
		if p.IsValid() && ((f.is6() && a.Is6() && !a.Is4In6()) || (!f.is6() && a.Is4())) {
			out = append(out, p.Masked())
		}
	}
	return out
}
