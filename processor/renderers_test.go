package processor

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// fakeClock is a settable clock for the processor's retry schedule.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func TestFailingRendererIsResyncedWhileOthersProceed(t *testing.T) {
	p, log := newTestProcessor(t)
	clock := &fakeClock{t: time.Unix(1000, 0)}
	p.now = clock.now
	good, bad := newRecorder(), newRecorder()
	p.RegisterRenderer("good", good)
	p.RegisterRenderer("bad", bad)
	p.Resync(Snapshot{})
	good.takeCalls()
	bad.takeCalls()

	failing := true
	bad.fail = func(string) bool { return failing }
	p.UpdateService(makeService("default", "svc"))
	assert.Equal(t, []string{"add default/svc"}, good.takeCalls())
	assert.Equal(t, []string{"add default/svc FAILED"}, bad.takeCalls())

	p.UpdateEndpointSlice(makeSlice("default", "svc-1", "svc", withEndpoints(makeEndpoint("10.244.2.1"))))
	assert.Equal(t, []string{"update default/svc"}, good.takeCalls())
	assert.Empty(t, bad.takeCalls(), "a dirty renderer gets no incremental call")

	// The failure was logged with the renderer, service and op.
	var found bool
	for _, e := range log.hook.snapshot() {
		if e.Data["renderer"] == "bad" && e.Data["service"] == "default/svc" && e.Data["op"] == "AddService" {
			found = true
			assert.ErrorIs(t, e.Data["error"].(error), errInjected)
		}
	}
	assert.True(t, found, "failure log with renderer, service and op fields")

	// Retries back off: 100ms, then 200ms, then 400ms.
	assert.Equal(t, clock.t.Add(100*time.Millisecond), p.retryDue(clock.now()), "not due yet")
	assert.Empty(t, bad.takeCalls())
	clock.advance(100 * time.Millisecond)
	assert.Equal(t, clock.t.Add(200*time.Millisecond), p.retryDue(clock.now()))
	assert.Equal(t, []string{"resync n=1 FAILED"}, bad.takeCalls())
	clock.advance(200 * time.Millisecond)
	assert.Equal(t, clock.t.Add(400*time.Millisecond), p.retryDue(clock.now()))
	assert.Equal(t, []string{"resync n=1 FAILED"}, bad.takeCalls())

	failing = false
	clock.advance(400 * time.Millisecond)
	assert.True(t, p.retryDue(clock.now()).IsZero(), "nothing pending after success")
	assert.Equal(t, []string{"resync n=1"}, bad.takeCalls())
	assert.Equal(t, good.state(), bad.state(), "the resync brought the failed renderer up to date")
	assert.Empty(t, good.takeCalls(), "the good renderer was never resynced")

	p.DeleteService("default", "svc")
	assert.Equal(t, []string{"delete default/svc"}, bad.takeCalls(), "clean again: incremental calls resume")

	st := p.Stats()
	assert.Equal(t, map[string]uint64{"bad": 3}, st.RendererFailures)
	assert.Equal(t, map[string]uint64{"good": 1, "bad": 4}, st.RendererResyncs)
	assert.Zero(t, st.DirtyRenderers)
}

func TestProcessorResyncCleansDirtyRenderer(t *testing.T) {
	p, _ := newTestProcessor(t)
	r := newRecorder()
	p.RegisterRenderer("r", r)
	p.Resync(Snapshot{})
	r.fail = func(op string) bool { return op == "add" }
	p.UpdateService(makeService("default", "svc"))
	assert.Equal(t, 1, p.Stats().DirtyRenderers)
	p.Resync(Snapshot{Services: []*corev1.Service{makeService("default", "svc")}})
	assert.Zero(t, p.Stats().DirtyRenderers)
	assert.Equal(t, []string{"resync n=0", "add default/svc FAILED", "resync n=1"}, r.takeCalls())
}

func TestLateRendererGetsItsOwnResync(t *testing.T) {
	p, _ := newTestProcessor(t)
	early := newRecorder()
	p.RegisterRenderer("early", early)
	p.Resync(Snapshot{
		Services:       []*corev1.Service{makeService("default", "svc")},
		EndpointSlices: []*discoveryv1.EndpointSlice{makeSlice("default", "svc-1", "svc", withEndpoints(makeEndpoint("10.244.2.1")))},
		LocalPods:      []LocalPod{localPod(1, "10.244.1.1")},
	})
	p.UpdateNode(makeNode("node-a", "192.168.0.1", thisZone))

	late := newRecorder()
	p.RegisterRenderer("late", late)
	assert.Equal(t, []string{"resync n=1"}, late.takeCalls())
	assert.Equal(t, early.state(), late.state())

	p.DeleteService("default", "svc")
	assert.Equal(t, []string{"delete default/svc"}, late.takeCalls())
	requireNoViolations(t, late)
}

func TestLateRendererFailingItsResyncIsRetried(t *testing.T) {
	p, _ := newTestProcessor(t)
	clock := &fakeClock{t: time.Unix(1000, 0)}
	p.now = clock.now
	p.Resync(Snapshot{})
	r := newRecorder()
	failing := true
	r.fail = func(string) bool { return failing }
	p.RegisterRenderer("late", r)
	assert.Equal(t, 1, p.Stats().DirtyRenderers)
	failing = false
	clock.advance(time.Second)
	p.retryDue(clock.now())
	assert.Equal(t, []string{"resync n=0 FAILED", "resync n=0"}, r.takeCalls())
}

func TestRegisterRendererTwiceReplaces(t *testing.T) {
	p, _ := newTestProcessor(t)
	first, second := newRecorder(), newRecorder()
	p.RegisterRenderer("r", first)
	p.RegisterRenderer("r", second)
	p.Resync(Snapshot{})
	assert.Empty(t, first.takeCalls())
	assert.Equal(t, []string{"resync n=0"}, second.takeCalls())
}

// TestRendererFailureOnEveryCallKind checks that each kind of incremental
// call marks the renderer dirty, and that the retried resync restores it.
func TestRendererFailureOnEveryCallKind(t *testing.T) {
	steps := map[string]func(p *Processor){
		"add":       func(p *Processor) { p.UpdateService(makeService("default", "new", withClusterIPs("10.96.0.20"))) },
		"update":    func(p *Processor) { p.UpdateEndpointSlice(makeSlice("default", "svc-1", "svc")) },
		"delete":    func(p *Processor) { p.DeleteService("default", "svc") },
		"nodeports": func(p *Processor) { p.UpdateNode(makeNode(thisNode, "192.168.0.9", thisZone)) },
		"frontends": func(p *Processor) { p.UpdateLocalPod(localPod(2, "10.244.1.2")) },
		"backends":  func(p *Processor) { p.DeleteLocalPod(PodID{Namespace: "default", Name: "pod-1"}) },
	}
	for op, step := range steps {
		t.Run(op, func(t *testing.T) {
			p, _ := newTestProcessor(t)
			clock := &fakeClock{t: time.Unix(1000, 0)}
			p.now = clock.now
			r, ref := newRecorder(), newRecorder()
			p.RegisterRenderer("r", r)
			p.RegisterRenderer("ref", ref)
			p.Resync(Snapshot{
				Services:       []*corev1.Service{makeService("default", "svc")},
				EndpointSlices: []*discoveryv1.EndpointSlice{makeSlice("default", "svc-1", "svc", withEndpoints(makeEndpoint("10.244.1.1", onNode(thisNode))))},
				LocalPods:      []LocalPod{localPod(1, "10.244.1.1")},
			})
			r.fail = func(got string) bool { return got == op }
			step(p)
			require.Equal(t, 1, p.Stats().DirtyRenderers, "the %s call failed", op)
			r.fail = nil
			clock.advance(time.Second)
			p.retryDue(clock.now())
			require.Zero(t, p.Stats().DirtyRenderers)
			assert.Equal(t, ref.state(), r.state())
		})
	}
}
