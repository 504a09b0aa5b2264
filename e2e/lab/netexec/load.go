package netexec

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"time"
)

// MaxConns bounds one ConnRate run, MaxRTTRequests one RTT run. A ConnRate connection ends in
// TIME_WAIT on the client, which holds its port for a minute; the bound keeps a run well below
// the namespace's ephemeral ports.
const (
	MaxConns       = 20000
	MaxRTTRequests = 100000
)

// ConnRateResult is a ConnRate run: connections that completed a request, failures, the time
// taken, and their quotient.
type ConnRateResult struct {
	Conns     int
	Failures  int
	Elapsed   time.Duration
	PerSecond float64
	// Errors are the first failures' messages.
	Errors []string
}

// ConnRate opens new TCP connections to addr one after another, each making one /hostname
// request with keep-alive off, until duration has passed or maxConns connections were made,
// and reports completed connections per second. One at a time measures the path's connection
// setup cost, not the client's parallelism; a 2-core machine has little parallelism to give.
func ConnRate(ctx context.Context, dial DialFunc, addr string, duration time.Duration, maxConns int) (ConnRateResult, error) {
	var res ConnRateResult
	if maxConns < 1 || maxConns > MaxConns {
		return res, fmt.Errorf("netexec: %d connections, want 1..%d", maxConns, MaxConns)
	}
	if duration <= 0 {
		return res, fmt.Errorf("netexec: duration %s", duration)
	}
	ctx, cancel := context.WithTimeout(ctx, duration)
	defer cancel()
	start := time.Now()
	for i := 0; i < maxConns && ctx.Err() == nil; i++ {
		if _, err := Hostname(ctx, dial, addr); err != nil {
			if ctx.Err() != nil || time.Since(start) >= duration {
				// Cut by the end of the run, not a failure of the path (the
				// socket's deadline can fire before the context's).
				break
			}
			res.Failures++
			if len(res.Errors) < maxKeptErrors {
				res.Errors = append(res.Errors, err.Error())
			}
			continue
		}
		res.Conns++
	}
	res.Elapsed = time.Since(start)
	if res.Conns == 0 {
		return res, fmt.Errorf("conn rate to %s: no connection completed (%d failures: %v)", addr, res.Failures, res.Errors)
	}
	res.PerSecond = float64(res.Conns) / res.Elapsed.Seconds()
	return res, nil
}

// RTTResult is the request round trip of an RTT run.
type RTTResult struct {
	N    int
	Min  time.Duration
	P50  time.Duration
	P99  time.Duration
	Max  time.Duration
	Mean time.Duration
}

// RTT makes n /hostname requests one after another over one keep-alive HTTP connection and
// reports their round trip: the path's per-packet cost without connection setup. Each request
// is bounded by RequestTimeout and the context. A failure
// ends the run and returns the figures of the requests that completed with the error.
func RTT(ctx context.Context, dial DialFunc, addr string, n int) (RTTResult, error) {
	if n < 1 || n > MaxRTTRequests {
		return RTTResult{}, fmt.Errorf("netexec: %d requests, want 1..%d", n, MaxRTTRequests)
	}
	dctx, cancel := context.WithTimeout(ctx, RequestTimeout)
	c, err := dial(dctx, "tcp", addr)
	cancel()
	if err != nil {
		return RTTResult{}, fmt.Errorf("rtt dial %s: %w", addr, err)
	}
	defer c.Close()
	defer context.AfterFunc(ctx, func() { c.Close() })()
	r := bufio.NewReader(c)
	samples := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/hostname", nil)
		if err != nil {
			return Summarize(samples), err
		}
		begin := time.Now()
		deadline := begin.Add(RequestTimeout)
		if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
			deadline = d
		}
		c.SetDeadline(deadline)
		if _, _, err := roundTrip(c, r, req); err != nil {
			return Summarize(samples), fmt.Errorf("rtt to %s, request %d: %w", addr, i+1, err)
		}
		samples = append(samples, time.Since(begin))
	}
	return Summarize(samples), nil
}

// Summarize sorts samples in place and returns their figures; no samples give zeros.
func Summarize(samples []time.Duration) RTTResult {
	if len(samples) == 0 {
		return RTTResult{}
	}
	slices.Sort(samples)
	var sum time.Duration
	for _, s := range samples {
		sum += s
	}
	return RTTResult{
		N:    len(samples),
		Min:  samples[0],
		P50:  Percentile(samples, 50),
		P99:  Percentile(samples, 99),
		Max:  samples[len(samples)-1],
		Mean: sum / time.Duration(len(samples)),
	}
}

// Percentile is the nearest-rank p-th percentile of sorted samples: the smallest sample with
// at least p percent of the samples at or below it. No samples give 0; p is clamped to 0..100.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	p = math.Max(0, math.Min(100, p))
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	if rank < 1 {
		rank = 1
	}
	return sorted[rank-1]
}
