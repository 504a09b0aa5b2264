package nat44_test

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/vppsvc/vppsvc/fakevpp"
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

// vppWrites counts the calls that change VPP state.
func vppWrites(v *fakevpp.VPP) int {
	n := 0
	for msg, c := range v.Calls() {
		if !isReadOnly(msg) {
			n += c
		}
	}
	return n
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
		v := newFake()
		ag := startAgent(b, v, true)
		v.ResetCalls()
		b.StartTimer()
		ag.proc.Resync(snap)
		b.StopTimer()
		calls = vppWrites(v)
		if !strings.Contains(v.Dump(), "10.96.19.135:80") {
			b.Fatal("the last service is not in VPP")
		}
		ag.stop()
		b.StartTimer()
	}
	b.ReportMetric(float64(calls), "vppcalls/sync")
}

// BenchmarkNAT44EndpointChange measures one endpoint change (an endpoint
// added to or removed from one service's slice, alternately) among 10,000
// services, end to end, and reports the VPP calls it costs.
func BenchmarkNAT44EndpointChange(b *testing.B) {
	c := benchCluster(10000, 10)
	v := newFake()
	ag := startAgent(b, v, true)
	ag.proc.Resync(c.snapshot())
	extra := netip.MustParseAddr("10.3.0.1")
	v.ResetCalls()
	i := 0
	for b.Loop() {
		svc := (i / 2 * 7919) % len(c.slices) // spread over the services
		s := c.slices[svc].DeepCopy()
		if i%2 == 0 {
			s.Endpoints = append(s.Endpoints, remote(extra.String()))
		}
		ag.proc.UpdateEndpointSlice(s)
		i++
	}
	b.ReportMetric(float64(vppWrites(v))/float64(b.N), "vppcalls/op")
}
