package realvpp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/netip"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/core"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/vppsvc/vppsvc/internal/benchmarks"
	"github.com/vppsvc/vppsvc/processor"
	rv "github.com/vppsvc/vppsvc/realvpp"
)

// churnEnv enables TestChaosChurn and gives its duration (make
// chaos-realvpp sets 10m); churnSeedEnv replays another sequence.
const (
	churnEnv     = "VPPSVC_CHAOS_CHURN"
	churnSeedEnv = "VPPSVC_CHAOS_SEED"
)

// The churned cluster: churnServices services of 2 endpoints each at the
// start, drawn from churnPool service indexes (the others are the services
// a change may add back), plus service churnPool without endpoints;
// churnRate changes per second, sampled every churnSample.
const (
	churnServices = 10000
	churnPool     = 11000
	churnSlots    = 8 // endpoint addresses a service draws from
	churnRate     = 100
	churnSample   = 10 * time.Second
)

// TestChaosChurn is the chaos suite's churn against a real VPP 25.10: from a
// cold-synced cluster of 10,000 services × 2 endpoints (NAT44-ED LB
// mappings), 100 changes a second through the product's agent for
// VPPSVC_CHAOS_CHURN (skipped when unset), drawn by a seeded PRNG
// (VPPSVC_CHAOS_SEED, default 1): 80 % endpoint changes (a service with 2
// endpoints gains or loses one, with 1 or 3 goes back to 2, so the one
// backend's LB mapping with its placeholder local comes and goes, and the
// mean stays 2), 20 % alternately a service
// deleted (slice first) and a deleted one added back with 2 endpoints
// (service first), so the count stays 10,000. One more service has no
// endpoints throughout, as in a real cluster (see churnModel.snapshot).
// The changes come on a schedule, change i at i/100 s, as an API server's
// events do: a change that starts late (the agent still busy with the one
// before, a GC, a busy machine) is made at once, and the agent keeps up if
// it catches up; a ticker would drop the late ticks and count the machine's
// stalls as changes never asked for. Every 10 s it samples the test process's RSS (the agent runs in
// it), the Go heap and VPP's main heap. At the end it waits for the agent to
// converge and compares VPP's NAT44 mappings with those the final objects
// give (checkMappings), and checks that neither the RSS nor VPP's heap grew:
// the mean of the last third of the samples within 10 % of the first
// third's.
func TestChaosChurn(t *testing.T) {
	env := os.Getenv(churnEnv)
	if env == "" {
		t.Skipf("the churn runs only with %s=<duration> (make chaos-realvpp: 10m)", churnEnv)
	}
	duration, err := time.ParseDuration(env)
	if err != nil {
		t.Fatalf("%s: %v", churnEnv, err)
	}
	seed := uint64(1)
	if s := os.Getenv(churnSeedEnv); s != "" {
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("%s: %v", churnSeedEnv, err)
		}
	}
	n := openNode(t)
	buildNode(t, n, false)
	a := startAgent(t, n, ipv4, 0, "uplink0", "host0")
	defer a.stop()
	m := newChurnModel()
	cold := time.Now()
	a.Processor.Resync(m.snapshot())
	a.converge(t)
	t.Logf("seed %d: cold sync of %d services × 2 endpoints in %s", seed, churnServices, time.Since(cold).Round(time.Millisecond))
	checkMappings(t, n, m.mappings())

	rng := rand.New(rand.NewPCG(seed, seed))
	type sample struct {
		at                    time.Duration
		rss, goHeap, vppHeap  float64
		pending, failed, done int
	}
	var samples []sample
	take := func(at time.Duration, done int) {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		st := a.Reconciler.Stats()
		samples = append(samples, sample{at: at, rss: rss(t), goHeap: float64(ms.HeapAlloc), vppHeap: heapUsed(t, n),
			pending: st.Pending, failed: st.Failed, done: done})
	}
	failuresByMsg0 := a.Reconciler.Stats().CallFailures
	failures0 := sumCalls(failuresByMsg0)
	callsByMsg0 := a.Reconciler.Stats().Calls
	calls0 := sumCalls(callsByMsg0)
	var changes, late, svcOps int
	var slowest, behind time.Duration
	start := time.Now()
	take(0, 0)
	next := churnSample
	for time.Since(start) < duration {
		due := start.Add(time.Duration(changes) * time.Second / churnRate)
		if wait := time.Until(due); wait > 0 {
			time.Sleep(wait)
		}
		begin := time.Now()
		behind = max(behind, begin.Sub(due))
		if rng.IntN(5) == 0 {
			m.serviceChange(a.Processor, rng, svcOps%2 == 0)
			svcOps++
		} else {
			m.endpointChange(a.Processor, rng)
		}
		took := time.Since(begin)
		slowest = max(slowest, took)
		if took > time.Second/churnRate {
			late++
		}
		changes++
		if el := time.Since(start); el >= next {
			take(el, changes)
			next += churnSample
		}
	}
	elapsed := time.Since(start)
	stopped := time.Now()
	if err := a.WaitConverged(context.Background(), 5*time.Minute); err != nil {
		t.Fatal(err)
	}
	converge := time.Since(stopped)
	st := a.Reconciler.Stats()
	failures := sumCalls(st.CallFailures) - failures0
	calls := sumCalls(st.Calls) - calls0
	take(time.Since(start), changes)
	for _, s := range samples {
		t.Logf("%6s %6d changes: RSS %6.1f MB, Go heap %6.1f MB, VPP main heap %6.1f MB used, pending %d, failed %d",
			s.at.Round(time.Second), s.done, s.rss/(1<<20), s.goHeap/(1<<20), s.vppHeap/(1<<20), s.pending, s.failed)
	}
	t.Logf("%d changes in %s (%.1f/s; %d service adds/deletes), slowest %s, %d over their 10 ms tick, at most %s behind the schedule; %d VPP calls, %d failed; converged %s after the last change",
		changes, elapsed.Round(time.Millisecond), float64(changes)/elapsed.Seconds(), svcOps, slowest.Round(time.Microsecond), late, behind.Round(time.Millisecond), calls, failures, converge.Round(time.Millisecond))
	var byMsg []string
	for msg, c := range st.Calls {
		if d := c - callsByMsg0[msg]; d > 0 && !isReadOnly(msg) {
			byMsg = append(byMsg, fmt.Sprintf("%s %d", msg, d))
		}
	}
	slices.Sort(byMsg)
	t.Logf("VPP writes during the churn: %s", strings.Join(byMsg, ", "))
	if failures != 0 {
		var failedMsgs []string
		for msg, c := range st.CallFailures {
			if d := c - failuresByMsg0[msg]; d > 0 {
				failedMsgs = append(failedMsgs, fmt.Sprintf("%s %d", msg, d))
			}
		}
		slices.Sort(failedMsgs)
		t.Logf("failed VPP calls during the churn: %s; items failed now: %s", strings.Join(failedMsgs, ", "), a.Divergence())
	}
	checkMappings(t, n, m.mappings())
	checkState(t, a, n)

	if want := int(duration.Seconds()*churnRate) * 95 / 100; changes < want {
		t.Errorf("only %d changes in %s: the agent did not keep up with %d/s", changes, duration, churnRate)
	}
	if failures != 0 {
		t.Errorf("%d VPP calls failed during the churn", failures)
	}
	// Growth: the last third's mean against the first third's, over the
	// samples taken during the churn (the one before it and the one after
	// convergence aside: the first changes allocate what the churn then
	// reuses).
	body := samples[1 : len(samples)-1]
	if len(body) < 6 {
		t.Logf("too few samples (%d) to judge growth: run for a minute or more", len(body))
		return
	}
	third := len(body) / 3
	mean := func(ss []sample, f func(sample) float64) float64 {
		var sum float64
		for _, s := range ss {
			sum += f(s)
		}
		return sum / float64(len(ss))
	}
	for _, g := range []struct {
		what string
		f    func(sample) float64
	}{{"the agent's RSS", func(s sample) float64 { return s.rss }}, {"VPP's main heap", func(s sample) float64 { return s.vppHeap }}} {
		first, last := mean(body[:third], g.f), mean(body[len(body)-third:], g.f)
		t.Logf("%s: first third %.1f MB, last third %.1f MB (%+.1f %%)", g.what, first/(1<<20), last/(1<<20), 100*(last-first)/first)
		if last > first*1.10 {
			t.Errorf("%s grew over the churn: first third's mean %.1f MB, last third's %.1f MB (> +10 %%)", g.what, first/(1<<20), last/(1<<20))
		}
	}
}

// churnModel is the desired cluster of TestChaosChurn (beside service
// churnPool, which never has endpoints), kept beside the
// agent as the oracle: which services exist and the endpoint slots
// (bit j: address 10.0.0.0 + i·8 + j + 1) each has.
type churnModel struct {
	eps              []uint8
	present, deleted []int
}

func newChurnModel() *churnModel {
	m := &churnModel{eps: make([]uint8, churnPool)}
	for i := range churnPool {
		if i < churnServices {
			m.present = append(m.present, i)
			m.eps[i] = 0b11
		} else {
			m.deleted = append(m.deleted, i)
		}
	}
	return m
}

func (m *churnModel) endpoint(i, slot int) netip.Addr {
	return offsetAddr(netip.MustParseAddr("10.0.0.0"), i*churnSlots+slot+1)
}

// slice is service i's endpoint slice with its current endpoints, on this
// node.
func (m *churnModel) slice(i int) *discoveryv1.EndpointSlice {
	s := benchmarks.EndpointSlice(i, 0, 0)
	ready, node := true, benchmarks.NodeName
	for slot := range churnSlots {
		if m.eps[i]&(1<<slot) != 0 {
			s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{m.endpoint(i, slot).String()},
				Conditions: discoveryv1.EndpointConditions{Ready: &ready}, NodeName: &node})
		}
	}
	return s
}

func (m *churnModel) snapshot() processor.Snapshot {
	s := snapshot(0, 0, false, false)
	// A service without endpoints, as a real cluster has: its filter rule
	// keeps the renderer's filter-ACL shards bound, so a service briefly
	// without endpoints (added before its slice) changes one shard
	// instead of binding and unbinding all of them.
	s.Services = append(s.Services, benchmarks.Service(churnPool))
	for _, i := range m.present {
		s.Services = append(s.Services, benchmarks.Service(i))
		s.EndpointSlices = append(s.EndpointSlices, m.slice(i))
	}
	return s
}

// endpointChange adds or removes one endpoint of a random service: one
// with 2 endpoints gains or loses one, one with 1 or 3 goes back to 2.
func (m *churnModel) endpointChange(p *processor.Processor, rng *rand.Rand) {
	i := m.present[rng.IntN(len(m.present))]
	var free, used []int
	for slot := range churnSlots {
		if m.eps[i]&(1<<slot) != 0 {
			used = append(used, slot)
		} else {
			free = append(free, slot)
		}
	}
	switch c := len(used); {
	case c < 2 || c == 2 && rng.IntN(2) == 0:
		m.eps[i] |= 1 << free[rng.IntN(len(free))]
	default:
		m.eps[i] &^= 1 << used[rng.IntN(len(used))]
	}
	p.UpdateEndpointSlice(m.slice(i))
}

// serviceChange deletes a random service with its slice, or adds back a
// random deleted one with 2 endpoints.
func (m *churnModel) serviceChange(p *processor.Processor, rng *rand.Rand, del bool) {
	from, to := &m.deleted, &m.present
	if del {
		from, to = &m.present, &m.deleted
	}
	j := rng.IntN(len(*from))
	i := (*from)[j]
	(*from)[j] = (*from)[len(*from)-1]
	*from = (*from)[:len(*from)-1]
	*to = append(*to, i)
	if del {
		s := benchmarks.Service(i)
		p.DeleteEndpointSlice(s.Namespace, s.Name+"-abcde")
		p.DeleteService(s.Namespace, s.Name)
		return
	}
	first := rng.IntN(churnSlots)
	m.eps[i] = 1<<first | 1<<((first+1+rng.IntN(churnSlots-1))%churnSlots)
	p.UpdateService(benchmarks.Service(i))
	p.UpdateEndpointSlice(m.slice(i))
}

// lbPlaceholder is the local an LB mapping of one backend carries beside
// it (vppcfg.LBPlaceholder for a frontend on port 80), as the dump shows it.
const lbPlaceholder = "0.0.0.0:80"

// mappings is what the NAT44 renderer must make of the model: per
// present service with endpoints, its ClusterIP:80/tcp → its endpoints,
// an LB mapping (of one backend and the placeholder, or of several).
func (m *churnModel) mappings() map[string]string {
	out := make(map[string]string, len(m.present))
	for _, i := range m.present {
		var locals []string
		for slot := range churnSlots {
			if m.eps[i]&(1<<slot) != 0 {
				locals = append(locals, netip.AddrPortFrom(m.endpoint(i, slot), 80).String())
			}
		}
		if len(locals) == 0 {
			continue
		}
		if len(locals) == 1 {
			// One backend: an LB mapping with the placeholder local.
			locals = append(locals, lbPlaceholder)
		}
		ext := netip.AddrPortFrom(netip.MustParseAddr(benchmarks.Service(i).Spec.ClusterIP), 80)
		slices.Sort(locals)
		out[fmt.Sprintf("%s/%d", ext, protoNumber(corev1.ProtocolTCP))] = "lb " + strings.Join(locals, ",")
	}
	return out
}

func protoNumber(p corev1.Protocol) int {
	switch p {
	case corev1.ProtocolUDP:
		return 17
	case corev1.ProtocolSCTP:
		return 132
	}
	return 6
}

// checkMappings compares VPP's NAT44-ED static and LB mappings, dumped on
// a connection of their own, with want (external address:port/protocol →
// "static"|"lb" and the sorted locals): nothing missing, extra, doubled or
// different. It is an oracle independent of the agent: the mappings the
// Kubernetes objects give, not those the agent derived from them.
func checkMappings(tb testing.TB, n *rv.Node, want map[string]string) {
	tb.Helper()
	got, err := nat44Mappings(n)
	if err != nil {
		tb.Fatal(err)
	}
	var problems []string
	for k, w := range want {
		g, ok := got[k]
		delete(got, k)
		switch {
		case !ok:
			problems = append(problems, "missing "+k+" → "+w)
		case len(g) > 1:
			problems = append(problems, fmt.Sprintf("%d × %s", len(g), k))
		case g[0] != w:
			problems = append(problems, fmt.Sprintf("%s: want %s, VPP has %s", k, w, g[0]))
		}
	}
	for k, g := range got {
		problems = append(problems, fmt.Sprintf("extra %s → %v", k, g))
	}
	slices.Sort(problems)
	if len(problems) > 0 {
		tb.Fatalf("VPP's NAT44 mappings differ from the desired ones in %d places:\n%s", len(problems), strings.Join(problems[:min(len(problems), 20)], "\n"))
	}
	tb.Logf("VPP holds the %d desired NAT44 mappings, nothing missing, extra, doubled or different", len(want))
}

// nat44Mappings dumps VPP's NAT44-ED static and LB mappings, keyed as
// churnModel.mappings.
func nat44Mappings(n *rv.Node) (map[string][]string, error) {
	conn, err := core.Connect(n.Adapter())
	if err != nil {
		return nil, err
	}
	defer conn.Disconnect()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rpc := nat44_ed.NewServiceClient(conn)
	out := map[string][]string{}
	key := func(ip [4]byte, port uint16, proto uint8) string {
		return fmt.Sprintf("%s/%d", netip.AddrPortFrom(netip.AddrFrom4(ip), port), proto)
	}
	sm, err := rpc.Nat44StaticMappingDump(ctx, &nat44_ed.Nat44StaticMappingDump{})
	if err != nil {
		return nil, err
	}
	for {
		d, err := sm.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("nat44_static_mapping_dump: %w", err)
		}
		k := key(d.ExternalIPAddress, d.ExternalPort, d.Protocol)
		out[k] = append(out[k], "static "+netip.AddrPortFrom(netip.AddrFrom4(d.LocalIPAddress), d.LocalPort).String())
	}
	lb, err := rpc.Nat44LbStaticMappingDump(ctx, &nat44_ed.Nat44LbStaticMappingDump{})
	if err != nil {
		return nil, err
	}
	for {
		d, err := lb.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("nat44_lb_static_mapping_dump: %w", err)
		}
		var locals []string
		for _, l := range d.Locals {
			locals = append(locals, netip.AddrPortFrom(netip.AddrFrom4(l.Addr), l.Port).String())
		}
		slices.Sort(locals)
		k := key(d.ExternalAddr, d.ExternalPort, d.Protocol)
		out[k] = append(out[k], "lb "+strings.Join(locals, ","))
	}
	return out, nil
}

// rss is the test process's resident set (VmRSS of /proc/self/status),
// in bytes: the agent runs in it.
func rss(tb testing.TB) float64 {
	tb.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmRSS:" {
			kb, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				tb.Fatal(err)
			}
			return kb * 1024
		}
	}
	tb.Fatal("no VmRSS in /proc/self/status")
	return 0
}

func sumCalls(m map[string]uint64) uint64 {
	var s uint64
	for _, v := range m {
		s += v
	}
	return s
}
