package ipv6

import (
	"net/netip"
	"testing"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer/renderertest"
	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/vppcfgtest"
)

// TestUpdateServiceCIDRs: a change of the reported service CIDRs writes the
// IPv6 CIDR routes that came or went and nothing of the services (their
// exclusive cnat VIPs drop their other ports whatever the CIDRs); an IPv4
// change writes nothing; configured CIDRs win. The result is what a Resync
// with the new CIDRs renders.
func TestUpdateServiceCIDRs(t *testing.T) {
	route := func(p string) vppcfg.Key { return vppcfgtest.DropRouteKey(pfx(p), 0) }
	services := func() []*model.ContivService {
		b := renderertest.WithBackends("", renderertest.Backend("[fd00:1:2::2]:8080"))
		return []*model.ContivService{renderertest.Service("a", "fd00:96::10", b), renderertest.Service("v4", "10.96.0.10")}
	}
	v4, v6, v6b := pfx("10.96.0.0/12"), pfx("fd00:96::/108"), pfx("fd00:97::/112")
	tests := []struct {
		name                      string
		configured, before, after []netip.Prefix
		want                      string // the commit, "" for none
	}{
		{name: "first CIDR", after: []netip.Prefix{v6},
			want: "txn put=" + keyList(route("fd00:96::/108")) + " del=[]"},
		{name: "replaced", before: []netip.Prefix{v6}, after: []netip.Prefix{v6b},
			want: "txn put=" + keyList(route("fd00:97::/112")) + " del=" + keyList(route("fd00:96::/108"))},
		{name: "last CIDR gone", before: []netip.Prefix{v4, v6}, after: []netip.Prefix{v4},
			want: "txn put=[] del=" + keyList(route("fd00:96::/108"))},
		{name: "IPv4 only", before: []netip.Prefix{v6}, after: []netip.Prefix{v4, v6}},
		{name: "configured wins", configured: []netip.Prefix{v6}, before: nil, after: []netip.Prefix{v6b}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.ServiceCIDRs = tt.configured
			newRenderer := func(c vppcfg.Client) (renderertest.CIDRRenderer, error) { return New(c, cfg, nil) }
			event := func() *model.ResyncEventData { return resyncEvent(testNode(), services()...) }
			renderertest.CheckServiceCIDRUpdate(t, Name, newRenderer, event, tt.before, tt.after, tt.want, checkIPv6)
		})
	}
}
