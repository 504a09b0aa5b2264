package ipv6_test

import (
	"fmt"
	"strings"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
)

// benchCluster returns n IPv6 ClusterIP services (fd00:96::/112) with eps
// ready endpoints each on node-2 (fd00:2::/64; endpoint j of service i is
// address i*eps+j+1 in the low 32 bits), plus one endpoint on node-1 for every tenth service so
// that source-NATed (hairpin) paths are part of the load.
func benchCluster(n, eps int) cluster {
	var c cluster
	for i := range n {
		name := fmt.Sprintf("svc-%05d", i)
		c.services = append(c.services, k8sService(name, fmt.Sprintf("fd00:96::%x", 0x1000+i)))
		var list []discoveryv1.Endpoint
		for j := range eps {
			a := i*eps + j + 1
			list = append(list, remote(fmt.Sprintf("fd00:2::%x:%x", a>>16, a&0xffff)))
		}
		if i%10 == 0 {
			list = append(list, local("fd00:1:1::2"))
		}
		c.slices = append(c.slices, k8sSlice(name, list...))
	}
	return c
}

// BenchmarkIPv6ColdSync measures the first Resync of 5,000 services with 10
// endpoints each on a fresh VPP: processor conversion, rendering, the VPP
// layer's diff and every cnat call through govpp to the fake.
// docs/performance-ipv6.md records the figures.
func BenchmarkIPv6ColdSync(b *testing.B) {
	requireFakeCNAT(b)
	snap := benchCluster(5000, 10).snapshot()
	last := fmt.Sprintf("fd00:96::%x", 0x1000+4999)
	calls := 0
	for b.Loop() {
		b.StopTimer()
		v := newFake()
		ag := startAgent(b, v, true, agentOptions{cfg: testConfig()})
		v.ResetCalls()
		b.StartTimer()
		ag.proc.Resync(snap)
		b.StopTimer()
		calls = vppWrites(v)
		if !strings.Contains(v.Dump(), last) {
			b.Fatalf("the last service (%s) is not in VPP", last)
		}
		ag.stop()
		b.StartTimer()
	}
	b.ReportMetric(float64(calls), "vppcalls/sync")
}

// BenchmarkIPv6EndpointChange measures one endpoint change (an endpoint
// added to or removed from one service's slice, alternately) among 10,000
// services, end to end, and reports the VPP calls it costs: one in-place
// cnat translation update.
func BenchmarkIPv6EndpointChange(b *testing.B) {
	requireFakeCNAT(b)
	c := benchCluster(10000, 10)
	v := newFake()
	ag := startAgent(b, v, true, agentOptions{cfg: testConfig()})
	ag.proc.Resync(c.snapshot())
	v.ResetCalls()
	i := 0
	for b.Loop() {
		s := c.slices[(i/2*7919)%len(c.slices)].DeepCopy() // spread over the services
		if i%2 == 0 {
			s.Endpoints = append(s.Endpoints, remote("fd00:3::1"))
		}
		ag.proc.UpdateEndpointSlice(s)
		i++
	}
	b.ReportMetric(float64(vppWrites(v))/float64(b.N), "vppcalls/op")
}
