package renderer_test

import (
	"net/netip"
	"testing"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/vppcfg"
)

func TestDropRoutes(t *testing.T) {
	cidrs := []netip.Prefix{pfx("10.96.0.0/12"), pfx("fd00:96::/108")}
	got := renderer.ServiceCIDRDropRoutes(cidrs, renderer.IPv4, 2, 1, 2)
	want := []vppcfg.Item{&vppcfg.DropRoute{Prefix: pfx("10.96.0.0/12"), VRF: 1}, &vppcfg.DropRoute{Prefix: pfx("10.96.0.0/12"), VRF: 2}}
	assertSameItems(t, "IPv4 CIDR routes, one per distinct VRF", got, want)
	assertSameItems(t, "no VRF given: table 0", renderer.ServiceCIDRDropRoutes(cidrs, renderer.IPv6),
		[]vppcfg.Item{&vppcfg.DropRoute{Prefix: pfx("fd00:96::/108")}})

	svc := svc("dual", model.NewIPAddresses(netip.MustParseAddr("10.96.0.10"), netip.MustParseAddr("192.0.2.10"), netip.MustParseAddr("fd00:96::10")))
	assertSameItems(t, "ClusterIPs outside the CIDRs only", renderer.ClusterIPDropRoutes(svc, cidrs, renderer.IPv4),
		[]vppcfg.Item{&vppcfg.DropRoute{Prefix: pfx("192.0.2.10/32")}})
	assertSameItems(t, "without CIDRs every ClusterIP of the family", renderer.ClusterIPDropRoutes(svc, nil, renderer.IPv6, 0),
		[]vppcfg.Item{&vppcfg.DropRoute{Prefix: pfx("fd00:96::10/128")}})
}

func assertSameItems(t *testing.T, what string, got, want []vppcfg.Item) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %v, want %v", what, got, want)
	}
	for i := range got {
		if !got[i].Equal(want[i]) {
			t.Fatalf("%s: %v, want %v", what, got, want)
		}
	}
}
