package ipv6

import "github.com/vppsvc/vppsvc/vppcfg"

// Claims are the VPP layer claims of this renderer (vppcfg.Options.Claims),
// keyed by its owner name.
//
// cnat stores no tag, so the VPP layer cannot tell after an agent restart
// which cnat translations are ours: without a claim it leaves those of
// services deleted while the agent was down in VPP forever. The IPv6
// renderer claims every IPv6 cnat translation of the VPP it runs on: vppsvc
// is that VPP's service proxy, and a translation nobody desires after this
// renderer's first Resync is stale. Do not share the VPP's IPv6 cnat table
// with another component.
func Claims() map[string]vppcfg.ClaimFunc {
	return map[string]vppcfg.ClaimFunc{Name: claimsUntagged}
}

func claimsUntagged(it vppcfg.Item) bool {
	switch v := it.(type) {
	case *vppcfg.CNATTranslation:
		return v.VIP.Addr().Is6()
	case *vppcfg.DropRoute:
		return v.Prefix.Addr().Is6()
	}
	return false
}
