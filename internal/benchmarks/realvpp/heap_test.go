package realvpp

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.fd.io/govpp/api"

	"github.com/vppsvc/vppsvc/internal/benchmarks"
	rv "github.com/vppsvc/vppsvc/realvpp"
	"github.com/vppsvc/vppsvc/vppcfg/engine"
)

// heapEnv is the variable the restart command reads the main heap size
// from (e.g. "96M"); a command that ignores it makes
// TestChaosHeapExhausted skip.
const heapEnv = "VPPSVC_TEST_VPP_MAIN_HEAP"

// heapSmall and heapServices are the state that does not fit: a 96 MB
// main heap holds VPP's own structures with NAT44-ED enabled (about 37 MB
// used) and room for about 45,000 of the generated cluster's services (an
// LB mapping of the backend and the placeholder local, and the ClusterIP's
// drop route: about 1.3 KB of heap together), so 65,000 × 1 runs it out
// two thirds of the way. (50,000 came within a tenth of fitting; a
// smaller heap does not start: VPP 25.10 aborts reading its plugins'
// symbols below about 90 MB.)
const (
	heapSmall    = "96M"
	heapServices = 65000
)

// TestChaosHeapExhausted is the chaos case "VPP's main heap too small
// for the state" on a real VPP 25.10: VPP restarted with a 96 MB main
// heap, then a cold sync of 65,000 services × 1 endpoint (one NAT44-ED LB
// mapping and one drop route each) through the product's agent.
//
// What VPP does (found here, explained by its code): it does not refuse
// the call that runs out. Every allocation of the main heap on the API
// path (vectors, pools, FIB paths, bihash pages) goes through
// clib_mem_heap_alloc_inline with os_out_of_memory_on_failure set
// (src/vppinfra/mem_dlmalloc.c: clib_mem_alloc, clib_mem_heap_realloc_aligned
// and so vec_resize; only the *_or_null variants return 0), and
// os_out_of_memory calls os_panic (src/vppinfra/unix-misc.c), which in
// the vpp binary dumps the API trace and calls abort()
// (src/vpp/vnet/main.c). The signal handler (src/vlib/unix/main.c:
// unix_signal_handler) logs "received signal SIGABRT" with a backtrace and
// exits: no retval, no reply, the API socket closes, VPP's whole state is
// gone. The stack seen when one backend was a static mapping:
// vl_api_nat44_add_del_static_mapping_v2_t_handler →
// nat44_ed_add_static_mapping → nat44_ed_add_fib_entry_reg →
// fib_table_entry_update_one_path → fib_path_create → _vec_realloc_internal
// → clib_mem_heap_realloc_aligned → os_panic → abort; with LB mappings the
// allocation that fails is whichever comes next (docs/reliability.md).
//
// So the test asserts the abort branch of the product: the calls in flight
// fail with a connection error (never a VPP retval), the agent reports
// itself not converged, and once a supervisor (the test) restarts VPP
// with its normal heap, the agent detects the new VPP process, re-applies
// everything, and VPP then holds exactly the mappings the 65,000 services
// give (checkMappings).
func TestChaosHeapExhausted(t *testing.T) {
	skipLarge(t, heapServices)
	n := openNode(t)
	needRestart(t)
	if err := n.RestartWithEnv(heapEnv + "=" + heapSmall); err != nil {
		t.Fatal(err)
	}
	if total := heapTotal(t, n); total > 200<<20 {
		t.Skipf("the restart command ignored %s=%s (main heap %.0f MB): it must read the heap size from there", heapEnv, heapSmall, total/(1<<20))
	}
	buildNode(t, n, false)
	pid0 := vppPID(t, n)
	a := startAgent(t, n, ipv4, 0, "uplink0", "host0")
	defer a.stop()
	heap0 := heapUsed(t, n)

	// The cold sync, until VPP stops answering.
	start := time.Now()
	a.Processor.Resync(snapshot(heapServices, 1, false, false))
	lastHeap := heap0
	deadline := time.Now().Add(5 * time.Minute)
	for {
		out, err := n.CLI("show memory main-heap")
		if err != nil {
			break
		}
		if h, err := parseHeapUsed(out); err == nil {
			lastHeap = h
		}
		if a.Converged() {
			t.Fatalf("%d services fit into a %s main heap (%.1f MB used): the test needs a state that does not", heapServices, heapSmall, lastHeap/(1<<20))
		}
		if time.Now().After(deadline) {
			t.Fatalf("VPP neither aborted nor took the state within 5 min: %s", a.Divergence())
		}
		time.Sleep(200 * time.Millisecond)
	}
	died := time.Since(start)
	waitGone(t, pid0)
	st := a.Reconciler.Stats()
	t.Logf("VPP (pid %d, main heap %s, %.1f MB used before the sync) aborted %s into the cold sync; the agent had %d of %d items applied",
		pid0, heapSmall, heap0/(1<<20), died.Round(time.Millisecond), st.Applied, st.Desired)

	// While VPP is gone: not converged; whatever failed, failed with a lost
	// connection, never with a retval (VPP answered no call with an error).
	waitFor(t, 30*time.Second, "the agent to count the failed calls", func() bool {
		return sumCalls(a.Reconciler.Stats().CallFailures) > 0
	})
	if a.Converged() {
		t.Fatal("the agent reports converged while its VPP is gone")
	}
	failed := 0
	for _, s := range a.Reconciler.Statuses() {
		if s.State != engine.StateFailed {
			continue
		}
		failed++
		var vppErr api.VPPApiError
		if errors.As(s.Err, &vppErr) {
			t.Errorf("%s failed with VPP retval %d (%v): VPP 25.10 was expected to abort, not to refuse", s.Key, int32(vppErr), vppErr)
		}
	}
	st = a.Reconciler.Stats()
	t.Logf("while VPP is gone: %d items failed (connection errors), calls counted failed: %v", failed, st.CallFailures)

	// The supervisor restarts VPP with its normal heap; the agent re-applies.
	resyncs := st.Resyncs
	n.ResetCalls()
	restart := time.Now()
	if err := n.Restart(); err != nil {
		t.Fatalf("restarting VPP with its normal heap: %v", err)
	}
	restarted := time.Since(restart) // the restart command and the topology's replay
	if err := a.WaitConverged(context.Background(), 10*time.Minute); err != nil {
		t.Fatal(err)
	}
	took := time.Since(restart)
	pid1 := vppPID(t, n)
	if pid1 == pid0 {
		t.Fatalf("VPP's process ID is still %d after the restart", pid0)
	}
	writes, reads := callCounts(n.Calls())
	if writes < heapServices {
		t.Errorf("the agent re-applied with %d writes, want at least one per service (%d)", writes, heapServices)
	}
	if got := a.Reconciler.Stats().Resyncs; got <= resyncs {
		t.Errorf("no full resync after the VPP restart (resyncs %d → %d)", resyncs, got)
	}
	checkMappings(t, n, coldMappings(heapServices))
	checkState(t, a, n)
	t.Logf("VPP restarted (pid %d) with its normal heap; the agent converged %s after the restart command (of which the command and the topology's replay %s; then reconnection, resync, %d writes, %d reads); main heap %.1f MB used",
		pid1, took.Round(time.Millisecond), restarted.Round(time.Millisecond), writes, reads, heapUsed(t, n)/(1<<20))
}

// coldMappings is the NAT44 mappings of snapshot(services, 1, …), keyed
// as checkMappings wants them: service i's ClusterIP:80/tcp → its one
// endpoint 10.0.0.0 + i + 1 beside the placeholder local, an LB mapping.
func coldMappings(services int) map[string]string {
	out := make(map[string]string, services)
	for i := range services {
		ext := netip.AddrPortFrom(netip.MustParseAddr(benchmarks.Service(i).Spec.ClusterIP), 80)
		out[ext.String()+"/6"] = "lb " + lbPlaceholder + "," + netip.AddrPortFrom(offsetAddr(netip.MustParseAddr("10.0.0.0"), i+1), 80).String()
	}
	return out
}

// heapTotal is the "total" figure of VPP's main heap, in bytes.
func heapTotal(tb testing.TB, n *rv.Node) float64 {
	tb.Helper()
	out, err := n.CLI("show memory main-heap")
	if err != nil {
		tb.Fatal(err)
	}
	i := strings.Index(out, "total:")
	if i < 0 {
		tb.Fatalf("no \"total:\" in %q", out)
	}
	v, err := parseHeapUsed(strings.Replace(out[i:], "total:", "used:", 1))
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

// waitGone waits until process pid has exited (or is a zombie nobody
// reaped yet).
func waitGone(tb testing.TB, pid int) {
	tb.Helper()
	waitFor(tb, 30*time.Second, "VPP's process to exit", func() bool {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return true
		}
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return true
		}
		// pid (comm) S …: the state follows the last ')'.
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
	})
}

// waitFor polls cond every 50 ms until it holds, failing after timeout.
func waitFor(tb testing.TB, timeout time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
