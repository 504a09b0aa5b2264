// Command benchtable turns the output of the scale benchmarks
// (internal/benchmarks) into the tables of docs/performance.md: every
// benchmark's medians, then the project's scale targets with what was
// measured and whether each holds (the ratios against kube-proxy come from `make bench-kubeproxy`, which `make bench` runs
// next). `make bench` pipes the benchmarks through it; the
// raw output is echoed first, so nothing is lost.
//
//	go test -run '^$' -bench . -benchmem ./internal/benchmarks/ | go run ./internal/benchmarks/benchtable
//
// It exits 1 when the benchmark run failed or produced no result, not when
// a target is missed: a miss is a finding to record, not a broken build.
package main

import (
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	names, results, failed, err := parse(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
	fmt.Println()
	writeTables(os.Stdout, names, results)
	if failed || len(names) == 0 {
		fmt.Fprintln(os.Stderr, "benchtable: the benchmark run failed or gave no result")
		os.Exit(1)
	}
}

// columns are the metrics of the results table, in order.
var columns = []struct{ unit, title string }{
	{"ns/op", "Time/op"},
	{"services/s", "services/s"},
	{"vpp-calls/op", "VPP calls/op"},
	{"B/op", "B/op"},
	{"allocs/op", "allocs/op"},
	{"heap-B/service-port", "heap-B/service-port"},
	{"fake-B/service-port", "fake-B/service-port"},
}

// target is one of the project's scale targets.
type target struct {
	what   string
	bench  string
	unit   string
	limit  float64
	atMost bool // the value must be ≤ limit (else ≥)
}

var targets = []target{
	{"Cold sync 5,000 services × 10 endpoints ≤ 180 ms", "ColdSync/services=5000/endpoints=10", "ns/op", 180e6, true},
	{"Cold sync 50,000 × 1 ≥ 45,000 services/s", "ColdSync/services=50000/endpoints=1", "services/s", 45000, false},
	{"Cold delete 50,000 × 1 ≥ 45,000 services/s", "ColdDelete/services=50000/endpoints=1", "services/s", 45000, false},
	{"Endpoint change: one VPP call (fake VPP)", "EndpointChange/services=10000/vpp=fake", "vpp-calls/op", 1, true},
	{"Endpoint change ≤ 50 µs control-plane CPU", "EndpointChange/services=10000/vpp=instant", "ns/op", 50e3, true},
	{"Heap ≤ 1 KiB per service port (5,000 × 10)", "SteadyStateHeap/services=5000/endpoints=10", "heap-B/service-port", 1024, true},
	{"Heap ≤ 1 KiB per service port (50,000 × 10)", "SteadyStateHeap/services=50000/endpoints=10", "heap-B/service-port", 1024, true},
	{"Heap ≤ 1 KiB per service port (50,000 × 1)", "SteadyStateHeap/services=50000/endpoints=1", "heap-B/service-port", 1024, true},
	// The targets set beside the ratios against kube-proxy.
	{"Issue 15: heap ≤ 1.5 KiB per service port (5,000 × 10)", "SteadyStateHeap/services=5000/endpoints=10", "heap-B/service-port", 1536, true},
	{"Issue 15: cold sync 50,000 × 1 ≤ 10 µs per service (≥ 100,000 services/s)", "ColdSync/services=50000/endpoints=1", "services/s", 100000, false},
	{"Issue 15: endpoint change ≤ 25 µs control-plane CPU", "EndpointChange/services=10000/vpp=instant", "ns/op", 25e3, true},
}

// serviceChanges are the sizes whose service-change cost must not depend
// on the number of other services.
var serviceChanges = []string{"ServiceChange/services=1000/vpp=instant", "ServiceChange/services=10000/vpp=instant", "ServiceChange/services=50000/vpp=instant"}

func writeTables(w io.Writer, names []string, results map[string]result) {
	fmt.Fprintln(w, "| Benchmark (median) | "+strings.Join(titles(), " | ")+" |")
	fmt.Fprintln(w, "|---"+strings.Repeat("|---", len(columns))+"|")
	for _, n := range names {
		cells := make([]string, len(columns))
		for i, c := range columns {
			if v, ok := results[n][c.unit]; ok {
				cells[i] = format(c.unit, v)
			}
		}
		fmt.Fprintf(w, "| `%s` | %s |\n", n, strings.Join(cells, " | "))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| Target | Measured | Met? |")
	fmt.Fprintln(w, "|---|---|---|")
	for _, t := range targets {
		v, ok := results[t.bench][t.unit]
		if !ok {
			fmt.Fprintf(w, "| %s | not run | — |\n", t.what)
			continue
		}
		fmt.Fprintf(w, "| %s | %s | %s |\n", t.what, format(t.unit, v), verdict(t, v))
	}
	var costs []string
	lo, hi := 0.0, 0.0
	for _, n := range serviceChanges {
		v, ok := results[n]["ns/op"]
		if !ok {
			continue
		}
		costs = append(costs, format("ns/op", v))
		if lo == 0 || v < lo {
			lo = v
		}
		hi = max(hi, v)
	}
	if len(costs) == len(serviceChanges) {
		met := "yes"
		if hi > 2*lo {
			met = fmt.Sprintf("no: %.1f× from the smallest to the largest", hi/lo)
		}
		fmt.Fprintf(w, "| Service change independent of other services (1k / 10k / 50k) | %s | %s |\n", strings.Join(costs, " / "), met)
	}
}

func titles() []string {
	out := make([]string, len(columns))
	for i, c := range columns {
		out[i] = c.title
	}
	return out
}

// verdict says whether v meets t, and by how much it misses.
func verdict(t target, v float64) string {
	if (t.atMost && v <= t.limit) || (!t.atMost && v >= t.limit) {
		return "yes"
	}
	if t.atMost {
		return fmt.Sprintf("no: %.0f %% over", (v/t.limit-1)*100)
	}
	return fmt.Sprintf("no: %.0f %% short", (1-v/t.limit)*100)
}

// format prints a metric the way the docs do.
func format(unit string, v float64) string {
	switch unit {
	case "ns/op":
		switch {
		case v >= 1e9:
			return fmt.Sprintf("%.2f s", v/1e9)
		case v >= 1e6:
			return fmt.Sprintf("%.1f ms", v/1e6)
		case v >= 1e3:
			return fmt.Sprintf("%.0f µs", v/1e3)
		}
		return fmt.Sprintf("%.0f ns", v)
	case "B/op":
		switch {
		case v >= 1e6:
			return fmt.Sprintf("%.1f MB", v/1e6)
		case v >= 1e3:
			return fmt.Sprintf("%.1f KB", v/1e3)
		}
		return fmt.Sprintf("%.0f B", v)
	case "vpp-calls/op":
		return fmt.Sprintf("%.3f", v)
	case "heap-B/service-port", "fake-B/service-port":
		return fmt.Sprintf("%.0f B", v)
	}
	return fmt.Sprintf("%.0f", v)
}
