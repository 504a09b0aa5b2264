package nat44

import (
	"context"
	"fmt"
	"net/netip"
	"testing"

	logtest "github.com/sirupsen/logrus/hooks/test"
	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer/renderertest"
	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/vppcfgtest"
)

// TestUpdateServiceCIDRs: a change of the reported service CIDRs writes
// only the drop routes it moves: the CIDR routes that came or went and the
// host routes of the ClusterIPs a CIDR starts or stops covering; a ClusterIP
// outside every CIDR keeps its own route. The result is what a Resync with
// the new CIDRs renders. Configured CIDRs (Config.ServiceCIDRs) win over
// the reported ones.
func TestUpdateServiceCIDRs(t *testing.T) {
	route := func(p string) vppcfg.Key { return vppcfgtest.DropRouteKey(pfx(p), 0) }
	services := func() []*model.ContivService {
		b := renderertest.WithBackends("", renderertest.Backend("10.1.1.2:8080"))
		return []*model.ContivService{
			renderertest.Service("a", "10.96.0.10", b),
			renderertest.Service("b", "10.96.0.20", b),
			renderertest.Service("outside", "192.0.2.5", b),
			renderertest.Service("v6", "fd00:96::5", b),
		}
	}
	tests := []struct {
		name       string
		configured []netip.Prefix
		before     []netip.Prefix
		after      []netip.Prefix
		// want is the commit, "" for none.
		want string
	}{
		{name: "first CIDR replaces the host routes it covers",
			after: []netip.Prefix{pfx("10.96.0.0/12")},
			want:  "txn put=" + keyList(route("10.96.0.0/12")) + " del=" + keyList(route("10.96.0.10/32"), route("10.96.0.20/32"))},
		{name: "last CIDR removed: host routes back",
			before: []netip.Prefix{pfx("10.96.0.0/12")},
			want:   "txn put=" + keyList(route("10.96.0.10/32"), route("10.96.0.20/32")) + " del=" + keyList(route("10.96.0.0/12"))},
		{name: "narrower CIDR: the ClusterIP it leaves gets its route",
			before: []netip.Prefix{pfx("10.96.0.0/12")}, after: []netip.Prefix{pfx("10.96.0.16/28")},
			want: "txn put=" + keyList(route("10.96.0.16/28"), route("10.96.0.10/32")) + " del=" + keyList(route("10.96.0.0/12"))},
		{name: "a second CIDR covering the outside ClusterIP",
			before: []netip.Prefix{pfx("10.96.0.0/12")}, after: []netip.Prefix{pfx("10.96.0.0/12"), pfx("192.0.2.0/24")},
			want: "txn put=" + keyList(route("192.0.2.0/24")) + " del=" + keyList(route("192.0.2.5/32"))},
		{name: "a CIDR covering no ClusterIP: one route",
			after: []netip.Prefix{pfx("172.30.0.0/16")},
			want:  "txn put=" + keyList(route("172.30.0.0/16")) + " del=[]"},
		{name: "an IPv6 CIDR only: nothing for NAT44",
			before: []netip.Prefix{pfx("10.96.0.0/12")}, after: []netip.Prefix{pfx("10.96.0.0/12"), pfx("fd00:96::/108")}},
		{name: "same set: nothing",
			before: []netip.Prefix{pfx("10.96.0.0/12")}, after: []netip.Prefix{pfx("10.96.0.0/12")}},
		{name: "configured CIDRs win: reported changes write nothing",
			configured: []netip.Prefix{pfx("10.96.0.0/12")},
			before:     []netip.Prefix{pfx("192.0.2.0/24")}, after: []netip.Prefix{pfx("10.0.0.0/8")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.ServiceCIDRs = tt.configured
			newRenderer := func(c vppcfg.Client) (renderertest.CIDRRenderer, error) { return New(c, cfg, nil) }
			event := func() *model.ResyncEventData { return resyncEvent(testNode(), services()...) }
			renderertest.CheckServiceCIDRUpdate(t, Name, newRenderer, event, tt.before, tt.after, tt.want, checkNAT44)
		})
	}
}

// countingClient takes commits without keeping anything, and counts the
// items they write: the renderer's own cost, without a VPP layer's.
type countingClient struct{ writes int }

func (c *countingClient) Owner() string         { return Name }
func (c *countingClient) Txn() vppcfg.Txn       { return &countingTxn{c: c} }
func (c *countingClient) ResyncTxn() vppcfg.Txn { return &countingTxn{c: c} }

type countingTxn struct {
	c *countingClient
	n int
}

func (t *countingTxn) Put(items ...vppcfg.Item) vppcfg.Txn  { t.n += len(items); return t }
func (t *countingTxn) Delete(keys ...vppcfg.Key) vppcfg.Txn { t.n += len(keys); return t }
func (t *countingTxn) Commit(context.Context) error         { t.c.writes += t.n; return nil }

// BenchmarkUpdateServiceCIDRs: a service CIDR that comes and goes covering
// none of the services' ClusterIPs writes one route each time; what grows
// with the number of services is the renderer's scan for the ClusterIPs it
// moves (go test -run '^$' -bench UpdateServiceCIDRs ./renderer/nat44/).
func BenchmarkUpdateServiceCIDRs(b *testing.B) {
	for _, n := range []int{1000, 10000, 50000} {
		b.Run(fmt.Sprintf("services=%d", n), func(b *testing.B) {
			services := make([]*model.ContivService, n)
			for i := range services {
				ip := netip.AddrFrom4([4]byte{10, 96, byte(i >> 8), byte(i)})
				services[i] = renderertest.Service(fmt.Sprintf("s%05d", i), ip.String(),
					renderertest.WithBackends("", renderertest.Backend("10.1.1.2:8080")))
			}
			c := &countingClient{}
			log, _ := logtest.NewNullLogger()
			r, err := New(c, testConfig(), log)
			if err != nil {
				b.Fatal(err)
			}
			ev := resyncEvent(testNode(), services...)
			ev.ServiceCIDRs = []netip.Prefix{pfx("10.96.0.0/12")}
			if err := r.Resync(ev); err != nil {
				b.Fatal(err)
			}
			with := []netip.Prefix{pfx("10.96.0.0/12"), pfx("172.30.0.0/16")}
			c.writes = 0
			b.ResetTimer()
			for i := range b.N {
				cidrs := ev.ServiceCIDRs
				if i%2 == 0 {
					cidrs = with
				}
				if err := r.UpdateServiceCIDRs(cidrs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(c.writes)/float64(b.N), "writes/op")
		})
	}
}
