package main

import (
	"bufio"
	"io"
	"slices"
	"strconv"
	"strings"
)

// result is one benchmark's metrics (unit → value), the median over its
// runs when it ran more than once (-count).
type result map[string]float64

// parse reads `go test -bench` output, copying every line to echo, and
// returns the metrics of each benchmark by name (without the -GOMAXPROCS
// suffix), in order of first appearance, and whether the run failed.
func parse(r io.Reader, echo io.Writer) (names []string, results map[string]result, failed bool, err error) {
	runs := map[string]map[string][]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if echo != nil {
			io.WriteString(echo, line+"\n")
		}
		if strings.HasPrefix(line, "FAIL") || strings.HasPrefix(line, "--- FAIL") || strings.HasPrefix(line, "panic:") {
			failed = true
		}
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			continue // a benchmark's log line, not its result
		}
		name := strings.TrimPrefix(f[0], "Benchmark")
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i]
			}
		}
		if runs[name] == nil {
			runs[name] = map[string][]float64{}
			names = append(names, name)
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				break
			}
			runs[name][f[i+1]] = append(runs[name][f[i+1]], v)
		}
	}
	results = make(map[string]result, len(runs))
	for name, metrics := range runs {
		res := result{}
		for unit, vs := range metrics {
			res[unit] = median(vs)
		}
		results[name] = res
	}
	return names, results, failed, sc.Err()
}

func median(vs []float64) float64 {
	s := slices.Clone(vs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
