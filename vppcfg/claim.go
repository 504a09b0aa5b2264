package vppcfg

import (
	"net/netip"
	"slices"

	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
)

// UntaggedClaim says, as data, which untagged VPP objects a renderer owns:
// VPP stores no tag on cnat translations, drop routes or interface features,
// so after an agent restart the layer cannot tell a stale one of ours from
// another control plane's unless its owner claims it (the engine's Options.Claims, vppcfg/engine). A
// renderer usually owns one IP family of the translations and routes and a
// few features; the kinds' descriptors say what family or feature each
// object is, so the renderer does not switch over item types.
type UntaggedClaim struct {
	// IPv6 claims the IPv6 objects; otherwise the IPv4 ones.
	IPv6 bool
	// Features are the interface features claimed, on every interface.
	Features []string
}

// Func is the claim as the engine's Options.Claims takes it.
func (c UntaggedClaim) Func() UntaggedClaimFunc {
	features := slices.Clone(c.Features)
	return func(it Item) bool {
		t := core.Of(it).Untagged(it)
		switch {
		case t.Feature != "":
			return slices.Contains(features, t.Feature)
		case t.Addr.IsValid():
			return t.Addr.Unmap().Is6() == c.IPv6
		}
		return false
	}
}

// untaggedTraits is what an UntaggedClaim matches an object by: the address
// whose family it serves, or the interface feature it is.
type untaggedTraits struct {
	addr    netip.Addr
	feature string
}
