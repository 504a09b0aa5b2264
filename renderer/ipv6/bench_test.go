package ipv6_test

import (
	"fmt"
	"strings"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/vppsvc/vppsvc/renderer/internal/tracetest"
)

// benchCluster returns n IPv6 ClusterIP services (fd00:96::/112) with eps
// ready endpoints each on node-2 (fd00:2::/64; endpoint j of service i is
// address i*eps+j+1 in the low 32 bits), plus one endpoint on node-1 for every tenth service so
// that source-NATed (hairpin) paths are part of the load.
func benchCluster(n, eps int) cluster {
	var c cluster
	for i := range n {
		name := fmt.Sprintf("svc-%05d", i)
		c.services = append(c.services, tracetest.Service(name, fmt.Sprintf("fd00:96::%x", 0x1000+i)))
		var list []discoveryv1.Endpoint
		for j := range eps {
			a := i*eps + j + 1
			list = append(list, tracetest.Remote(fmt.Sprintf("fd00:2::%x:%x", a>>16, a&0xffff)))
		}
		if i%10 == 0 {
			list = append(list, tracetest.Local("fd00:1:1::2"))
		}
		c.slices = append(c.slices, k8sSlice(name, list...))
	}
	return c
}

// BenchmarkIPv6ColdSync measures the first Resync of 5,000 services with 10
// endpoints each on a fresh VPP: processor conversion, rendering, the VPP
// layer's diff and every cnat call through govpp to the fake.
// docs/performance.md ("IPv6 renderer") records the figures.
func BenchmarkIPv6ColdSync(b *testing.B) {
	requireFakeCNAT(b)
	snap := benchCluster(5000, 10).snapshot()
	last := fmt.Sprintf("fd00:96::%x", 0x1000+4999)
	calls := 0
	for b.Loop() {
		b.StopTimer()
		v := newFakeNode(b)
		ag := startAgent(b, v, agentOptions{cfg: testConfig()})
		v.ResetCalls()
		b.StartTimer()
		ag.proc.Resync(snap)
		b.StopTimer()
		calls = tracetest.Writes(v)
		if !strings.Contains(v.Dump(), last) {
			b.Fatalf("the last service (%s) is not in VPP", last)
		}
		ag.Stop()
		b.StartTimer()
	}
	b.ReportMetric(float64(calls), "vpp-calls/sync")
}

// BenchmarkIPv6EndpointChange measures one endpoint change (an endpoint
// added to or removed from one service's slice, alternately) among 10,000
// services, end to end, and reports the VPP calls it costs: one in-place
// cnat translation update.
func BenchmarkIPv6EndpointChange(b *testing.B) {
	requireFakeCNAT(b)
	c := benchCluster(10000, 10)
	v := newFakeNode(b)
	ag := startAgent(b, v, agentOptions{cfg: testConfig()})
	ag.proc.Resync(c.snapshot())
	tracetest.ToggleEndpoint(b, v.VPP, c.slices, 1, tracetest.Remote("fd00:3::1"), ag.proc.UpdateEndpointSlice)
}

// filteredCluster returns n IPv6 ClusterIP services with two remote
// endpoints each, except every third, which has none and so needs
// filtering (a drop rule for its ClusterIP): a cluster where a third of the
// services hold filter rules, as in the measurement recorded in
// docs/performance.md ("IPv6 renderer").
func filteredCluster(n int) cluster {
	var c cluster
	for i := range n {
		name := fmt.Sprintf("svc-%05d", i)
		c.services = append(c.services, tracetest.Service(name, fmt.Sprintf("fd00:96::%x", 0x1000+i)))
		var list []discoveryv1.Endpoint
		if i%3 != 0 {
			for j := range 2 {
				list = append(list, tracetest.Remote(fmt.Sprintf("fd00:2::%x:%x", i, j+1)))
			}
		}
		c.slices = append(c.slices, k8sSlice(name, list...))
	}
	return c
}

// BenchmarkIPv6FilteredServiceChange measures one change of a filtered
// service among 10,000 services of which 3,334 need filtering: an
// endpoint-less service gets one endpoint (its drop rule goes, a
// translation comes) or loses it again, alternately. The filter rules'
// share of the cost must not grow with the number of filtered services.
func BenchmarkIPv6FilteredServiceChange(b *testing.B) {
	requireFakeCNAT(b)
	c := filteredCluster(10000)
	v := newFakeNode(b)
	ag := startAgent(b, v, agentOptions{cfg: testConfig()})
	ag.proc.Resync(c.snapshot())
	tracetest.ToggleEndpoint(b, v.VPP, c.slices, 3, tracetest.Remote("fd00:3::1"), ag.proc.UpdateEndpointSlice)
}
