package renderer_test

import (
	"fmt"
	"net/netip"
	"slices"
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

func TestFamilyCIDRs(t *testing.T) {
	in := []netip.Prefix{pfx("fd00:96::/108"), pfx("10.96.0.0/12"), pfx("10.96.0.0/12"), pfx("192.0.2.0/24"),
		netip.MustParsePrefix("::ffff:10.0.0.0/104"), {}}
	tests := []struct {
		f    renderer.Family
		want string
	}{
		{renderer.IPv4, "[10.96.0.0/12 192.0.2.0/24]"},
		{renderer.IPv6, "[fd00:96::/108]"},
	}
	for _, tt := range tests {
		if got := fmt.Sprint(renderer.FamilyCIDRs(in, tt.f)); got != tt.want {
			t.Errorf("%v: %s, want %s (sorted, no repeat, no mapped or invalid prefix)", tt.f, got, tt.want)
		}
	}
}

func TestEffectiveServiceCIDRs(t *testing.T) {
	conf, rep := []netip.Prefix{pfx("10.96.0.0/12")}, []netip.Prefix{pfx("10.0.0.0/16")}
	tests := []struct {
		name                 string
		configured, reported []netip.Prefix
		want                 string
	}{
		{"configured wins", conf, rep, "[10.96.0.0/12]"},
		{"reported without configuration", nil, rep, "[10.0.0.0/16]"},
		{"neither", nil, nil, "[]"},
	}
	for _, tt := range tests {
		if got := fmt.Sprint(renderer.EffectiveServiceCIDRs(tt.configured, tt.reported)); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestServiceCIDRChanges(t *testing.T) {
	ip := netip.MustParseAddr
	services := []*model.ContivService{
		svc("a", model.NewIPAddresses(ip("10.96.0.10"))),
		svc("b", model.NewIPAddresses(ip("10.96.1.10"))),
		svc("dual", model.NewIPAddresses(ip("192.0.2.10"), ip("fd00:96::10"))),
	}
	wide, narrow := []netip.Prefix{pfx("10.96.0.0/12")}, []netip.Prefix{pfx("10.96.0.0/24")}
	v6 := []netip.Prefix{pfx("fd00:96::/108")}
	tests := []struct {
		name     string
		old, new []netip.Prefix
		f        renderer.Family
		want     string
	}{
		{"first CIDR", nil, wide, renderer.IPv4, "[default/a default/b]"},
		{"CIDR gone", wide, nil, renderer.IPv4, "[default/a default/b]"},
		{"narrower", wide, narrow, renderer.IPv4, "[default/b]"},
		{"same", wide, wide, renderer.IPv4, "[]"},
		{"other family's CIDR", nil, v6, renderer.IPv4, "[]"},
		{"IPv6 ClusterIP of a dual-stack service", nil, v6, renderer.IPv6, "[default/dual]"},
	}
	for _, tt := range tests {
		var got []string
		for _, ch := range renderer.ServiceCIDRChanges(tt.old, tt.new, tt.f, slices.Values(services)) {
			if ch.Service == nil || ch.Service.ID != ch.ID {
				t.Fatalf("%s: change %v does not re-render the service from its value", tt.name, ch)
			}
			got = append(got, ch.ID.String())
		}
		if s := fmt.Sprint(got); s != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, s, tt.want)
		}
	}
}
