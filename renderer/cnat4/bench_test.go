package cnat4_test

import (
	"fmt"
	"net/netip"
	"testing"

	logtest "github.com/sirupsen/logrus/hooks/test"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer/cnat4"
	"github.com/vppsvc/vppsvc/renderer/renderertest"
)

// BenchmarkRendererResyncOneEndpoint is the renderer's own share of a cold
// sync of 50,000 ClusterIP services with one endpoint each (the shape of
// the scale benchmarks' largest cold sync, internal/benchmarks): rendering, indexing and one ResyncTxn into a client that
// discards it (no VPP layer), with a service CIDR that covers the
// ClusterIPs.
func BenchmarkRendererResyncOneEndpoint(b *testing.B) {
	const n = 50000
	ev := &model.ResyncEventData{
		NodeIPs:      renderertest.IPs("192.168.16.1"),
		FrontendIfs:  model.NewInterfaces("uplink0", "host0"),
		ServiceCIDRs: []netip.Prefix{netip.MustParsePrefix("10.96.0.0/16")},
	}
	for i := range n {
		ev.Services = append(ev.Services, renderertest.Service(fmt.Sprintf("svc-%05d", i), fmt.Sprintf("10.96.%d.%d", i/256, i%256),
			renderertest.WithBackends("", renderertest.Backend(fmt.Sprintf("10.2.%d.%d:8080", i/256%256, i%256)))))
	}
	ev.SortServices()
	cfg := cnat4.DefaultConfig()
	cfg.SNATAddress = netip.MustParseAddr("192.168.16.1")
	log, _ := logtest.NewNullLogger()
	b.ReportAllocs()
	var client *renderertest.NullClient
	for b.Loop() {
		client = &renderertest.NullClient{Name: cnat4.Name}
		r, err := cnat4.New(client, cfg, log)
		if err != nil {
			b.Fatal(err)
		}
		if err := r.Resync(ev); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(client.Puts), "items/op")
}
