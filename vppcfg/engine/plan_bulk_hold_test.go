package engine

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
)

// The bulk hold, planned: the mappings wait for an outside interface that
// is missing while the hold is armed and VPP holds no mapping; otherwise
// they are created, after the interface's feature when both go together.
func TestPlanBulkHold(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	until := now.Add(5 * time.Second)
	outside := &vppcfg.NAT44Interface{Interface: "uplink0", Role: vppcfg.NAT44Outside}
	inside := &vppcfg.NAT44Interface{Interface: "tap9", Role: vppcfg.NAT44Inside}
	m1, m2 := lb("10.96.0.10:80", "10.1.1.1:8080", "10.1.1.2:8080"), static("10.96.0.11:80", "10.1.1.3:8080")
	for _, tc := range []struct {
		name     string
		desired  []vppcfg.Item
		applied  []vppcfg.Item
		ifaces   map[string]uint32
		until    time.Time
		wantHeld bool
		want     []string
	}{
		{name: "outside interface missing: the mappings wait", desired: []vppcfg.Item{global, outside, m1, m2}, applied: []vppcfg.Item{global},
			until: until, wantHeld: true, want: []string{}},
		{name: "the interface is back: its feature first, then the mappings", desired: []vppcfg.Item{global, outside, m1, m2}, applied: []vppcfg.Item{global},
			ifaces: map[string]uint32{"uplink0": 1}, until: until,
			want: []string{"create nat44-interface/uplink0/out", "create nat44-static-mapping/10.96.0.11:80/tcp", "create nat44-lb-mapping/10.96.0.10:80/tcp"}},
		{name: "the hold is over", desired: []vppcfg.Item{global, outside, m1, m2}, applied: []vppcfg.Item{global},
			until: now, want: []string{"create nat44-static-mapping/10.96.0.11:80/tcp", "create nat44-lb-mapping/10.96.0.10:80/tcp"}},
		{name: "no hold armed", desired: []vppcfg.Item{global, outside, m1, m2}, applied: []vppcfg.Item{global},
			want: []string{"create nat44-static-mapping/10.96.0.11:80/tcp", "create nat44-lb-mapping/10.96.0.10:80/tcp"}},
		{name: "VPP holds a mapping already: the others go", desired: []vppcfg.Item{global, outside, m1, m2}, applied: []vppcfg.Item{global, m1},
			until: until, want: []string{"create nat44-static-mapping/10.96.0.11:80/tcp"}},
		{name: "an inside interface visits no mapping", desired: []vppcfg.Item{global, inside, m1}, applied: []vppcfg.Item{global},
			until: until, want: []string{"create nat44-lb-mapping/10.96.0.10:80/tcp"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := diffInput{Desired: desiredOf(items(tc.desired...)), Applied: applied(tc.applied...), Interfaces: tc.ifaces,
				BulkHoldUntil: tc.until, Now: now}
			if in.Interfaces == nil {
				in.Interfaces = map[string]uint32{}
			}
			p := planOps(in)
			assert.Equal(t, tc.want, opStrings(p.Ops))
			assert.Equal(t, tc.wantHeld, p.BulkHeld)
			for _, m := range []vppcfg.Item{m1, m2} {
				why, pending := p.Pending[m.Key()]
				held := pending && strings.Contains(why, `waits for interface "uplink0"`)
				assert.Equal(t, tc.wantHeld && slices.Contains(tc.desired, m), held, "%s: %q", m.Key(), why)
			}
		})
	}
}

// A VPP restart under a running layer whose outside interface comes back
// after the connection: the mappings wait for it, and VPP gets the
// interface's feature before them; when it does not come back, they go
// once the hold is over.
func TestBulkHoldAfterVPPRestart(t *testing.T) {
	for _, comesBack := range []bool{true, false} {
		t.Run(map[bool]string{true: "interface back", false: "interface gone"}[comesBack], func(t *testing.T) {
			f := newFakeDriver("uplink0")
			opts := testOptions()
			opts.BulkHold = 300 * time.Millisecond
			r := NewReconciler(f, opts)
			outside := &vppcfg.NAT44Interface{Interface: "uplink0", Role: vppcfg.NAT44Outside}
			m1, m2 := lb("10.96.0.10:80", "10.1.1.1:8080", "10.1.1.2:8080"), lb("10.96.0.11:80", "10.1.1.3:8080", "10.1.1.4:8080")
			commit(t, r.Client("nat44").ResyncTxn(), global, outside, m1, m2)
			start(t, r)
			require.Len(t, f.takeLog(), 4)

			// VPP dies (no dump answers), and restarts empty, without the interface.
			f.mu.Lock()
			f.noDump = true
			f.mu.Unlock()
			f.events <- driverapi.Event{Type: driverapi.EventDisconnected}
			require.Eventually(t, func() bool { r.mu.Lock(); defer r.mu.Unlock(); return r.disconnected }, 2*time.Second, time.Millisecond)
			f.deleteInterface("uplink0")
			f.mu.Lock()
			f.objs = map[vppcfg.Key]driverapi.Observed{}
			f.noDump = false
			f.mu.Unlock()
			resyncs := r.Stats().Resyncs
			restarted := time.Now()
			f.events <- driverapi.Event{Type: driverapi.EventConnected, VPPPID: 2}
			require.Eventually(t, func() bool { return r.Stats().Resyncs > resyncs }, 2*time.Second, time.Millisecond)
			s, _ := r.Status(m1.Key())
			assert.Equal(t, StatePending, s.State)
			assert.Contains(t, s.Reason, `waits for interface "uplink0"`)
			assert.Equal(t, []string{"create nat44-global/global"}, f.takeLog())

			if comesBack {
				f.addInterface("uplink0")
			}
			require.Eventually(t, func() bool { return state(t, r, m1.Key()) == StateApplied && state(t, r, m2.Key()) == StateApplied },
				5*time.Second, time.Millisecond)
			log := f.takeLog()
			if comesBack {
				assert.Equal(t, []string{"create nat44-interface/uplink0/out", "create nat44-lb-mapping/10.96.0.10:80/tcp",
					"create nat44-lb-mapping/10.96.0.11:80/tcp"}, log)
			} else {
				assert.Equal(t, []string{"create nat44-lb-mapping/10.96.0.10:80/tcp", "create nat44-lb-mapping/10.96.0.11:80/tcp"}, log)
				assert.GreaterOrEqual(t, time.Since(restarted), opts.BulkHold, "held until the hold's end")
				assert.Equal(t, StatePending, state(t, r, outside.Key()))
			}
		})
	}
}

// The hold's end while VPP is disconnected: the pass it wakes for returns
// at once, and the loop must not be woken again and again for it.
func TestBulkHoldEndWhileDisconnected(t *testing.T) {
	r := NewReconciler(newFakeDriver(), testOptions())
	r.mu.Lock()
	r.synced, r.disconnected = true, true
	r.bulkHeld, r.bulkHoldUntil = true, time.Now().Add(-time.Second)
	r.mu.Unlock()
	require.NoError(t, r.wake(context.Background()))
	assert.Greater(t, r.untilNextWake(), time.Second, "the loop would spin on the past hold's end")
}
