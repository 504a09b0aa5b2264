package renderertest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"

	"github.com/vppsvc/vppsvc"
	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// Factory returns a new renderer that writes through client, the way the
// agent builds one over its VPP layer client.
type Factory func(client vppcfg.Client) (vppsvc.ServiceRendererAPI, error)

// Option changes how Run drives the renderer.
type Option func(*suite)

// WithChecks adds renderer-specific invariants that the client checks at
// every commit, after CheckVPP.
func WithChecks(checks ...Check) Option {
	return func(s *suite) { s.checks = append(s.checks, checks...) }
}

// WithOwner sets the owner name of the clients (default "renderertest").
func WithOwner(owner string) Option { return func(s *suite) { s.owner = owner } }

// WithSequences sets how many random call sequences of how many steps each
// Run plays (default 30 of 50 steps, 12 of 50 with -short).
func WithSequences(sequences, steps int) Option {
	return func(s *suite) { s.sequences, s.steps = sequences, steps }
}

type suite struct {
	newRenderer      Factory
	owner            string
	checks           []Check
	sequences, steps int
}

// errInjected is the error of the commits the suite makes fail on purpose.
var errInjected = errors.New("renderertest: injected commit failure")

// Run runs the conformance suite against the renderers newRenderer makes;
// see the package documentation for what it checks.
func Run(t *testing.T, newRenderer Factory, opts ...Option) {
	s := &suite{newRenderer: newRenderer, owner: "renderertest", sequences: 30, steps: 50}
	if testing.Short() {
		s.sequences = 12
	}
	for _, o := range opts {
		o(s)
	}
	t.Run("resync is idempotent", s.testResyncIdempotent)
	t.Run("delete removes everything", s.testDeleteRemovesEverything)
	t.Run("incremental equals resync", s.testIncrementalEqualsResync)
	t.Run("a large resync equals adding one by one", s.testLargeResyncEqualsAdds)
}

// start returns a renderer over a new client, resynced to ev.
func (s *suite) start(t *testing.T, ev *model.ResyncEventData) (vppsvc.ServiceRendererAPI, *Client) {
	t.Helper()
	c := NewClient(s.owner, s.checks...)
	r, err := s.newRenderer(c)
	if err != nil {
		t.Fatalf("new renderer: %v", err)
	}
	if err := r.Resync(ev); err != nil {
		t.Fatalf("Resync: %v", err)
	}
	return r, c
}

// resynced returns what a fresh renderer holds after one Resync of ev.
func (s *suite) resynced(t *testing.T, ev *model.ResyncEventData) []vppcfg.Item {
	t.Helper()
	_, c := s.start(t, ev)
	return c.Items()
}

func (s *suite) testResyncIdempotent(t *testing.T) {
	for _, seed := range s.seeds(t) {
		w := newWorld(rand.New(rand.NewPCG(seed, 0x1de)))
		for range 1 + w.pick(8) {
			id := w.serviceID()
			w.services[id] = w.randomService(id)
		}
		ev := w.event()
		r, c := s.start(t, ev)
		first := c.Items()
		if err := r.Resync(ev); err != nil {
			fatalSeed(t, seed, "second Resync: %v", err)
		}
		if got := c.Items(); !EqualItems(got, first) {
			fatalSeed(t, seed, "a second Resync of the same state changed it\n--- first\n%s--- second\n%s", ItemLines(first), ItemLines(got))
		}
	}
}

func (s *suite) testDeleteRemovesEverything(t *testing.T) {
	for _, seed := range s.seeds(t) {
		w := newWorld(rand.New(rand.NewPCG(seed, 0xde1)))
		empty := s.resynced(t, w.event())
		r, c := s.start(t, w.event())
		var added []*model.ContivService
		for range 1 + w.pick(8) {
			id := w.serviceID()
			if w.services[id] != nil {
				continue
			}
			svc := w.randomService(id)
			w.services[id] = svc
			added = append(added, svc)
			if err := r.AddService(svc); err != nil {
				fatalSeed(t, seed, "AddService(%s): %v", svc, err)
			}
		}
		w.rng.Shuffle(len(added), func(i, j int) { added[i], added[j] = added[j], added[i] })
		for _, svc := range added {
			if err := r.DeleteService(svc); err != nil {
				fatalSeed(t, seed, "DeleteService(%s): %v", svc.ID, err)
			}
		}
		if got := c.Items(); !EqualItems(got, empty) {
			fatalSeed(t, seed, "deleting every service left more than a Resync without services puts\n--- after deletes\n%s--- node only\n%s",
				ItemLines(got), ItemLines(empty))
		}
	}
}

// largeResync is how many services testLargeResyncEqualsAdds syncs: enough
// for a renderer core to render them on several goroutines; lateAdds of them
// are added one at a time.
const (
	largeResync = 2100
	lateAdds    = 64
)

// testLargeResyncEqualsAdds resyncs thousands of services at once (which a
// renderer may render concurrently) and checks that a renderer resynced
// without some of them, then told those one AddService at a time, holds the
// same items. Run it with -race: make test does.
func (s *suite) testLargeResyncEqualsAdds(t *testing.T) {
	w := newWorld(rand.New(rand.NewPCG(7, 0xb16)))
	all := make([]*model.ContivService, largeResync)
	for k := range largeResync {
		svc := w.randomService(w.serviceID())
		svc.ID.Name = fmt.Sprintf("big%d", k)
		var cluster []netip.Addr
		for _, a := range svc.ClusterIPs {
			if a.Is4() {
				cluster = append(cluster, netip.AddrFrom4([4]byte{10, 100, byte(k >> 8), byte(k)}))
			} else {
				cluster = append(cluster, netip.AddrFrom16([16]byte{0xfd, 0, 1, 0, 14: byte(k >> 8), 15: byte(k)}))
			}
		}
		svc.ClusterIPs = model.NewIPAddresses(cluster...)
		if k >= 16 { // a few contend for the same frontends, the rest do not
			svc.ExternalIPs, svc.LoadBalancerIPs, svc.LoadBalancerSourceRanges = nil, nil, nil
			for i := range svc.Ports {
				svc.Ports[i].NodePort = 0
			}
		}
		w.services[svc.ID] = svc
		all[k] = svc
	}
	want := s.resynced(t, w.event())
	var late []*model.ContivService
	for _, k := range w.rng.Perm(largeResync)[:lateAdds] {
		late = append(late, all[k])
		delete(w.services, all[k].ID)
	}
	r, c := s.start(t, w.event())
	for _, svc := range late {
		if err := r.AddService(svc); err != nil {
			t.Fatalf("AddService(%s): %v", svc.ID, err)
		}
	}
	if got := c.Items(); !EqualItems(got, want) {
		t.Fatalf("a Resync of %d services and %d AddService calls differ from one Resync of them all: %d items against %d\n--- resync and adds\n%s--- one resync\n%s",
			largeResync-lateAdds, lateAdds, len(got), len(want), ItemLines(got), ItemLines(want))
	}
}

// testIncrementalEqualsResync plays random call sequences and checks after
// every call that the renderer holds exactly what a fresh renderer holds
// after one Resync of the same state. Some calls are repeated (a harmless
// retry), and some commits fail on purpose: the call must then report the
// failure, and a Resync (what the processor does after a failed call) must
// converge. Some failed calls are instead made again with the same
// arguments, which must converge too: stricter than the processor needs,
// it shows the failure left no half-done state behind.
func (s *suite) testIncrementalEqualsResync(t *testing.T) {
	for _, seed := range s.seeds(t) {
		w := newWorld(rand.New(rand.NewPCG(seed, 0x5eed)))
		r, c := s.start(t, w.event())
		var trace []string
		fail := func(format string, args ...any) {
			t.Helper()
			fatalSeed(t, seed, "%s\ncalls:\n  %s", fmt.Sprintf(format, args...), strings.Join(trace, "\n  "))
		}
		for range s.steps {
			what, call := w.randomCall(r)
			trace = append(trace, what)
			inputs := w.snapshot()
			if w.chance(8) {
				c.FailNextCommit(errInjected)
				err := call()
				c.FailNextCommit(nil)
				if err != nil && !errors.Is(err, errInjected) {
					fail("%s: %v", what, err)
				}
				if err != nil && w.chance(3) {
					trace = append(trace, "  failed; Resync")
					call = func() error { return r.Resync(w.event()) }
				} else if err != nil {
					trace = append(trace, "  failed; retried")
				}
			}
			if err := call(); err != nil {
				fail("%s: %v", what, err)
			}
			if w.chance(6) {
				trace = append(trace, "  repeated")
				if err := call(); err != nil {
					fail("%s (repeated): %v", what, err)
				}
			}
			if changed := w.modified(inputs); changed != "" {
				fail("the renderer modified its input: %s", changed)
			}
			want := s.resynced(t, w.event())
			if got := c.Items(); !EqualItems(got, want) {
				fail("incremental state differs from a Resync of the same state\n--- incremental\n%s--- resync\n%s", ItemLines(got), ItemLines(want))
			}
		}
	}
}

// randomCall changes the world at random and returns the renderer call
// that tells the renderer, as the processor would.
func (w *world) randomCall(r vppsvc.ServiceRendererAPI) (string, func() error) {
	switch op := w.pick(10); {
	case op < 6:
		id := w.serviceID()
		old := w.services[id]
		if old != nil && w.chance(4) {
			delete(w.services, id)
			return "DeleteService " + id.String(), func() error { return r.DeleteService(old) }
		}
		svc := w.randomService(id)
		w.services[id] = svc
		if old == nil {
			return "AddService " + svc.String(), func() error { return r.AddService(svc) }
		}
		return "UpdateService " + svc.String(), func() error { return r.UpdateService(old, svc) }
	case op < 8:
		w.node.NodeIPs = w.randomNodeIPs()
		np := w.event().NodePortServices()
		nodeIPs := w.node.NodeIPs
		return "UpdateNodePortServices " + nodeIPs.String(), func() error { return r.UpdateNodePortServices(nodeIPs, np) }
	case op < 9:
		old := w.node.FrontendIfs
		w.node.FrontendIfs = model.NewInterfaces(append([]string{"uplink0", "host0"}, w.randomTaps()...)...)
		ifs := w.node.FrontendIfs
		return "UpdateLocalFrontendIfs " + ifs.String(), func() error { return r.UpdateLocalFrontendIfs(old, ifs) }
	default:
		old := w.node.BackendIfs
		w.node.BackendIfs = model.NewInterfaces(w.randomTaps()...)
		ifs := w.node.BackendIfs
		return "UpdateLocalBackendIfs " + ifs.String(), func() error { return r.UpdateLocalBackendIfs(old, ifs) }
	}
}

// snapshot returns deep copies of the current service values.
func (w *world) snapshot() map[model.ServiceID]*model.ContivService {
	out := make(map[model.ServiceID]*model.ContivService, len(w.services))
	for id, s := range w.services {
		out[id] = s.Clone()
	}
	return out
}

// modified names a service value that differs from its copy in before.
func (w *world) modified(before map[model.ServiceID]*model.ContivService) string {
	for id, s := range w.services {
		if b, ok := before[id]; ok && !b.Equal(s) {
			return fmt.Sprintf("%s became %s", b, s)
		}
	}
	return ""
}

// EqualItems reports whether both lists hold equal items in the same order.
func EqualItems(a, b []vppcfg.Item) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Key() != b[i].Key() || !a[i].Equal(b[i]) {
			return false
		}
	}
	return true
}

// ItemLines renders items one per line ("key = value"), for readable diffs.
func ItemLines(items []vppcfg.Item) string {
	var b strings.Builder
	for _, it := range items {
		b.WriteString(it.Key().String() + " = " + it.String() + "\n")
	}
	return b.String()
}
