package benchmarks

import (
	"os"
	"runtime"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
)

// TestChurnSoak sustains 100 endpoint changes per second for 60 s
// (VPPSVC_SOAK=<duration> to change it) over 10,000 services × 10
// endpoints, end to end into the fake VPP, and checks that the agent keeps
// up: every change is applied before the next (the processor applies it
// synchronously, so a backlog would show as late ticks), one VPP call per
// change, nothing pending or failed, and a live heap that does not grow.
// Not in make test (-short); make test-long runs it.
func TestChurnSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("soak: runs without -short (make test-long)")
	}
	duration := 60 * time.Second
	if s := os.Getenv("VPPSVC_SOAK"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("VPPSVC_SOAK: %v", err)
		}
		duration = d
	}
	const n, eps, rate = 10000, 10, 100
	var with, without []*discoveryv1.EndpointSlice
	for i := 0; i < n; i += n / 500 {
		with = append(with, EndpointSlice(i, eps, 1))
		without = append(without, EndpointSlice(i, eps, 0))
	}
	ag, _ := startFakeAgent(t)
	defer ag.stop()
	ag.proc.Resync(snapshot(n, eps))

	// Warm up one full round of changes, so the baseline heap includes
	// every slice in both versions.
	for i := range 2 * len(with) {
		ag.proc.UpdateEndpointSlice(pick(with, without, i))
	}
	baseline := heapAlloc()
	calls0 := ag.calls()

	tick := time.NewTicker(time.Second / rate)
	defer tick.Stop()
	var events, late int
	var slowest time.Duration
	heaps := []int64{}
	start := time.Now()
	for time.Since(start) < duration {
		<-tick.C
		begin := time.Now()
		ag.proc.UpdateEndpointSlice(pick(with, without, events))
		took := time.Since(begin)
		slowest = max(slowest, took)
		if took > time.Second/rate {
			late++
		}
		events++
		if events%(rate*10) == 0 {
			heaps = append(heaps, heapAlloc())
		}
	}
	elapsed := time.Since(start)
	final := heapAlloc()
	calls := ag.calls() - calls0
	st := ag.rec.Stats()
	t.Logf("%d changes in %s (%.0f/s), slowest %s, %d took longer than a tick; VPP calls %d; heap %d → %d bytes (samples %v); pending %d failed %d",
		events, elapsed.Round(time.Millisecond), float64(events)/elapsed.Seconds(), slowest, late, calls, baseline, final, heaps, st.Pending, st.Failed)

	if want := int(duration.Seconds()*rate) * 95 / 100; events < want {
		t.Errorf("only %d changes in %s: the agent did not keep up with %d/s", events, duration, rate)
	}
	if late > events/100 {
		t.Errorf("%d of %d changes took longer than one tick", late, events)
	}
	if calls != uint64(events) {
		t.Errorf("%d VPP calls for %d changes, want one each", calls, events)
	}
	if st.Pending != 0 || st.Failed != 0 {
		t.Errorf("VPP layer not converged: %d pending, %d failed", st.Pending, st.Failed)
	}
	if final > baseline*11/10 {
		t.Errorf("live heap grew from %d to %d bytes over the soak", baseline, final)
	}
	runtime.KeepAlive(with)
}

// pick alternates the slices of the changed services between their two versions.
func pick(with, without []*discoveryv1.EndpointSlice, i int) *discoveryv1.EndpointSlice {
	if i%2 == 0 {
		return with[i/2%len(with)]
	}
	return without[i/2%len(without)]
}
