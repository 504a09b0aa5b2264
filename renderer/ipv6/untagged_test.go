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
