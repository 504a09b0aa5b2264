package benchmarks

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/vppsvc/vppsvc/processor"
)

// size is a generated cluster: services with endpoints each.
type size struct{ services, endpoints int }

func (s size) String() string {
	return fmt.Sprintf("services=%d/endpoints=%d", s.services, s.endpoints)
}

// skipLarge skips states of 50,000 services under -short: their setup alone
// takes seconds and gigabytes.
func skipLarge(b *testing.B, services int) {
	if testing.Short() && services >= 50000 {
		b.Skip("50,000-service state skipped in -short mode")
	}
}

// reportRate reports services handled per second of timed work.
func reportRate(b *testing.B, services int) {
	b.ReportMetric(float64(services)*float64(b.N)/b.Elapsed().Seconds(), "services/s")
}

// heapAlloc returns the live heap after a full collection.
func heapAlloc() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// BenchmarkColdSync is the first Processor.Resync of a generated cluster on
// an empty fake VPP, end to end: conversion, rendering, the VPP layer's
// diff, every request through govpp's codec and the fake's emulation. It
// reports services/s, vpp-calls/op and the process's CPU during the sync
// (cpu-ns/op: on two shared cores it moves less than the time does).
func BenchmarkColdSync(b *testing.B) {
	benchResync(b, []size{{100, 10}, {1000, 10}, {5000, 10}, {50000, 10}, {50000, 1}}, false, fakeAgent)
}

// BenchmarkColdSyncInstant is BenchmarkColdSync into the instant driver:
// the control plane's own work (conversion, rendering, the VPP layer's
// commit, plan and statuses), no VPP and no codec; vpp-calls/op counts ops.
func BenchmarkColdSyncInstant(b *testing.B) {
	benchResync(b, []size{{5000, 10}, {50000, 1}}, false, instantAgent)
}

// BenchmarkColdDelete is the opposite of a cold sync: every service of a
// synced cluster disappears in one Resync (an agent whose informers come
// back empty), end to end.
func BenchmarkColdDelete(b *testing.B) {
	benchResync(b, []size{{5000, 10}, {50000, 1}}, true, fakeAgent)
}

// fakeAgent starts an agent over a new fake VPP; instantAgent over the
// instant driver.
func fakeAgent(b testing.TB) *agent { ag, _ := startFakeAgent(b); return ag }

func instantAgent(b testing.TB) *agent { return startAgent(b, newInstantDriver()) }

// benchResync times one Resync per size on a new agent from start: to the
// generated cluster, or, when deleting, from it (synced untimed first) to
// no services at all.
func benchResync(b *testing.B, sizes []size, deleting bool, start func(testing.TB) *agent) {
	for _, sz := range sizes {
		b.Run(sz.String(), func(b *testing.B) {
			skipLarge(b, sz.services)
			cluster := snapshot(sz.services, sz.endpoints)
			target := cluster
			if deleting {
				target = processor.Snapshot{Nodes: cluster.Nodes}
			}
			var calls uint64
			var cpu time.Duration
			for b.Loop() {
				b.StopTimer()
				ag := start(b)
				if deleting {
					ag.proc.Resync(cluster)
				}
				before, cpu0 := ag.calls(), ProcessCPU()
				b.StartTimer()
				ag.proc.Resync(target)
				b.StopTimer()
				cpu += ProcessCPU() - cpu0
				calls = ag.calls() - before
				ag.stop()
				b.StartTimer()
			}
			reportRate(b, sz.services)
			b.ReportMetric(float64(calls), "vpp-calls/op")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkSteadyStateHeap measures the live heap a cold sync leaves
// behind, per service port (runtime.MemStats after a full GC):
// heap-B/service-port is the control plane's (processor, renderer and VPP
// layer, over the instant driver, which keeps nothing); the Kubernetes
// objects are the informers' and are not counted. fake-B/service-port is
// what the fake VPP holds in addition when it is the VPP, reported apart
// because it is not the agent's memory.
//
// Each size runs twice: without a service CIDR (a drop route a ClusterIP)
// and, as "service-cidr", with the generated cluster's 172.30.0.0/16 (one
// drop route for the range's free addresses, as on a cluster whose
// default ServiceCIDR the processor sees); VPPSVC_BENCH_SERVICE_CIDR does
// not apply here.
func BenchmarkSteadyStateHeap(b *testing.B) {
	for _, sz := range []size{{5000, 10}, {50000, 10}, {50000, 1}} {
		for _, cidr := range []string{"", clusterIPRange} {
			name := sz.String()
			if cidr != "" {
				name += "/service-cidr"
			}
			b.Run(name, func(b *testing.B) {
				b.Setenv(serviceCIDREnv, cidr)
				steadyStateHeap(b, sz)
			})
		}
	}
}

// steadyStateHeap is one size of BenchmarkSteadyStateHeap.
func steadyStateHeap(b *testing.B, sz size) {
	skipLarge(b, sz.services)
	snap := snapshot(sz.services, sz.endpoints)
	var agentHeap, fakeHeap int64
	for b.Loop() {
		base := heapAlloc()
		ag := startAgent(b, newInstantDriver())
		ag.proc.Resync(snap)
		agentHeap = heapAlloc() - base
		ag.stop()
		ag = nil // collected before the fake agent's baseline
		base = heapAlloc()
		ag, v := startFakeAgent(b)
		ag.proc.Resync(snap)
		fakeHeap = heapAlloc() - base - agentHeap
		ag.stop()
		runtime.KeepAlive(v)
	}
	n := float64(sz.services)
	b.ReportMetric(float64(agentHeap)/n, "heap-B/service-port")
	b.ReportMetric(float64(fakeHeap)/n, "fake-B/service-port")
}

// vpps are the two VPPs the incremental benchmarks run against: the fake
// through govpp (end to end) and the instant driver, with which ns/op is
// the control plane's CPU alone.
var vpps = []struct {
	name  string
	start func(testing.TB) *agent
}{
	{"vpp=fake", fakeAgent},
	{"vpp=instant", instantAgent},
}

// BenchmarkEndpointChange is one endpoint added to or removed from
// (alternately) one service's slice in a state of 10,000 services × 10
// endpoints: exactly one VPP call per op (one local added to or removed
// from the service's load-balancing mapping).
func BenchmarkEndpointChange(b *testing.B) {
	const n, eps = 10000, 10
	// Both versions of the slices of 500 services spread over the state,
	// built beforehand so that the loop times the agent only.
	var with, without []*discoveryv1.EndpointSlice
	for i := 0; i < n; i += n / 500 {
		with = append(with, EndpointSlice(i, eps, 1))
		without = append(without, EndpointSlice(i, eps, 0))
	}
	snap := snapshot(n, eps)
	for _, vpp := range vpps {
		b.Run(fmt.Sprintf("services=%d/%s", n, vpp.name), func(b *testing.B) {
			ag := vpp.start(b)
			defer ag.stop()
			ag.proc.Resync(snap)
			before := ag.calls()
			i := 0
			for b.Loop() {
				s := without[i/2%len(without)]
				if i%2 == 0 {
					s = with[i/2%len(with)]
				}
				ag.proc.UpdateEndpointSlice(s)
				i++
			}
			calls := ag.calls() - before
			if calls != uint64(b.N) {
				b.Errorf("%d VPP calls for %d endpoint changes, want one each", calls, b.N)
			}
			b.ReportMetric(float64(calls)/float64(b.N), "vpp-calls/op")
		})
	}
}

// BenchmarkServiceChange is one service (10 endpoints) added, or deleted
// again, alternately, among n others: its cost must not depend on
// how many other services there are. The slice is given before the service
// and taken after it, so the service never exists without endpoints: an
// endpoint-less service needs a drop rule, and the first one binds every
// filter shard ACL (about 65 calls), which is the filter's cost, not a
// service change's.
func BenchmarkServiceChange(b *testing.B) {
	const eps = 10
	for _, n := range []int{1000, 10000, 50000} {
		svc, slice := Service(n), EndpointSlice(n, eps, 0)
		for _, vpp := range vpps {
			b.Run(fmt.Sprintf("services=%d/%s", n, vpp.name), func(b *testing.B) {
				skipLarge(b, n)
				ag := vpp.start(b)
				defer ag.stop()
				ag.proc.Resync(snapshot(n, eps))
				before := ag.calls()
				i := 0
				for b.Loop() {
					if i%2 == 0 {
						ag.proc.UpdateEndpointSlice(slice)
						ag.proc.UpdateService(svc)
					} else {
						ag.proc.DeleteService(svc.Namespace, svc.Name)
						ag.proc.DeleteEndpointSlice(slice.Namespace, slice.Name)
					}
					i++
				}
				b.ReportMetric(float64(ag.calls()-before)/float64(b.N), "vpp-calls/op")
			})
		}
	}
}
