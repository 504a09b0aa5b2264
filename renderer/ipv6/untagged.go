package ipv6

import "github.com/vppsvc/vppsvc/vppcfg"

// Claims are the VPP layer claims of this renderer (engine.Options.Claims),
// keyed by its owner name.
//
// cnat stores no tag, so the VPP layer cannot tell after an agent restart
// which cnat objects are ours: without a claim it leaves those nobody
// desires any more in VPP forever. The IPv6 renderer claims every IPv6 cnat
// translation of the VPP it runs on: vppsvc is that VPP's service proxy, and
// a translation nobody desires after this renderer's first Resync is stale.
// Do not share the VPP's IPv6 cnat table with another component.
//
// It also claims cnat-input-ip6 and cnat-output-ip6 on every interface, in
// every hairpinSNAT mode: hairpin-only enables them on the internal frontend
// interfaces, and a restart with another mode, or with an interface that is
// no longer one of them, must take them away (the driver reads them back
// with feature_is_enabled). cnat's SNAT policy, addresses and POD table are
// not claimed: VPP cannot dump them, so a restarted agent never finds them
// to remove (docs/renderer-ipv6.md, "Hairpin").
func Claims() map[string]vppcfg.UntaggedClaimFunc {
	claim := vppcfg.UntaggedClaim{IPv6: true, Features: []string{cnatInputFeature6, cnatOutputFeature6}}
	return map[string]vppcfg.UntaggedClaimFunc{Name: claim.Func()}
}
