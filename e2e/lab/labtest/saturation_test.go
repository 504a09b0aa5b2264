package labtest

import (
	"context"
	"os/exec"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/vppsvc/vppsvc/e2e/lab/cpumeter"
	"github.com/vppsvc/vppsvc/e2e/lab/netexec"
)

// Saturation's load: every client pod of a side keeps satConns
// connections busy with requests through the ClusterIP, one request at a
// time each, for satTime or satRequests requests per connection,
// whichever ends first.
const (
	satConns    = 4
	satTime     = 3 * time.Second
	satRequests = 20000
)

// saturationFigures measures each side at saturation: the three client
// pods of the side (12 connections, many flows at once) through the
// ClusterIP to the one server pod, bounded in time and count. It reports
// packets per second (the client pods' eth0 counters) and packets per
// CPU-second of the data plane (perf, as cpuFigures measures it, less the
// idle baseline): at saturation VPP handles vectors of packets per
// wake-up, which the one-at-a-time figures never show. On 2 cores the
// clients and the server take their share of the CPUs too, so the packet
// rate is the machine's, the ratio per CPU-second the data plane's.
func saturationFigures(t *testing.T, sides []*side, f corev1.IPFamily) {
	if _, err := exec.LookPath(cpumeter.PerfPath); err != nil {
		t.Skipf("perf not found: %v", err)
	}
	vpp := vppPIDs(t)
	pps, perCPU := perSide{}, perSide{}
	for round := range rounds {
		base := measureCPU(t, sides[0].srv, vpp, func() { time.Sleep(4 * time.Second) })
		for _, s := range sides {
			clients := []*corev1.Pod{s.viaSvc, s.viaNodePort, s.direct}
			count := func() (n uint64) {
				for _, c := range clients {
					n += packets(t, podNS(c))
				}
				return n
			}
			before := count()
			var failed sync.Map
			run := measureCPU(t, s.srv, vpp, func() {
				ctx, cancel := context.WithTimeout(context.Background(), satTime)
				defer cancel()
				var wg sync.WaitGroup
				for _, c := range clients {
					for range satConns {
						wg.Go(func() {
							if _, err := netexec.RTT(ctx, fromPod(c), s.clusterIP(f), satRequests); err != nil && ctx.Err() == nil {
								failed.Store(c.Name, err)
							}
						})
					}
				}
				wg.Wait()
			})
			failed.Range(func(k, v any) bool {
				t.Logf("round %d %s: a client of %s failed: %v", round, s.name, k, v)
				return true
			})
			n := float64(count() - before)
			run.perUnit(base, n, s.server.IsKernel())
			pps[s.name] = append(pps[s.name], n/run.elapsed.Seconds())
			// perUnit gives µs of data-plane CPU per packet.
			perCPU[s.name] = append(perCPU[s.name], 1e6/run.dpPer)
			t.Logf("round %d %s: %.0f packets in %s (%.0f/s): data plane %.2f µs/packet (%s)",
				round, s.name, n, run.elapsed.Round(time.Millisecond), n/run.elapsed.Seconds(), run.dpPer, samples(run.profile))
		}
	}
	fam := famName(f)
	pps.report(t, sides, fam, "packets/s at saturation through the ClusterIP (3 clients × 4 connections)", "pkt/s")
	perCPU.report(t, sides, fam, "packets per data-plane CPU-second at saturation through the ClusterIP (perf)", "pkt/CPU-s")
}
