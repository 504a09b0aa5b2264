package cnat

import "github.com/vppsvc/vppsvc/vppcfg"

// Claims are the VPP layer claims of the renderer of family f
// (engine.Options.Claims), keyed by its owner name.
//
// cnat stores no tag, so the VPP layer cannot tell after an agent restart
// which cnat objects are ours: without a claim it leaves those nobody
// desires any more in VPP forever. The renderer claims every cnat
// translation of its family on the VPP it runs on: vppsvc is that VPP's
// service proxy, and a translation nobody desires after this renderer's
// first Resync is stale. Do not share the VPP's cnat table of the family
// with another component (for IPv4: the NAT44 renderer, whose
// short-circuit translations the agent never runs beside this one).
//
// It also claims the family's cnat-input and cnat-output on every
// interface, in every hairpinSNAT mode: hairpin-only enables them on the
// internal frontend interfaces, and a restart with another mode, or with an
// interface that is no longer one of them, must take them away (the driver
// reads them back with feature_is_enabled). cnat's SNAT policy, addresses
// and POD table are not claimed: VPP cannot dump them, so a restarted agent
// never finds them to remove (docs/renderer-ipv6.md, "Hairpin").
func Claims(f Family) map[string]vppcfg.UntaggedClaimFunc {
	claim := vppcfg.UntaggedClaim{IPv6: f.is6(), Features: []string{f.InputFeature(), f.OutputFeature()}}
	return map[string]vppcfg.UntaggedClaimFunc{f.Name: claim.Func()}
}
