package nat44

import (
	"fmt"
	"net/netip"
	"testing"

	logtest "github.com/sirupsen/logrus/hooks/test"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer/renderertest"
)

// benchServices returns n ClusterIP services with eps remote endpoints each.
func benchServices(n, eps int) []*model.ContivService {
	out := make([]*model.ContivService, n)
	for i := range out {
		var bs []model.ServiceBackend
		for j := range eps {
			a := i*eps + j
			bs = append(bs, be(fmt.Sprintf("10.2.%d.%d:8080", a/256%256, a%256)))
		}
		out[i] = service(fmt.Sprintf("svc-%05d", i), fmt.Sprintf("10.96.%d.%d", i/256, i%256), withBackends("", bs...))
	}
	return out
}

// BenchmarkRendererResync is the renderer's own share of a cold sync of
// 5,000 services with 10 endpoints: rendering, indexing and one ResyncTxn
// into a client that discards it (no VPP layer).
func BenchmarkRendererResync(b *testing.B) {
	ev := resyncEvent(testNode(), benchServices(5000, 10)...)
	log, _ := logtest.NewNullLogger()
	for b.Loop() {
		r, err := New(&renderertest.NullClient{Name: Name}, testConfig(), log)
		if err != nil {
			b.Fatal(err)
		}
		if err := r.Resync(ev); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRendererResyncOneEndpoint is BenchmarkRendererResync for
// 50,000 services with one endpoint each, the shape of the scale
// benchmarks' largest cold sync (internal/benchmarks): the renderer's cost
// per service, with a service CIDR that covers the ClusterIPs (one item a
// service) and without (a mapping and a drop route a service).
func BenchmarkRendererResyncOneEndpoint(b *testing.B) {
	for _, cidr := range []string{"none", "10.96.0.0/16"} {
		b.Run("service-cidr="+cidr, func(b *testing.B) {
			ev := resyncEvent(testNode(), benchServices(50000, 1)...)
			if cidr != "none" {
				ev.ServiceCIDRs = []netip.Prefix{netip.MustParsePrefix(cidr)}
			}
			log, _ := logtest.NewNullLogger()
			b.ReportAllocs()
			var client *renderertest.NullClient
			for b.Loop() {
				client = &renderertest.NullClient{Name: Name}
				r, err := New(client, testConfig(), log)
				if err != nil {
					b.Fatal(err)
				}
				if err := r.Resync(ev); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(client.Puts), "items/op")
		})
	}
}

// BenchmarkRendererUpdateService is the renderer's own share of one
// endpoint change among 10,000 services.
func BenchmarkRendererUpdateService(b *testing.B) {
	svcs := benchServices(10000, 10)
	log, _ := logtest.NewNullLogger()
	r, err := New(&renderertest.NullClient{Name: Name}, testConfig(), log)
	if err != nil {
		b.Fatal(err)
	}
	if err := r.Resync(resyncEvent(testNode(), svcs...)); err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		old := svcs[(i/2*7919)%len(svcs)]
		next := old.Clone()
		if i%2 == 0 {
			next.SetBackends("", append(next.Backends(""), be("10.3.0.1:8080")))
		}
		if err := r.UpdateService(old, next); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkRendererFilteredChange is the renderer's own share of one change
// of a filtered service among 10,000 services that all need filtering (no
// endpoints): the service gets an endpoint or loses it again. Its filter
// rules move in and out of one shard, which is rewritten whole, so the cost
// (and the rules put, reported as acl-rules/op) is that of one shard:
// about 10,000/shards services, not 10,000.
func BenchmarkRendererFilteredChange(b *testing.B) {
	svcs := benchServices(10000, 0)
	for _, shards := range []int{16, 64, 256} {
		b.Run(fmt.Sprint("shards=", shards), func(b *testing.B) {
			log, _ := logtest.NewNullLogger()
			cfg := testConfig()
			cfg.ACLShards = shards
			c := &renderertest.NullClient{Name: Name}
			r, err := New(c, cfg, log)
			if err != nil {
				b.Fatal(err)
			}
			if err := r.Resync(resyncEvent(testNode(), svcs...)); err != nil {
				b.Fatal(err)
			}
			c.ACLRules = 0
			i := 0
			for b.Loop() {
				old := svcs[(i/2*7919)%len(svcs)]
				next := old.Clone()
				if i%2 == 0 {
					next.SetBackends("", []model.ServiceBackend{be("10.3.0.1:8080")})
				}
				if err := r.UpdateService(old, next); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(c.ACLRules)/float64(b.N), "acl-rules/op")
		})
	}
}
