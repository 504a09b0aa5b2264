package govppdriver

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.fd.io/govpp/adapter"
	"go.fd.io/govpp/api"

	"github.com/vppsvc/vppsvc/fakevpp"
	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
	"github.com/vppsvc/vppsvc/vppcfg/engine"
	"github.com/vppsvc/vppsvc/vppcfg/vppcfgtest"
)

// End-to-end tests of the layer: reconciler → driver → govpp core and codec
// → fakevpp. Address plan as in driver_test.go; LB VIPs count up from
// 10.96.0.1, backends from 10.1.1.1.

func lbMapping(i, locals int) *vppcfg.NAT44LBMapping {
	vip := netip.AddrFrom4([4]byte{10, 96, byte(i >> 8), byte(i)})
	m := &vppcfg.NAT44LBMapping{External: netip.AddrPortFrom(vip, 80), Protocol: vppcfg.ProtoTCP, Out2InOnly: true,
		Label: fmt.Sprintf("default/svc-%d:http", i)}
	for j := range locals {
		be := netip.AddrFrom4([4]byte{10, 1, byte(j), byte(1 + i%250)})
		m.Locals = append(m.Locals, vppcfg.NAT44LBLocal{Addr: netip.AddrPortFrom(be, 8080), Probability: 1})
	}
	vppcfg.SortLBLocals(m.Locals)
	return m
}

// baseItems is the configuration around the mappings of every test.
func baseItems() []vppcfg.Item {
	return []vppcfg.Item{
		&vppcfg.NAT44Global{},
		&vppcfg.NAT44Address{Addr: netip.MustParseAddr("1.1.1.1"), VRF: vppcfg.AnyVRF},
		&vppcfg.NAT44Address{Addr: netip.MustParseAddr("10.1.1.253"), TwiceNAT: true, VRF: vppcfg.AnyVRF},
		&vppcfg.NAT44Interface{Interface: "tap0", Role: vppcfg.NAT44Inside},
		&vppcfg.NAT44Interface{Interface: "tap0", Role: vppcfg.NAT44Outside},
		&vppcfg.NAT44Interface{Interface: "eth0", Role: vppcfg.NAT44Outside},
		&vppcfg.NAT44StaticMapping{External: ap("1.1.1.1:443"), Protocol: vppcfg.ProtoTCP, Local: ap("10.1.1.9:8443"), Label: "default/single"},
		&vppcfg.NAT44IdentityMapping{Addr: netip.MustParseAddr("192.168.0.1"), Port: 22, Protocol: vppcfg.ProtoTCP, Label: "ssh"},
		&vppcfg.ACL{Name: "permit-all", Rules: []vppcfg.ACLRule{
			{Action: vppcfg.ACLPermit, Src: pfx("0.0.0.0/0"), Dst: pfx("0.0.0.0/0")},
			{Action: vppcfg.ACLPermit, Src: pfx("::/0"), Dst: pfx("::/0")}}},
		&vppcfg.ACL{Name: "default/web", Rules: []vppcfg.ACLRule{
			{Action: vppcfg.ACLDeny, Src: pfx("10.2.0.0/16"), Dst: pfx("10.1.1.0/24"), Protocol: vppcfg.ProtoTCP, DstPorts: vppcfg.SinglePort(8080)}}},
		&vppcfg.ACLBinding{Interface: "tap0", Direction: vppcfg.ACLOutput, ACL: "default/web", Priority: 10},
		&vppcfg.ACLBinding{Interface: "tap0", Direction: vppcfg.ACLOutput, ACL: "permit-all", Priority: 1000},
	}
}

// cnatItems are the cnat part of the configuration, used when the fake
// serves cnat (a VIP range apart from the NAT44 one).
func cnatItems() []vppcfg.Item {
	return []vppcfg.Item{
		&vppcfg.CNATTranslation{VIP: ap("10.98.0.1:80"), Protocol: vppcfg.ProtoTCP, AllocPort: true,
			Paths: []vppcfg.CNATPath{{Dst: ap("10.1.1.2:8080")}, {Src: ap("10.1.1.254:0"), Dst: ap("10.1.1.3:8080")}}},
		&vppcfg.CNATTranslation{VIP: ap("[fd00::10]:80"), Protocol: vppcfg.ProtoTCP, LBType: vppcfg.CNATLBMaglev,
			Paths: []vppcfg.CNATPath{{Dst: ap("[fd00::1:2]:8080")}, {Dst: ap("[fd00::1:3]:8080")}}},
		&vppcfg.CNATSnatConfig{SnatIP4: netip.MustParseAddr("10.1.1.254"), SnatIP6: netip.MustParseAddr("fd00::fe"),
			Policy: vppcfg.CNATSnatPolicyK8s, ExcludePrefixes: []netip.Prefix{pfx("10.0.0.0/8"), pfx("fd00::/16")}},
		&vppcfg.CNATSnatInterface{Interface: "tap0", Table: vppcfg.CNATSnatPod},
		&vppcfg.InterfaceFeature{Interface: "tap0", Arc: "ip6-unicast", Feature: "cnat-snat-ip6"},
	}
}

// reasserted are the messages of kinds VPP cannot dump, which the layer
// re-sends (idempotently) after a (re)connect.
var reasserted = map[string]bool{"cnat_set_snat_addresses": true, "cnat_set_snat_policy": true,
	"cnat_snat_policy_add_del_exclude_pfx": true, "cnat_snat_policy_add_del_if": true, "feature_enable_disable": true}

func withCNAT(t testing.TB, d *Driver, its []vppcfg.Item) []vppcfg.Item {
	if !d.caps.Load().cnat {
		t.Log("fakevpp does not serve cnat: cnat items left out")
		return its
	}
	return append(slices.Clone(its), cnatItems()...)
}

func desiredItems(mappings, locals int) []vppcfg.Item {
	its := baseItems()
	for i := range mappings {
		its = append(its, lbMapping(i+1, locals))
	}
	return its
}

func reconcilerOptions() engine.Options {
	return engine.Options{Logger: quietLogger(), RetryMin: time.Millisecond, RetryMax: 20 * time.Millisecond,
		InterfacePoll: 50 * time.Millisecond}
}

// run starts r until the returned stop is called.
func run(t testing.TB, r *engine.Reconciler) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Start(ctx) }()
	var stopped bool
	stop = func() {
		if !stopped {
			stopped = true
			cancel()
			assert.NoError(t, <-done)
		}
	}
	t.Cleanup(stop)
	return stop
}

func converged(r *engine.Reconciler) bool {
	s := r.Stats()
	return s.Synced && s.Pending == 0 && s.Failed == 0 && s.Applied == s.Desired
}

func waitConverged(t testing.TB, r *engine.Reconciler, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !converged(r) {
		if time.Now().After(deadline) {
			var bad []string
			for _, s := range r.Statuses() {
				if s.State != engine.StateApplied {
					bad = append(bad, s.String())
				}
			}
			t.Fatalf("not converged after %s: %+v\n%s", within, r.Stats(), strings.Join(bad[:min(len(bad), 10)], "\n"))
		}
		time.Sleep(time.Millisecond)
	}
}

// mutatingCalls returns the calls that change VPP state (anything but
// dumps, show/get queries and event subscriptions).
func mutatingCalls(v *fakevpp.VPP) map[string]int {
	out := map[string]int{}
	for name, n := range v.Calls() {
		readOnly := strings.HasSuffix(name, "_dump") || strings.HasSuffix(name, "_get") ||
			strings.Contains(name, "_show_") || strings.HasPrefix(name, "want_") ||
			name == "cnat_get_snat_addresses" || name == "feature_is_enabled"
		if !readOnly {
			out[name] = n
		}
	}
	return out
}

// addForeign programs objects of other control planes: an untagged static
// mapping, an LB mapping tagged by someone else, and a foreign ACL bound to
// tap0 input.
func addForeign(t *testing.T, v *fakevpp.VPP) {
	d := connect(t, v, false)
	tap0, _ := v.InterfaceIndex("tap0")
	res := mustApply(t, d,
		create(&vppcfg.NAT44Global{}, ""),
		create(&vppcfg.NAT44StaticMapping{External: ap("1.1.1.1:25"), Protocol: vppcfg.ProtoTCP, Local: ap("10.1.1.25:25")}, ""),
		create(&vppcfg.NAT44LBMapping{External: ap("10.97.0.1:53"), Protocol: vppcfg.ProtoUDP, Out2InOnly: true,
			Locals: []vppcfg.NAT44LBLocal{{Addr: ap("10.1.1.53:53"), Probability: 1}, {Addr: ap("10.1.1.54:53"), Probability: 1}}}, "calico:dns"),
		create(&vppcfg.ACL{Name: "theirs", Rules: []vppcfg.ACLRule{{Action: vppcfg.ACLPermit, Src: pfx("0.0.0.0/0"), Dst: pfx("0.0.0.0/0")}}}, "calico:acl"))
	theirs := &driverapi.ACLAssignment{Interface: "tap0", InputIndexes: []uint32{res[3].Handle}}
	mustApply(t, d, driverapi.Op{Type: driverapi.OpUpdate, Key: theirs.Key(), SwIfIndex: tap0, Item: theirs})
}

// section returns one section of a fakevpp dump ("acl interfaces").
func section(dump, name string) string {
	var out []string
	in := false
	for _, l := range strings.Split(dump, "\n") {
		if !strings.HasPrefix(l, " ") {
			in = l == name+":"
			continue
		}
		if in {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func foreignLines(dump string) []string {
	var out []string
	for _, l := range strings.Split(dump, "\n") {
		if strings.Contains(l, "calico") || strings.Contains(l, "10.1.1.25:25") || strings.Contains(l, "in=[calico:acl") {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return out
}

func TestHitlessResync(t *testing.T) {
	v := newFake()
	addForeign(t, v)
	d1 := connect(t, v, true)
	want := withCNAT(t, d1, desiredItems(1000, 3))

	r1 := engine.NewReconciler(d1, reconcilerOptions())
	require.NoError(t, r1.Client("nat44").ResyncTxn().Put(want...).Commit(context.Background()))
	stop1 := run(t, r1)
	waitConverged(t, r1, 10*time.Second)
	stop1()
	golden := v.Dump()
	foreign := foreignLines(golden)
	require.Len(t, foreign, 4, section(golden, "acl interfaces"))
	assert.Contains(t, section(golden, "acl interfaces"), "tap0 in=[calico:acl] out=[vppsvc:nat44:default/web, vppsvc:nat44:permit-all]")

	// A fresh agent: new connection, same desired state: zero changes.
	v.ResetCalls()
	r2 := engine.NewReconciler(connect(t, v, false), reconcilerOptions())
	require.NoError(t, r2.Client("nat44").ResyncTxn().Put(want...).Commit(context.Background()))
	stop2 := run(t, r2)
	waitConverged(t, r2, 10*time.Second)
	stop2()
	calls := mutatingCalls(v)
	for name := range reasserted {
		delete(calls, name)
	}
	assert.Empty(t, calls, "no add/delete on a hitless restart (beyond re-asserting what VPP cannot dump)")
	assert.True(t, golden == v.Dump(), "VPP unchanged")

	// 10 mappings gone from the desired state, 10 new ones: 10 deletes, 10 adds.
	changed := desiredItems(990, 3)
	for i := range 10 {
		changed = append(changed, lbMapping(2001+i, 3))
	}
	changed = withCNAT(t, d1, changed)
	v.ResetCalls()
	r3 := engine.NewReconciler(connect(t, v, false), reconcilerOptions())
	require.NoError(t, r3.Client("nat44").ResyncTxn().Put(changed...).Commit(context.Background()))
	run(t, r3)
	waitConverged(t, r3, 10*time.Second)
	calls = mutatingCalls(v)
	for name := range reasserted {
		delete(calls, name)
	}
	assert.Equal(t, map[string]int{"nat44_add_del_lb_static_mapping": 20}, calls)
	after := v.Dump()
	assert.Equal(t, foreign, foreignLines(after), "foreign objects untouched")
	assert.NotContains(t, after, "10.96.3.232:80") // mapping 1000 went
	assert.Contains(t, after, "10.96.7.209:80")    // mapping 2001 came
	assert.Equal(t, strings.Count(golden, "\n  lb tcp 10.96."), strings.Count(after, "\n  lb tcp 10.96."))
	assert.Empty(t, nonCNATViolations(v))
}

// TestFaultInjection: with 10% of requests failing at random, the layer
// converges to exactly the state of a run without faults, for 100 seeds.
func TestFaultInjection(t *testing.T) {
	mappings, seeds := 200, 100
	if testing.Short() {
		mappings = 20
	}
	var want []vppcfg.Item
	golden := func() string {
		v := newFake()
		d := connect(t, v, true)
		want = withCNAT(t, d, desiredItems(mappings, 3))
		r := engine.NewReconciler(d, reconcilerOptions())
		require.NoError(t, r.Client("nat44").ResyncTxn().Put(want...).Commit(context.Background()))
		stop := run(t, r)
		waitConverged(t, r, 10*time.Second)
		stop()
		return v.Dump()
	}()
	retvals := []int32{int32(api.UNSPECIFIED), int32(api.VALUE_EXIST), int32(api.INVALID_VALUE)}
	faulted := 0
	for seed := range seeds {
		ok := t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			v := newFake()
			d := connect(t, v, true)
			v.FailRandom(0.1, int64(seed), retvals[seed%len(retvals)])
			r := engine.NewReconciler(d, reconcilerOptions())
			require.NoError(t, r.Client("nat44").ResyncTxn().Put(want...).Commit(context.Background()))
			stop := run(t, r)
			waitConverged(t, r, 20*time.Second)
			if seed%10 == 0 {
				// VPP restarts while requests keep failing: all is re-applied.
				// (Statuses alone cannot tell: a resync that dumped VPP just
				// before the restart reports converged until the reconnect.)
				v.Restart()
				require.Eventually(t, func() bool { return converged(r) && v.Dump() == golden }, 20*time.Second, time.Millisecond)
			}
			stop()
			v.ClearFaults()
			if got := v.Dump(); got != golden {
				assert.Equal(t, section(golden, "nat44-ed mappings")+section(golden, "acl interfaces"),
					section(got, "nat44-ed mappings")+section(got, "acl interfaces"))
				assert.True(t, got == golden, "dump differs from the run without faults")
			}
			for _, c := range d.CallStats() {
				if c.Failures > 0 && !strings.HasPrefix(c.Msg, "cnat_get") {
					faulted++
					break
				}
			}
		})
		if !ok {
			break
		}
	}
	assert.Greater(t, faulted, seeds*3/4, "most runs saw injected faults")
}

// TestVPPRestart: after a VPP restart everything is re-applied, with new
// ACL indexes, and interfaces that come back later get their items then.
func TestVPPRestart(t *testing.T) {
	v := newFake()
	d := connect(t, v, true)
	want := append(withCNAT(t, d, desiredItems(50, 2)), &vppcfg.NAT44Interface{Interface: "tap7", Role: vppcfg.NAT44Inside},
		&vppcfg.ACLBinding{Interface: "tap7", Direction: vppcfg.ACLInput, ACL: "permit-all"})
	v.AddInterface("tap7") // created through the API: gone after a restart
	r := engine.NewReconciler(d, reconcilerOptions())
	require.NoError(t, r.Client("nat44").ResyncTxn().Put(want...).Commit(context.Background()))
	run(t, r)
	waitConverged(t, r, 10*time.Second)
	golden := v.Dump()

	v.Restart()
	require.Eventually(t, func() bool { return r.Stats().Resyncs >= 2 }, 10*time.Second, time.Millisecond)
	k := vppcfgtest.NAT44InterfaceKey("tap7", vppcfg.NAT44Inside)
	require.Eventually(t, func() bool {
		s, _ := r.Status(k)
		return s.State == engine.StatePending && strings.Contains(s.Reason, "tap7")
	}, 10*time.Second, time.Millisecond)
	v.AddInterface("tap7")
	require.Eventually(t, func() bool { return converged(r) && v.Dump() == golden }, 10*time.Second, time.Millisecond,
		"restarted VPP holds the same configuration")
}

// TestPendingInterfaceEndToEnd: items of a missing interface wait, are
// applied when it appears, and wait again when it goes.
func TestPendingInterfaceEndToEnd(t *testing.T) {
	v := newFake()
	r := engine.NewReconciler(connect(t, v, true), reconcilerOptions())
	role := &vppcfg.NAT44Interface{Interface: "tap3", Role: vppcfg.NAT44Inside}
	bind := &vppcfg.ACLBinding{Interface: "tap3", Direction: vppcfg.ACLOutput, ACL: "permit-all"}
	require.NoError(t, r.Client("nat44").ResyncTxn().Put(append(baseItems(), role, bind)...).Commit(context.Background()))
	run(t, r)
	require.Eventually(t, func() bool { return r.Stats().Synced }, 5*time.Second, time.Millisecond)
	s, _ := r.Status(role.Key())
	assert.Equal(t, engine.StatePending, s.State)
	v.AddInterface("tap3")
	waitConverged(t, r, 5*time.Second)
	assert.Contains(t, v.Dump(), "tap3 in=[] out=[vppsvc:nat44:permit-all]")
	v.DeleteInterface("tap3")
	require.Eventually(t, func() bool {
		s, _ := r.Status(bind.Key())
		return s.State == engine.StatePending
	}, 5*time.Second, time.Millisecond)
	v.AddInterface("tap3")
	waitConverged(t, r, 5*time.Second)
}

// BenchmarkReconcileColdSync programs 20,000 LB mappings with 10 locals each
// (plus the base configuration) into an empty fake VPP through govpp: the
// reconciler's first resync, from the dump to the last reply. depth=1 turns
// pipelining off; rtt adds a per-reply latency like a VPP across a socket
// (the in-process fake answers at once, which hides round trips). The
// unpipelined run with latency takes long and runs only with
// VPPCFG_BENCH_SLOW=1.
func BenchmarkReconcileColdSync(b *testing.B) {
	want := desiredItems(20000, 10)
	for _, rtt := range []time.Duration{0, 50 * time.Microsecond} {
		for _, depth := range []int{256, 1} {
			if rtt > 0 && depth == 1 && os.Getenv("VPPCFG_BENCH_SLOW") == "" {
				continue // one round trip per message: about 20 s per iteration
			}
			b.Run(fmt.Sprintf("rtt=%s/depth=%d", rtt, depth), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					b.StopTimer()
					v := newFake()
					var a adapter.VppAPI = v
					if rtt > 0 {
						a = withLatency(v, rtt)
					}
					d, err := Connect(a, Options{Logger: quietLogger(), PipelineDepth: depth})
					require.NoError(b, err)
					waitEvent(b, d, driverapi.EventConnected)
					r := engine.NewReconciler(d, reconcilerOptions())
					require.NoError(b, r.Client("nat44").ResyncTxn().Put(want...).Commit(context.Background()))
					ctx, cancel := context.WithCancel(context.Background())
					done := make(chan error, 1)
					b.StartTimer()
					go func() { done <- r.Start(ctx) }()
					<-r.Synced()
					b.StopTimer()
					if !converged(r) {
						b.Fatalf("not converged: %+v", r.Stats())
					}
					if n := v.Calls()["nat44_add_del_lb_static_mapping"]; n != 20000 {
						b.Fatalf("%d LB mapping adds", n)
					}
					cancel()
					<-done
					d.Close()
					b.StartTimer()
				}
			})
		}
	}
}

// BenchmarkRecoveryAfterVPPRestart restarts the fake VPP under a layer
// that holds the 20,000 LB mappings of BenchmarkReconcileColdSync, with a
// socket's round trip, and measures the time until everything is applied
// again, as a multiple of the cold sync (x-cold-sync): the target is at
// most 1 (the real VPP's figures are TestChaosRecoveryAsFastAsColdSync's).
// Detection (govpp's health check, 50 ms in these tests) is included.
func BenchmarkRecoveryAfterVPPRestart(b *testing.B) {
	want := desiredItems(20000, 10)
	v := newFake()
	d, err := Connect(withLatency(v, 50*time.Microsecond), Options{Logger: quietLogger()})
	require.NoError(b, err)
	b.Cleanup(d.Close)
	waitEvent(b, d, driverapi.EventConnected)
	r := engine.NewReconciler(d, reconcilerOptions())
	require.NoError(b, r.Client("nat44").ResyncTxn().Put(want...).Commit(context.Background()))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	b.Cleanup(func() { cancel(); <-done })
	start := time.Now()
	go func() { done <- r.Start(ctx) }()
	<-r.Synced()
	cold := time.Since(start)
	require.True(b, converged(r))
	var total time.Duration
	for b.Loop() {
		resyncs := r.Stats().Resyncs
		start := time.Now()
		v.Restart()
		for r.Stats().Resyncs <= resyncs || !converged(r) {
			time.Sleep(100 * time.Microsecond)
		}
		total += time.Since(start)
	}
	b.ReportMetric(total.Seconds()/float64(b.N)/cold.Seconds(), "x-cold-sync")
}

// latencyAdapter delivers every message from VPP rtt after VPP sent it, in
// order, as a VPP behind a socket would.
type latencyAdapter struct {
	adapter.VppAPI
	rtt time.Duration
	q   chan func()
}

func withLatency(a adapter.VppAPI, rtt time.Duration) adapter.VppAPI {
	l := &latencyAdapter{VppAPI: a, rtt: rtt, q: make(chan func(), 1<<16)}
	go func() {
		for f := range l.q {
			f()
		}
	}()
	return l
}

func (l *latencyAdapter) SetMsgCallback(cb adapter.MsgCallback) {
	l.VppAPI.SetMsgCallback(func(id uint16, data []byte) {
		data = append([]byte(nil), data...)
		due := time.Now().Add(l.rtt)
		l.q <- func() {
			if d := time.Until(due); d > 0 {
				time.Sleep(d)
			}
			cb(id, data)
		}
	})
}

// BenchmarkHitlessResync20k starts a fresh reconciler with the desired state
// of BenchmarkReconcileColdSync against a VPP that already holds it: dump,
// classify, diff, and no VPP change.
func BenchmarkHitlessResync20k(b *testing.B) {
	want := desiredItems(20000, 10)
	v := newFake()
	d0, err := Connect(v, Options{Logger: quietLogger()})
	require.NoError(b, err)
	waitEvent(b, d0, driverapi.EventConnected)
	r0 := engine.NewReconciler(d0, reconcilerOptions())
	require.NoError(b, r0.Client("nat44").ResyncTxn().Put(want...).Commit(context.Background()))
	require.NoError(b, r0.Resync(context.Background()))
	require.True(b, converged(r0))
	d0.Close()
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		v.ResetCalls()
		d, err := Connect(v.NewAdapter(), Options{Logger: quietLogger()})
		require.NoError(b, err)
		waitEvent(b, d, driverapi.EventConnected)
		r := engine.NewReconciler(d, reconcilerOptions())
		require.NoError(b, r.Client("nat44").ResyncTxn().Put(want...).Commit(context.Background()))
		b.StartTimer()
		require.NoError(b, r.Resync(context.Background()))
		b.StopTimer()
		if !converged(r) || len(mutatingCalls(v)) > 0 {
			b.Fatalf("not hitless: %+v %v", r.Stats(), mutatingCalls(v))
		}
		d.Close()
		b.StartTimer()
	}
}

// A cnat LB-type change is a delete and a create of the translation. When
// the delete fails, the create must not go out: cnat would take it as an
// update in place that keeps the old LB type, and the layer would record a
// translation VPP does not hold. The key fails as a whole, is retried, and
// VPP ends with the new LB type.
func TestRecreateWithFailedDeleteIsRetriedWhole(t *testing.T) {
	v := newFake()
	d := connect(t, v, true)
	if !cnatServed(t, d) {
		t.Skip("fakevpp does not serve cnat")
	}
	r := engine.NewReconciler(d, reconcilerOptions())
	c := r.Client("svc")
	tr := &vppcfg.CNATTranslation{VIP: ap("[fd00:96::20]:80"), Protocol: vppcfg.ProtoTCP,
		Paths: []vppcfg.CNATPath{{Dst: ap("[fd00:1::2]:8080")}, {Dst: ap("[fd00:1::3]:8080")}}}
	require.NoError(t, c.ResyncTxn().Put(tr).Commit(context.Background()))
	run(t, r)
	waitConverged(t, r, 5*time.Second)
	require.Contains(t, v.Dump(), "lb:default")

	maglev := *tr
	maglev.LBType = vppcfg.CNATLBMaglev
	v.FailMessage("cnat_translation_del", -1)
	require.NoError(t, c.Txn().Put(&maglev).Commit(context.Background()))
	s, ok := r.Status(tr.Key())
	require.True(t, ok)
	assert.Equal(t, engine.StateFailed, s.State, "the failed delete fails the key")
	assert.Contains(t, v.Dump(), "lb:default", "no update in place went out")

	v.ClearFaults()
	waitConverged(t, r, 5*time.Second)
	assert.Contains(t, v.Dump(), "lb:maglev")
	assert.NotContains(t, v.Dump(), "lb:default")
}

// TestLBAffinityChangeAfterFailedDelete: the NAT44 renderer changes an LB
// mapping's affinity with a delete transaction, then a put. When the delete
// fails and a resync re-reads VPP before the retry (VPP's LB dump never
// shows the affinity), the layer must still know that VPP holds the old
// affinity, and replace it. Found by TestPropertyWithVPPFaults (seed 840).
func TestLBAffinityChangeAfterFailedDelete(t *testing.T) {
	v, r, c, old := syncedAffinityMapping(t)
	v.FailMessage("nat44_add_del_lb_static_mapping", -7)
	require.NoError(t, c.Txn().Delete(old.Key()).Commit(context.Background()))
	nu := *old
	nu.Affinity = 0
	require.NoError(t, c.Txn().Put(&nu).Commit(context.Background()))
	require.NoError(t, r.Resync(context.Background()))
	v.ClearFaults()
	waitConverged(t, r, 5*time.Second)
	assert.NotContains(t, v.Dump(), "affinity=600")
}

// TestReconnectToSameVPPKeepsWhatItKnows: a connection lost to a VPP that
// keeps running (same process ID) is no restart: the resync after the
// reconnection keeps the fields VPP does not dump. Under load, govpp's
// health check drops connections; treating each as a VPP restart made an
// affinity change whose delete had failed look applied (property test,
// seed 144 under load).
func TestReconnectToSameVPPKeepsWhatItKnows(t *testing.T) {
	v, r, c, old := syncedAffinityMapping(t)
	resyncs := r.Stats().Resyncs

	v.FailMessage("nat44_add_del_lb_static_mapping", -7)
	nu := *old
	nu.Affinity = 0
	require.NoError(t, c.Txn().Put(&nu).Commit(context.Background()))
	v.DropConnections()
	require.Eventually(t, func() bool { return r.Stats().Resyncs > resyncs }, 10*time.Second, time.Millisecond,
		"the reconnection resyncs")
	v.ClearFaults()
	waitConverged(t, r, 5*time.Second)
	assert.NotContains(t, v.Dump(), "affinity=600")
}

// TestLostReplyOfAnUntaggedCreate: VPP applies a create whose reply is lost
// with the connection, and the item stops being desired before the layer
// re-reads VPP. The object carries no tag, so only the layer can know it is
// its own: it must be removed, not left in VPP as nobody's (property test
// with faults, seed 569 under load: a NAT44 inside role stayed on a pod
// interface).
func TestLostReplyOfAnUntaggedCreate(t *testing.T) {
	v := newFake()
	v.AddInterface("tap5")
	// A lost reply costs the driver a reply timeout.
	d, err := Connect(v, Options{Logger: quietLogger(), ReconnectInterval: 20 * time.Millisecond, ReplyTimeout: 300 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(d.Close)
	waitEvent(t, d, driverapi.EventConnected)
	r := engine.NewReconciler(d, reconcilerOptions())
	c := r.Client("nat44")
	require.NoError(t, c.ResyncTxn().Put(&vppcfg.NAT44Global{}).Commit(context.Background()))
	run(t, r)
	waitConverged(t, r, 5*time.Second)
	resyncs := r.Stats().Resyncs

	role := &vppcfg.NAT44Interface{Interface: "tap5", Role: vppcfg.NAT44Inside}
	v.LoseReplyNth(1)
	require.NoError(t, c.Txn().Put(role).Commit(context.Background()))
	require.Contains(t, v.Dump(), "tap5 in", "VPP did it")
	require.NoError(t, c.Txn().Delete(role.Key()).Commit(context.Background()))
	require.Eventually(t, func() bool { return r.Stats().Resyncs > resyncs }, 10*time.Second, time.Millisecond,
		"the reconnection resyncs")
	waitConverged(t, r, 5*time.Second)
	assert.NotContains(t, v.Dump(), "tap5 in")
}

// syncedAffinityMapping starts a layer over a new fake VPP holding one LB
// mapping with a 600 s affinity, applied; VPP's dump never shows affinity.
func syncedAffinityMapping(t *testing.T) (*fakevpp.VPP, *engine.Reconciler, vppcfg.Client, *vppcfg.NAT44LBMapping) {
	t.Helper()
	v := newFake()
	r := engine.NewReconciler(connect(t, v, true), reconcilerOptions())
	c := r.Client("svc")
	m := lbMapping(1, 3)
	m.Affinity = 600
	require.NoError(t, c.ResyncTxn().Put(&vppcfg.NAT44Global{}, m).Commit(context.Background()))
	run(t, r)
	waitConverged(t, r, 5*time.Second)
	require.Contains(t, v.Dump(), "affinity=600")
	return v, r, c, m
}
