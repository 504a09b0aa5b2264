package nat44_test

import (
	"fmt"
	"strings"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/vppsvc/vppsvc/renderer/internal/tracetest"
)

// benchCluster returns n ClusterIP services (10.96.0.0/16) with eps ready
// endpoints each on node-2 (10.2.0.0/16; endpoint j of service i is
// address i*eps+j), plus one endpoint on node-1 for every tenth service so
// that local backends (and inside roles) are part of the load.
func benchCluster(n, eps int) cluster {
	var c cluster
	for i := range n {
		name := fmt.Sprintf("svc-%05d", i)
		c.services = append(c.services, k8sService(name, fmt.Sprintf("10.96.%d.%d", i/256, i%256)))
		var list []discoveryv1.Endpoint
		for j := range eps {
			a := i*eps + j
			list = append(list, remote(fmt.Sprintf("10.2.%d.%d", a/256%256, a%256)))
		}
		if i%10 == 0 {
			list = append(list, local("10.1.1.2"))
		}
		c.slices = append(c.slices, k8sSlice(name, list...))
	}
	return c
}

// BenchmarkNAT44ColdSync measures the first Resync of 5,000 services with 10
// endpoints each on a fresh VPP: processor conversion, rendering, the VPP
// layer's diff and every VPP call through govpp to the fake.
func BenchmarkNAT44ColdSync(b *testing.B) {
	c := benchCluster(5000, 10)
	snap := c.snapshot()
	calls := 0
	for b.Loop() {
		b.StopTimer()
		v := newFakeNode(b)
		ag := startAgent(b, v)
		v.ResetCalls()
		b.StartTimer()
		ag.proc.Resync(snap)
		b.StopTimer()
		calls = tracetest.Writes(v)
		if !strings.Contains(v.Dump(), "10.96.19.135:80") {
			b.Fatal("the last service is not in VPP")
		}
		ag.Stop()
		b.StartTimer()
	}
	b.ReportMetric(float64(calls), "vpp-calls/sync")
}

// BenchmarkNAT44EndpointChange measures one endpoint change (an endpoint
// added to or removed from one service's slice, alternately) among 10,000
// services, end to end, and reports the VPP calls it costs.
func BenchmarkNAT44EndpointChange(b *testing.B) {
	c := benchCluster(10000, 10)
	v := newFakeNode(b)
	ag := startAgent(b, v)
	ag.proc.Resync(c.snapshot())
	tracetest.ToggleEndpoint(b, v.VPP, c.slices, 1, remote("10.3.0.1"), ag.proc.UpdateEndpointSlice)
}

// filteredCluster returns n ClusterIP services with two remote endpoints
// each, except every third, which has none and so needs filtering (a drop
// rule for its ClusterIP): a cluster where a third of the services hold
// filter rules, as in the measurement of docs/performance.md ("IPv6 renderer").
func filteredCluster(n int) cluster {
	var c cluster
	for i := range n {
		name := fmt.Sprintf("svc-%05d", i)
		c.services = append(c.services, k8sService(name, fmt.Sprintf("10.96.%d.%d", i/256, i%256)))
		var list []discoveryv1.Endpoint
		if i%3 != 0 {
			for j := range 2 {
				a := 2*i + j
				list = append(list, remote(fmt.Sprintf("10.2.%d.%d", a/256%256, a%256)))
			}
		}
		c.slices = append(c.slices, k8sSlice(name, list...))
	}
	return c
}

// BenchmarkNAT44FilteredServiceChange measures one change of a filtered
// service among 10,000 services of which 3,334 need filtering: an
// endpoint-less service gets one endpoint (its drop rule goes, a static
// mapping comes) or loses it again, alternately. The filter rules' share of
// the cost must not grow with the number of filtered services.
func BenchmarkNAT44FilteredServiceChange(b *testing.B) {
	c := filteredCluster(10000)
	v := newFakeNode(b)
	ag := startAgent(b, v)
	ag.proc.Resync(c.snapshot())
	tracetest.ToggleEndpoint(b, v.VPP, c.slices, 3, remote("10.3.0.1"), ag.proc.UpdateEndpointSlice)
}
