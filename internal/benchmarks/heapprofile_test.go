package benchmarks

import (
	"os"
	"runtime"
	"runtime/pprof"
	"testing"
)

// heapProfileEnv names the file TestHeapProfileColdSync writes; the test
// is skipped without it.
const heapProfileEnv = "VPPSVC_BENCH_HEAPPROFILE"

// TestHeapProfileColdSync writes the live heap after the cold sync that
// BenchmarkSteadyStateHeap measures (50,000 services × 1 endpoint into the
// instant driver): where the bytes per service port are, by allocation
// site. Read it with
//
//	go tool pprof -sample_index=inuse_space -top -nodecount=40 <file>
//
// VPPSVC_BENCH_SERVICE_CIDR applies as in the benchmarks.
func TestHeapProfileColdSync(t *testing.T) {
	path := os.Getenv(heapProfileEnv)
	if path == "" {
		t.Skipf("set %s to the file the heap profile goes to", heapProfileEnv)
	}
	runtime.MemProfileRate = 512
	ag := startAgent(t, newInstantDriver())
	defer ag.stop()
	ag.proc.Resync(snapshot(50000, 1)) // only what the agent keeps of it stays live
	runtime.GC()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := pprof.WriteHeapProfile(f); err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(ag)
}
