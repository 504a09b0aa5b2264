package ipv6

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/vppsvc/vppsvc/vppcfg"
)

func TestClaimsOnlyIPv6Translations(t *testing.T) {
	claim := Claims()[Name]
	assert.True(t, claim(&vppcfg.CNATTranslation{VIP: netip.MustParseAddrPort("[fd00:96::1]:80")}))
	assert.False(t, claim(&vppcfg.CNATTranslation{VIP: netip.MustParseAddrPort("10.96.0.1:80")}), "IPv4 cnat is not ours")
	assert.False(t, claim(&vppcfg.NAT44Address{Addr: netip.MustParseAddr("10.0.0.1")}))
}

// TestClaimsHairpinOnlyFeatures: the feature nodes hairpin-only enables are
// claimed whatever the mode, so that a restart in another mode removes them;
// the NAT44 renderer's IPv4 nodes and cnat-snat are not this renderer's.
func TestClaimsHairpinOnlyFeatures(t *testing.T) {
	claim := Claims()[Name]
	features := 0
	for _, it := range hairpinOnlyItems(Node{FrontendIfs: []string{"uplink0", "tap1"}}, &Config{
		HairpinSNAT: HairpinSNATOnly, SNATAddress: netip.MustParseAddr("fd00:16::1"), UplinkInterfaces: []string{"uplink0"},
	}) {
		if f, ok := it.(*vppcfg.InterfaceFeature); ok {
			features++
			assert.True(t, claim(f), "%s", f)
		}
	}
	assert.Equal(t, 2, features, "cnat-input-ip6 and cnat-output-ip6 on tap1")
	for _, f := range []string{"cnat-input-ip4", "cnat-output-ip4", "cnat-snat-ip6"} {
		assert.False(t, claim(&vppcfg.InterfaceFeature{Interface: "tap1", Arc: "ip6-unicast", Feature: f}), f)
	}
}
