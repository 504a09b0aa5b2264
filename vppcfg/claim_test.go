package vppcfg

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestUntaggedClaim: a claim takes the untagged objects of its family and
// its features, nothing tagged, and nothing of another family or feature.
func TestUntaggedClaim(t *testing.T) {
	v4 := UntaggedClaim{Features: []string{"cnat-input-ip4"}}.Func()
	v6 := UntaggedClaim{IPv6: true, Features: []string{"cnat-input-ip6", "cnat-output-ip6"}}.Func()
	tr := func(vip string) Item {
		return &CNATTranslation{VIP: netip.MustParseAddrPort(vip), Protocol: ProtoTCP}
	}
	cases := []struct {
		name   string
		item   Item
		v4, v6 bool
	}{
		{"IPv4 translation", tr("10.96.0.1:80"), true, false},
		{"IPv6 translation", tr("[fd00::1]:80"), false, true},
		{"IPv4 drop route", &DropRoute{Prefix: netip.MustParsePrefix("10.96.0.0/12")}, true, false},
		{"IPv6 drop route", &DropRoute{Prefix: netip.MustParsePrefix("fd00::/108")}, false, true},
		{"IPv4 feature", &InterfaceFeature{Interface: "tap0", Arc: "ip4-unicast", Feature: "cnat-input-ip4"}, true, false},
		{"IPv6 feature", &InterfaceFeature{Interface: "tap0", Arc: "ip6-output", Feature: "cnat-output-ip6"}, false, true},
		{"a feature nobody names", &InterfaceFeature{Interface: "tap0", Arc: "ip4-unicast", Feature: "acl-plugin-in-ip4-fa"}, false, false},
		{"tagged: a NAT44 static mapping", &NAT44StaticMapping{External: netip.MustParseAddrPort("10.96.0.1:80"), Local: netip.MustParseAddrPort("10.1.1.2:80"), Protocol: ProtoTCP}, false, false},
		{"tagged: an ACL", &ACL{Name: "x"}, false, false},
	}
	for _, c := range cases {
		assert.Equal(t, c.v4, v4(c.item), "IPv4 claim, %s", c.name)
		assert.Equal(t, c.v6, v6(c.item), "IPv6 claim, %s", c.name)
	}
}
