package pipeline

import (
	"errors"
	"maps"
	"net/netip"
	"slices"
	"testing"

	"github.com/sirupsen/logrus"

	vppsvc "github.com/vppsvc/vppsvc"
	"github.com/vppsvc/vppsvc/renderer/ipv6"
	"github.com/vppsvc/vppsvc/renderer/nat44"
	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
)

// idleDriver is a VPP the pipeline is built over but never started on:
// building must not call it (any call panics on the nil interface).
type idleDriver struct{ driverapi.Driver }

func configs() (*nat44.Config, *ipv6.Config) {
	c4 := nat44.DefaultConfig()
	c4.TwiceNATAddress = netip.MustParseAddr("192.168.16.1")
	c6 := ipv6.DefaultConfig()
	c6.SNATAddress = netip.MustParseAddr("fd00::1")
	return &c4, &c6
}

// TestRenderersByFamily: a nil renderer configuration leaves its renderer
// out; the processor calls every renderer through Wrap, in the order NAT44,
// IPv6, then the extra ones by name, while Renderers keeps them unwrapped.
func TestRenderersByFamily(t *testing.T) {
	c4, c6 := configs()
	var wrapped []string
	extra := func(client vppcfg.Client, _ logrus.FieldLogger) (vppsvc.ServiceRendererAPI, error) {
		return nat44.New(client, *c4, logrus.New())
	}
	for _, tc := range []struct {
		name string
		cfg  Config
		want []string
	}{
		{"nat44 only", Config{NAT44: c4}, []string{nat44.Name}},
		{"ipv6 only", Config{IPv6: c6}, []string{ipv6.Name}},
		{"both and extras", Config{NAT44: c4, IPv6: c6, Extra: map[string]Extra{"zz": {New: extra}, "aa": {New: extra}}},
			[]string{nat44.Name, ipv6.Name, "aa", "zz"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wrapped = nil
			tc.cfg.Wrap = func(name string, r vppsvc.ServiceRendererAPI) vppsvc.ServiceRendererAPI {
				wrapped = append(wrapped, name)
				return r
			}
			p, err := New(idleDriver{}, tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(wrapped, tc.want) {
				t.Errorf("wrapped %v, want %v", wrapped, tc.want)
			}
			var names []string
			for name := range p.Renderers {
				names = append(names, name)
			}
			slices.Sort(names)
			want := slices.Sorted(slices.Values(tc.want))
			if !slices.Equal(names, want) {
				t.Errorf("renderers %v, want %v", names, want)
			}
		})
	}
}

// TestClaimsOfRunningRenderers: the VPP layer gets the claims of the
// renderers that run, and of the extra renderers that have one.
func TestClaimsOfRunningRenderers(t *testing.T) {
	c4, _ := configs()
	claim := func(vppcfg.Item) bool { return true }
	got := slices.Sorted(maps.Keys(claims(Config{NAT44: c4, Extra: map[string]Extra{"x": {Claim: claim}, "y": {}}})))
	want := slices.Sorted(maps.Keys(nat44.Claims()))
	want = append(want, "x")
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("claims of %v, want %v (no IPv6 renderer, extra y has no claim)", got, want)
	}
}

// TestExtraRendererError: an extra renderer that cannot be built fails New
// with its name.
func TestExtraRendererError(t *testing.T) {
	boom := errors.New("boom")
	_, err := New(idleDriver{}, Config{Extra: map[string]Extra{"x": {
		New: func(vppcfg.Client, logrus.FieldLogger) (vppsvc.ServiceRendererAPI, error) { return nil, boom },
	}}})
	if !errors.Is(err, boom) || err.Error() != `extra renderer "x": boom` {
		t.Fatalf("err = %v", err)
	}
}
