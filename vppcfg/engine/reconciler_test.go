package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
	"github.com/vppsvc/vppsvc/vppcfg/internal/acllists"
	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
)

func quietLogger() *logrus.Logger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}

func testOptions() Options {
	return Options{Logger: quietLogger(), RetryMin: time.Millisecond, RetryMax: 20 * time.Millisecond,
		InterfacePoll: 20 * time.Millisecond}
}

// start runs r.Start in the background and waits for the first resync.
func start(t *testing.T, r *Reconciler) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-done)
	})
	select {
	case <-r.Synced():
	case err := <-done:
		t.Fatalf("Start returned early: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("no first resync")
	}
}

func commit(t *testing.T, txn vppcfg.Txn, its ...vppcfg.Item) {
	t.Helper()
	require.NoError(t, txn.Put(its...).Commit(context.Background()))
}

func state(t *testing.T, r *Reconciler, k vppcfg.Key) ItemState {
	t.Helper()
	s, ok := r.Status(k)
	if !ok {
		return 0
	}
	return s.State
}

func TestCommitBeforeStartIsAppliedByStart(t *testing.T) {
	f := newFakeDriver("tap0")
	r := NewReconciler(f, testOptions())
	c := r.Client("nat44")
	m := lb("10.96.0.10:80", "10.1.1.1:8080", "10.1.1.2:8080")
	commit(t, c.ResyncTxn(), global, m, &vppcfg.NAT44Interface{Interface: "tap0", Role: vppcfg.NAT44Inside},
		acl("a", 80), binding("tap0", vppcfg.ACLInput, "a", 0))
	assert.Empty(t, f.takeLog(), "commits before Start only record desired state")
	assert.Equal(t, StatePending, state(t, r, m.Key()))

	start(t, r)
	assert.Equal(t, []string{
		"create nat44-global/global",
		"create nat44-interface/tap0/in",
		"create nat44-lb-mapping/10.96.0.10:80/tcp",
		"create acl/a",
		"set-acls tap0 in=[a] out=[]",
	}, f.takeLog())
	for _, s := range r.Statuses() {
		assert.Equal(t, StateApplied, s.State, s.String())
	}
	assert.Contains(t, f.dump(), `tag="vppsvc:nat44:svc"`)
	assert.Contains(t, f.dump(), `tag="vppsvc:nat44:a"`)

	// After Start a commit applies before it returns, touching only what changed.
	commit(t, c.Txn(), lb("10.96.0.10:80", "10.1.1.1:8080", "10.1.1.2:8080", "10.1.1.3:8080"))
	assert.Equal(t, []string{"add-local nat44-lb-mapping/10.96.0.10:80/tcp 10.1.1.3:8080"}, f.takeLog())
	assert.Equal(t, StateApplied, state(t, r, m.Key()), "the applied view holds the new local")
	st := r.Stats()
	assert.Equal(t, 5, st.Desired)
	assert.Equal(t, 5, st.Applied)
	assert.Zero(t, st.Pending+st.Failed)
}

func TestPendingInterfaceLifecycle(t *testing.T) {
	f := newFakeDriver()
	r := NewReconciler(f, testOptions())
	c := r.Client("nat44")
	role := &vppcfg.NAT44Interface{Interface: "tap1", Role: vppcfg.NAT44Inside}
	bind := binding("tap1", vppcfg.ACLOutput, "a", 0)
	commit(t, c.ResyncTxn(), global, role, acl("a", 80), bind)
	start(t, r)
	assert.Equal(t, []string{"create nat44-global/global", "create acl/a"}, f.takeLog())
	s, _ := r.Status(role.Key())
	assert.Equal(t, StatePending, s.State)
	assert.Equal(t, `interface "tap1" not found`, s.Reason)
	assert.Equal(t, StatePending, state(t, r, bind.Key()))

	f.addInterface("tap1")
	require.Eventually(t, func() bool { return state(t, r, role.Key()) == StateApplied }, 2*time.Second, time.Millisecond)
	require.Eventually(t, func() bool { return state(t, r, bind.Key()) == StateApplied }, 2*time.Second, time.Millisecond)
	assert.Equal(t, []string{"create nat44-interface/tap1/in", "set-acls tap1 in=[] out=[a]"}, f.takeLog())

	f.deleteInterface("tap1")
	require.Eventually(t, func() bool { return state(t, r, role.Key()) == StatePending }, 2*time.Second, time.Millisecond)
	assert.Equal(t, StatePending, state(t, r, bind.Key()))
	assert.Empty(t, f.takeLog(), "VPP removed the interface's roles and bindings itself")

	f.addInterface("tap1")
	require.Eventually(t, func() bool { return state(t, r, bind.Key()) == StateApplied }, 2*time.Second, time.Millisecond)
	assert.Equal(t, StateApplied, state(t, r, role.Key()))
}

func TestMissedInterfaceEventIsPolled(t *testing.T) {
	f := newFakeDriver()
	r := NewReconciler(f, testOptions())
	role := &vppcfg.NAT44Interface{Interface: "tap1", Role: vppcfg.NAT44Outside}
	commit(t, r.Client("nat44").ResyncTxn(), global, role)
	start(t, r)
	f.mu.Lock()
	f.ifaces["tap1"] = 7 // no event
	f.mu.Unlock()
	require.Eventually(t, func() bool { return state(t, r, role.Key()) == StateApplied }, 2*time.Second, time.Millisecond)
}

func TestHitlessRestart(t *testing.T) {
	f := newFakeDriver("tap0")
	want := []vppcfg.Item{global, &vppcfg.NAT44Address{Addr: addr("1.1.1.1"), VRF: vppcfg.AnyVRF},
		&vppcfg.NAT44Interface{Interface: "tap0", Role: vppcfg.NAT44Inside}, acl("a", 80), acl("b", 81),
		binding("tap0", vppcfg.ACLInput, "b", 1), binding("tap0", vppcfg.ACLInput, "a", 2),
		cnat("10.96.0.20:80", vppcfg.CNATLBMaglev, "10.1.1.1:8080")}
	for i := range 20 {
		want = append(want, lb(fmt.Sprintf("10.96.0.%d:80", i+1), "10.1.1.1:8080", "10.1.1.2:8080"))
	}
	r1 := NewReconciler(f, testOptions())
	commit(t, r1.Client("nat44").ResyncTxn(), want...)
	start(t, r1)
	require.Len(t, f.takeLog(), len(want)-1) // two bindings are one set-acls

	// A new agent with the same desired state, started after or before its commit.
	for _, commitFirst := range []bool{true, false} {
		r2 := NewReconciler(f, testOptions())
		if commitFirst {
			commit(t, r2.Client("nat44").ResyncTxn(), want...)
		}
		start(t, r2)
		if !commitFirst {
			commit(t, r2.Client("nat44").ResyncTxn(), want...)
		}
		assert.Empty(t, f.takeLog(), "commitFirst=%t", commitFirst)
		for _, s := range r2.Statuses() {
			assert.Equal(t, StateApplied, s.State, s.String())
		}
	}

	// A new agent whose desired state lost one mapping and gained one.
	r3 := NewReconciler(f, testOptions())
	start(t, r3)
	changed := append(want[:len(want)-1:len(want)-1], lb("10.96.1.1:80", "10.1.1.1:8080", "10.1.1.2:8080"))
	commit(t, r3.Client("nat44").ResyncTxn(), changed...)
	assert.ElementsMatch(t, []string{
		"delete nat44-lb-mapping/10.96.0.20:80/tcp",
		"create nat44-lb-mapping/10.96.1.1:80/tcp",
	}, f.takeLog())
}

func TestOrphansWaitForTheirOwnersResync(t *testing.T) {
	f := newFakeDriver()
	r1 := NewReconciler(f, testOptions())
	commit(t, r1.Client("base").ResyncTxn(), global)
	commit(t, r1.Client("svc").ResyncTxn(), lb("10.96.0.10:80", "10.1.1.1:8080", "10.1.1.2:8080"),
		lb("10.96.0.11:80", "10.1.1.1:8080", "10.1.1.2:8080"))
	start(t, r1)
	f.takeLog()

	r2 := NewReconciler(f, testOptions())
	commit(t, r2.Client("base").ResyncTxn(), global)
	start(t, r2)
	assert.Empty(t, f.takeLog(), "svc has not resynced: its mappings stay")
	s, ok := r2.Status(vppcfg.NAT44MappingKey(vppcfg.KindNAT44LBMapping, ap("10.96.0.10:80"), vppcfg.ProtoTCP))
	require.True(t, ok)
	assert.True(t, s.Deleting)
	assert.Equal(t, []string{"svc"}, s.Owners)

	commit(t, r2.Client("svc").Txn(), lb("10.96.0.11:80", "10.1.1.1:8080", "10.1.1.2:8080"))
	assert.Empty(t, f.takeLog(), "an incremental txn adopts, but does not prune")
	commit(t, r2.Client("svc").ResyncTxn(), lb("10.96.0.11:80", "10.1.1.1:8080", "10.1.1.2:8080"))
	assert.Equal(t, []string{"delete nat44-lb-mapping/10.96.0.10:80/tcp"}, f.takeLog())
}

func TestForeignAndUntaggedObjects(t *testing.T) {
	f := newFakeDriver()
	foreignStatic := static("10.96.0.10:80", "10.9.9.9:80")
	f.objs[global.Key()] = driverapi.Observed{Item: global}
	f.objs[foreignStatic.Key()] = driverapi.Observed{Item: foreignStatic, Tag: "calico:x"}
	strayVIP := cnat("10.96.5.5:80", vppcfg.CNATLBDefault, "10.1.1.9:80")
	otherVIP := cnat("192.168.7.7:80", vppcfg.CNATLBDefault, "10.1.1.9:80")
	f.objs[strayVIP.Key()] = driverapi.Observed{Item: strayVIP, Handle: 40}
	f.objs[otherVIP.Key()] = driverapi.Observed{Item: otherVIP, Handle: 41}

	opts := testOptions()
	opts.Claims = map[string]vppcfg.UntaggedClaimFunc{"ipv6": func(it vppcfg.Item) bool {
		t, ok := it.(*vppcfg.CNATTranslation)
		return ok && pfx("10.96.0.0/16").Contains(t.VIP.Addr())
	}}
	r := NewReconciler(f, opts)
	m := lb("10.96.0.10:80", "10.1.1.1:8080", "10.1.1.2:8080")
	commit(t, r.Client("nat44").ResyncTxn(), global, m)
	start(t, r)
	assert.Empty(t, f.takeLog(), "the untagged NAT44 global is adopted; the foreign mapping blocks ours")
	s, _ := r.Status(m.Key())
	assert.Equal(t, StateFailed, s.State)
	assert.ErrorContains(t, s.Err, "foreign")

	commit(t, r.Client("ipv6").ResyncTxn())
	assert.Equal(t, []string{"delete cnat-translation/10.96.5.5:80/tcp"}, f.takeLog(),
		"only the claimed untagged translation goes; the unclaimed one stays")
	assert.Contains(t, f.dump(), "192.168.7.7:80")
	assert.Contains(t, f.dump(), `tag="calico:x"`)
}

func TestForeignACLsStayInFront(t *testing.T) {
	f := newFakeDriver("tap0")
	f.objs[vppcfg.ACLKey("theirs")] = driverapi.Observed{Item: &vppcfg.ACL{Name: "theirs"}, Tag: "", Handle: 99}
	f.aclLists["tap0"] = acllists.Indexes{Input: []uint32{99}}
	f.handle = 100
	r := NewReconciler(f, testOptions())
	commit(t, r.Client("pol").ResyncTxn(), acl("mine", 80), binding("tap0", vppcfg.ACLInput, "mine", 0))
	start(t, r)
	assert.Equal(t, []string{"create acl/mine", "set-acls tap0 in=[mine] out=[]"}, f.takeLog())
	f.mu.Lock()
	assert.Equal(t, []uint32{99, 100}, f.aclLists["tap0"].Input)
	f.mu.Unlock()

	commit(t, r.Client("pol").ResyncTxn())
	assert.Equal(t, []string{"set-acls tap0 in=[] out=[]", "delete acl/mine"}, f.takeLog())
	f.mu.Lock()
	assert.Equal(t, []uint32{99}, f.aclLists["tap0"].Input)
	f.mu.Unlock()
}

func TestSharedItemsAndResyncTxn(t *testing.T) {
	f := newFakeDriver()
	r := NewReconciler(f, testOptions())
	start(t, r)
	a, b := r.Client("a"), r.Client("b")
	shared := acl("permit-all")
	commit(t, a.Txn(), shared, acl("only-a"))
	commit(t, b.Txn(), shared)
	assert.Equal(t, []string{"create acl/only-a", "create acl/permit-all"}, f.takeLog())
	s, _ := r.Status(shared.Key())
	assert.Equal(t, []string{"a", "b"}, s.Owners)

	require.NoError(t, a.ResyncTxn().Commit(context.Background()))
	assert.Equal(t, []string{"delete acl/only-a"}, f.takeLog(), "b still holds the shared ACL")
	require.NoError(t, b.Txn().Delete(shared.Key()).Commit(context.Background()))
	assert.Equal(t, []string{"delete acl/permit-all"}, f.takeLog())
}

func TestCommitRejects(t *testing.T) {
	r := NewReconciler(newFakeDriver(), testOptions())
	a, b := r.Client("a"), r.Client("b")
	commit(t, a.Txn(), acl("x", 80), lb("10.96.0.10:80", "10.1.1.1:80", "10.1.1.2:80"),
		&vppcfg.NAT44Interface{Interface: "tap0", Role: vppcfg.NAT44Inside})

	err := b.Txn().Put(acl("x", 81)).Commit(context.Background())
	require.ErrorIs(t, err, vppcfg.ErrConflict)
	assert.ErrorContains(t, err, `owner "b"`)
	assert.ErrorContains(t, err, `owner "a"`)

	err = b.Txn().Put(static("10.96.0.10:80", "10.1.1.1:80")).Commit(context.Background())
	require.ErrorIs(t, err, vppcfg.ErrConflict)
	assert.ErrorContains(t, err, "same external 10.96.0.10:80/tcp")

	err = b.Txn().Put(&vppcfg.NAT44Interface{Interface: "tap0", Role: vppcfg.NAT44Output}).Commit(context.Background())
	require.ErrorIs(t, err, vppcfg.ErrConflict)

	// The same owner may switch a key from LB to static in one transaction.
	require.NoError(t, a.Txn().Delete(lb("10.96.0.10:80").Key()).Put(static("10.96.0.10:80", "10.1.1.1:80")).
		Commit(context.Background()))

	err = r.Client("bad:name").Txn().Put(acl("y")).Commit(context.Background())
	require.ErrorIs(t, err, vppcfg.ErrInvalid)

	txn := a.Txn().Put(acl("z"))
	require.NoError(t, txn.Commit(context.Background()))
	assert.Error(t, txn.Commit(context.Background()), "second commit")
}

func TestRetryWithBackoff(t *testing.T) {
	f := newFakeDriver()
	failures := 3
	f.fail = func(op driverapi.Op) error {
		if op.Key.Kind == vppcfg.KindACL && failures > 0 {
			failures--
			return errors.New("VPPApiError: boom")
		}
		return nil
	}
	opts := testOptions()
	opts.RetryMin, opts.RetryMax = 50*time.Millisecond, 100*time.Millisecond
	r := NewReconciler(f, opts)
	a := acl("a", 80)
	commit(t, r.Client("pol").ResyncTxn(), a, global)
	start(t, r)
	s, _ := r.Status(a.Key())
	assert.Equal(t, StateFailed, s.State)
	assert.ErrorContains(t, s.Err, "boom")
	assert.Equal(t, 1, s.Failures)
	assert.Equal(t, StateApplied, state(t, r, global.Key()), "one failing item does not hold back the others")
	require.Eventually(t, func() bool { return state(t, r, a.Key()) == StateApplied }, 2*time.Second, time.Millisecond)
	assert.Equal(t, []string{"create nat44-global/global", "create acl/a FAILED", "create acl/a FAILED",
		"create acl/a FAILED", "create acl/a"}, f.takeLog())
}

func TestDriftAndReconnect(t *testing.T) {
	f := newFakeDriver("tap0")
	r := NewReconciler(f, testOptions())
	m := lb("10.96.0.10:80", "10.1.1.1:8080", "10.1.1.2:8080")
	want := []vppcfg.Item{global, m, acl("a", 80), binding("tap0", vppcfg.ACLInput, "a", 0)}
	commit(t, r.Client("nat44").ResyncTxn(), want...)
	start(t, r)
	golden := f.dump()
	f.takeLog()

	// Someone deletes a mapping behind our back: a resync repairs it.
	f.mu.Lock()
	delete(f.objs, m.Key())
	f.mu.Unlock()
	require.NoError(t, r.Resync(context.Background()))
	assert.Equal(t, []string{"create nat44-lb-mapping/10.96.0.10:80/tcp"}, f.takeLog())
	assert.Equal(t, uint64(1), r.Stats().Drift)

	// VPP restarts: everything is gone, ACL indexes start again elsewhere.
	f.mu.Lock()
	f.objs = map[vppcfg.Key]driverapi.Observed{}
	f.aclLists = map[string]acllists.Indexes{}
	f.handle = 7
	f.mu.Unlock()
	f.events <- driverapi.Event{Type: driverapi.EventConnected}
	require.Eventually(t, func() bool { return f.dump() != "" && len(f.takeLogPeek()) >= 4 }, 2*time.Second, time.Millisecond)
	require.Eventually(t, func() bool {
		st := r.Stats()
		return st.Applied == len(want) && st.Pending == 0 && st.Failed == 0
	}, 2*time.Second, time.Millisecond)
	assert.Equal(t, golden, f.dump())
}

// takeLogPeek returns the op log without clearing it.
func (f *fakeDriver) takeLogPeek() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.log...)
}

func TestFailedItemThatIsDeletedIsForgotten(t *testing.T) {
	f := newFakeDriver()
	f.fail = func(op driverapi.Op) error {
		if op.Key == vppcfg.ACLKey("x") {
			return errors.New("VPPApiError: boom")
		}
		return nil
	}
	r := NewReconciler(f, testOptions())
	c := r.Client("pol")
	commit(t, c.ResyncTxn(), acl("x"))
	start(t, r)
	require.Eventually(t, func() bool { s, _ := r.Status(vppcfg.ACLKey("x")); return s.Failures >= 3 }, time.Second, time.Millisecond)
	require.NoError(t, c.ResyncTxn().Commit(context.Background()))
	_, ok := r.Status(vppcfg.ACLKey("x"))
	assert.False(t, ok)
	f.takeLog()
	time.Sleep(50 * time.Millisecond)
	assert.Empty(t, f.takeLog(), "no retries of an item nobody wants")
	assert.Zero(t, r.Stats().Failed)
	r.mu.Lock()
	assert.Empty(t, r.retry.next)
	assert.Empty(t, r.lastErr)
	r.mu.Unlock()
}

// TestFullPassForgetsFailuresNobodyWants: a full pass (an owner's
// ResyncTxn) that finds a failed key neither desired nor in VPP forgets its
// failure and retry at once, without waiting for the retry to come due.
// Without a Start loop and with a retry an hour away, the old full pass
// left both: TestFailedItemThatIsDeletedIsForgotten failed whenever the
// loop's retry pass ran later than its 50 ms.
func TestFullPassForgetsFailuresNobodyWants(t *testing.T) {
	f := newFakeDriver()
	f.fail = func(op driverapi.Op) error {
		if op.Key == vppcfg.ACLKey("x") {
			return errors.New("VPPApiError: boom")
		}
		return nil
	}
	opts := testOptions()
	opts.RetryMin, opts.RetryMax = time.Hour, time.Hour
	r := NewReconciler(f, opts)
	c := r.Client("pol")
	commit(t, c.ResyncTxn(), acl("x"), acl("y"))
	require.NoError(t, r.Resync(context.Background()))
	s, _ := r.Status(vppcfg.ACLKey("x"))
	require.Equal(t, StateFailed, s.State)
	commit(t, c.ResyncTxn(), acl("y"))
	_, ok := r.Status(vppcfg.ACLKey("x"))
	assert.False(t, ok)
	assert.Zero(t, r.Stats().Failed)
	r.mu.Lock()
	defer r.mu.Unlock()
	assert.Empty(t, r.retry.next)
	assert.Empty(t, r.retry.attempts)
	assert.Empty(t, r.lastErr)
}

// TestStatsApplyingDuringAPass: while a pass sends a commit's ops, Stats
// says so, because its other counters still describe the state before the
// pass. Without it an agent reported converged while the ops of a large
// commit were in flight to a VPP that had just died (seen on a real VPP).
func TestStatsApplyingDuringAPass(t *testing.T) {
	d := &blockingDriver{fakeDriver: newFakeDriver(), entered: make(chan struct{}, 1), release: make(chan struct{})}
	r := NewReconciler(d, testOptions())
	start(t, r)
	d.block.Store(true)
	done := make(chan struct{})
	go func() {
		defer close(done)
		commit(t, r.Client("svc").Txn(), &vppcfg.NAT44Global{Forwarding: true})
	}()
	<-d.entered
	assert.True(t, r.Stats().Applying, "a pass is sending ops")
	close(d.release)
	<-done
	s := r.Stats()
	assert.False(t, s.Applying)
	assert.Equal(t, s.Desired, s.Applied)
}

// blockingDriver holds Apply, once block is set, until release is closed.
type blockingDriver struct {
	*fakeDriver
	block   atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func (d *blockingDriver) Apply(ctx context.Context, ops []driverapi.Op) []driverapi.OpResult {
	if d.block.Load() {
		select {
		case d.entered <- struct{}{}:
		default:
		}
		<-d.release
	}
	return d.fakeDriver.Apply(ctx, ops)
}

// TestFailedLocalStepStaysToDo: an LB mapping's locals change one step at a
// time; when a step fails and a later one of the same pass succeeds, the
// applied view holds the later step's local only, so the failed one is
// retried until VPP holds it.
func TestFailedLocalStepStaysToDo(t *testing.T) {
	f := newFakeDriver()
	r := NewReconciler(f, testOptions())
	c := r.Client("nat44")
	commit(t, c.ResyncTxn(), global, lb("10.96.0.10:80", "10.1.1.1:8080", "10.1.1.2:8080"))
	start(t, r)
	f.takeLog()

	failOnce := true
	f.mu.Lock()
	f.fail = func(op driverapi.Op) error {
		if failOnce && strings.HasSuffix(core.OpText(op), " 10.1.1.3:8080") {
			failOnce = false
			return errors.New("injected")
		}
		return nil
	}
	f.mu.Unlock()
	want := lb("10.96.0.10:80", "10.1.1.1:8080", "10.1.1.2:8080", "10.1.1.3:8080", "10.1.1.4:8080")
	commit(t, c.Txn(), want)
	assert.Equal(t, []string{
		"add-local nat44-lb-mapping/10.96.0.10:80/tcp 10.1.1.3:8080 FAILED",
		"add-local nat44-lb-mapping/10.96.0.10:80/tcp 10.1.1.4:8080",
	}, f.takeLog())
	require.Eventually(t, func() bool { return state(t, r, want.Key()) == StateApplied }, 2*time.Second, time.Millisecond)
	assert.Equal(t, []string{"add-local nat44-lb-mapping/10.96.0.10:80/tcp 10.1.1.3:8080"}, f.takeLog(), "only the failed step is retried")
	assert.Contains(t, f.dump(), "10.1.1.3:8080")
}

// TestNothingAppliedBetweenLossAndResync: after the connection is lost,
// neither a commit nor a due retry writes anything until the next
// connection's resync, which then writes each missing item once. (A real
// VPP killed during a cold sync came back before its connection event, and
// the retries of the killed pass, planned from the dead VPP's state, were
// written to it beside the resync's writes.)
func TestNothingAppliedBetweenLossAndResync(t *testing.T) {
	f := newFakeDriver("tap0")
	r := NewReconciler(f, testOptions())
	c := r.Client("nat44")
	commit(t, c.ResyncTxn(), global, lb("10.96.0.10:80", "10.1.1.1:8080", "10.1.1.2:8080"))
	start(t, r)
	f.takeLog()

	// VPP dies (no dump answers), then restarts empty and takes requests
	// before its connection event.
	f.mu.Lock()
	f.noDump = true
	f.mu.Unlock()
	f.events <- driverapi.Event{Type: driverapi.EventDisconnected}
	require.Eventually(t, func() bool { r.mu.Lock(); defer r.mu.Unlock(); return r.disconnected }, 2*time.Second, time.Millisecond)
	f.mu.Lock()
	f.objs = map[vppcfg.Key]driverapi.Observed{}
	f.mu.Unlock()
	commit(t, c.Txn(), lb("10.96.0.11:80", "10.1.1.3:8080"))
	time.Sleep(50 * time.Millisecond) // retries would be due (RetryMax 20 ms)
	assert.Empty(t, f.takeLog(), "written while disconnected")

	f.mu.Lock()
	f.noDump = false
	f.mu.Unlock()
	f.events <- driverapi.Event{Type: driverapi.EventConnected, VPPPID: 2}
	require.Eventually(t, func() bool {
		st := r.Stats()
		return st.Applied == 3 && st.Pending == 0 && st.Failed == 0
	}, 2*time.Second, time.Millisecond)
	log := f.takeLog()
	slices.Sort(log)
	assert.Equal(t, []string{"create nat44-global/global", "create nat44-lb-mapping/10.96.0.10:80/tcp", "create nat44-lb-mapping/10.96.0.11:80/tcp"}, log,
		"each item once, by the resync")
}
