package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const sample = `goos: linux
BenchmarkColdSync/services=5000/endpoints=10-2         	       6	 189389998 ns/op	     26401 services/s	      5005 vpp-calls/op	58856341 B/op	  331349 allocs/op
BenchmarkColdSync/services=5000/endpoints=10-2         	       6	 170000000 ns/op	     29411 services/s	      5005 vpp-calls/op	58856341 B/op	  331349 allocs/op
BenchmarkColdSync/services=5000/endpoints=10-2         	       6	 175000000 ns/op	     28571 services/s	      5005 vpp-calls/op	58856341 B/op	  331349 allocs/op
BenchmarkColdSync/services=50000/endpoints=1-2         	       1	1656866248 ns/op	     30177 services/s	     50005 vpp-calls/op	381814440 B/op	 3055767 allocs/op
    soak_test.go:73: a log line
BenchmarkEndpointChange/services=10000/vpp=instant-2   	   44097	     34623 ns/op	         1.000 vpp-calls/op	    8024 B/op	      63 allocs/op
BenchmarkServiceChange/services=1000/vpp=instant-2     	   55359	     20345 ns/op	         1.000 vpp-calls/op	    4340 B/op	      43 allocs/op
BenchmarkServiceChange/services=10000/vpp=instant-2    	   62498	     19632 ns/op	         1.000 vpp-calls/op	    4340 B/op	      43 allocs/op
BenchmarkServiceChange/services=50000/vpp=instant-2    	   70490	     16766 ns/op	         1.000 vpp-calls/op	    4340 B/op	      43 allocs/op
BenchmarkSteadyStateHeap/services=50000/endpoints=1-2  	       1	3309754963 ns/op	       332.7 fake-B/service-port	      2886 heap-B/service-port	688398160 B/op	 4862137 allocs/op
ok  	github.com/vppsvc/vppsvc/internal/benchmarks	48.039s
`

func TestTables(t *testing.T) {
	var echo, out bytes.Buffer
	names, results, failed, err := parse(strings.NewReader(sample), &echo)
	require.NoError(t, err)
	assert.False(t, failed)
	assert.Equal(t, sample, echo.String(), "the raw output is echoed")
	assert.Equal(t, []string{"ColdSync/services=5000/endpoints=10", "ColdSync/services=50000/endpoints=1",
		"EndpointChange/services=10000/vpp=instant", "ServiceChange/services=1000/vpp=instant",
		"ServiceChange/services=10000/vpp=instant", "ServiceChange/services=50000/vpp=instant",
		"SteadyStateHeap/services=50000/endpoints=1"}, names)
	assert.Equal(t, 175e6, results["ColdSync/services=5000/endpoints=10"]["ns/op"], "the median of three runs")

	writeTables(&out, names, results)
	got := out.String()
	for _, want := range []string{
		"| `ColdSync/services=5000/endpoints=10` | 175.0 ms | 28571 | 5005.000 | 58.9 MB | 331349 |  |  |",
		"| Cold sync 5,000 services × 10 endpoints ≤ 180 ms | 175.0 ms | yes |",
		"| Cold sync 50,000 × 1 ≥ 45,000 services/s | 30177 | no: 33 % short |",
		"| Cold delete 50,000 × 1 ≥ 45,000 services/s | not run | — |",
		"| Endpoint change ≤ 50 µs control-plane CPU | 35 µs | yes |",
		"| Heap ≤ 1 KiB per service port (50,000 × 1) | 2886 B | no: 182 % over |",
		"| Issue 15: heap ≤ 1.5 KiB per service port (5,000 × 10) | not run | — |",
		"| Issue 15: cold sync 50,000 × 1 ≤ 10 µs per service (≥ 100,000 services/s) | 30177 | no: 70 % short |",
		"| Issue 15: endpoint change ≤ 25 µs control-plane CPU | 35 µs | no: 38 % over |",
		"| Service change independent of other services (1k / 10k / 50k) | 20 µs / 20 µs / 17 µs | yes |",
	} {
		assert.Contains(t, got, want)
	}
}

func TestFailedRun(t *testing.T) {
	_, _, failed, err := parse(strings.NewReader("--- FAIL: BenchmarkX\nFAIL\n"), nil)
	require.NoError(t, err)
	assert.True(t, failed)
}
