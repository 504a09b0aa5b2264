package labtest

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/vppsvc/vppsvc/e2e/lab/netexec"
	"github.com/vppsvc/vppsvc/e2e/lab/nodeagent"
)

// Bounds of a first-connection probe: a new connection every probeEvery,
// each given probeTimeout, for at most probeLimit.
const (
	probeEvery   = 10 * time.Millisecond
	probeTimeout = 300 * time.Millisecond
	probeLimit   = 30 * time.Second
)

// firstAnswer opens a new connection to addr every probeEvery, without
// waiting for the earlier ones, until one is answered by want, and returns
// when that answer arrived. A connection whose SYN met no rule is dropped
// (and retransmitted only after a second), so waiting for each in turn
// would add up to its timeout to the figure; overlapping them keeps the
// resolution at probeEvery.
func firstAnswer(dial netexec.DialFunc, addr, want string) (time.Time, error) {
	ctx, cancel := context.WithTimeout(context.Background(), probeLimit)
	defer cancel()
	got := make(chan time.Time, 1)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	tick := time.NewTicker(probeEvery)
	defer tick.Stop()
	for {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, ccancel := context.WithTimeout(ctx, probeTimeout)
			defer ccancel()
			if name, err := netexec.Hostname(cctx, dial, addr); err == nil && name == want {
				select {
				case got <- time.Now():
				default:
				}
			}
		}()
		select {
		case at := <-got:
			return at, nil
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("%s: no answer from %s within %s", addr, want, probeLimit)
		case <-tick.C:
		}
	}
}

// sliceEvent is an EndpointSlice as the test's watch saw it arrive.
type sliceEvent struct {
	at      time.Time
	service string
	family  corev1.IPFamily
	ready   []string
}

// sliceWatch records every EndpointSlice event of a namespace.
type sliceWatch struct {
	mu     sync.Mutex
	events []sliceEvent
	stop   func()
}

func watchSlices(t *testing.T, ns string) *sliceWatch {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	sw := &sliceWatch{}
	done := make(chan struct{})
	sw.stop = func() { cancel(); <-done }
	open := func(rv string) (watch.Interface, error) {
		return client().DiscoveryV1().EndpointSlices(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
	}
	w, err := open("")
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	go func() {
		defer close(done)
		rv := ""
		for ctx.Err() == nil {
			// The API server ends a watch after a while: watch again from
			// the last version seen.
			for ev := range w.ResultChan() {
				if ev.Type == watch.Error {
					rv = "" // too old: from now on
					continue
				}
				s, ok := ev.Object.(*discoveryv1.EndpointSlice)
				if !ok {
					continue
				}
				rv = s.ResourceVersion
				if ev.Type == watch.Deleted {
					continue
				}
				e := sliceEvent{at: time.Now(), service: s.Labels[discoveryv1.LabelServiceName], family: corev1.IPFamily(s.AddressType)}
				for _, ep := range s.Endpoints {
					if ep.Conditions.Ready == nil || *ep.Conditions.Ready {
						e.ready = append(e.ready, ep.Addresses...)
					}
				}
				sw.mu.Lock()
				sw.events = append(sw.events, e)
				sw.mu.Unlock()
			}
			w.Stop()
			for ctx.Err() == nil {
				if w, err = open(rv); err == nil {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
	}()
	return sw
}

// firstReady is when the watch first saw, after since, service's slice of
// family f hold ip as a ready endpoint.
func (sw *sliceWatch) firstReady(service string, f corev1.IPFamily, ip netip.Addr, since time.Time) (time.Time, bool) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	for _, e := range sw.events {
		if e.at.Before(since) || e.service != service || e.family != f {
			continue
		}
		if slices.Contains(e.ready, ip.String()) {
			return e.at, true
		}
	}
	return time.Time{}, false
}

// waitLeft waits (bounded) until the watch has seen, after since, the
// service's slices of both families without ip4 and ip6 as ready endpoints.
func (sw *sliceWatch) waitLeft(t *testing.T, service string, p *corev1.Pod, since time.Time) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		left := 0
		sw.mu.Lock()
		for _, f := range families {
			for i := len(sw.events) - 1; i >= 0; i-- {
				e := sw.events[i]
				if e.service == service && e.family == f {
					if e.at.After(since) && !slices.Contains(e.ready, podIP(p, f).String()) {
						left++
					}
					break
				}
			}
		}
		sw.mu.Unlock()
		if left == len(families) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s: %s still an endpoint after 10 s", service, p.Name)
}

// change is one timed change: the API write, and per family when the
// EndpointSlice with the new endpoint arrived and when the first connection
// saw it.
type change struct {
	what    string
	service string
	target  *corev1.Pod
	write   time.Time
	slice   map[corev1.IPFamily]time.Time
	answer  map[corev1.IPFamily]time.Time
}

// probeChange waits, on both families at once, for the first connection
// through the service's ClusterIP that target answers.
func probeChange(t *testing.T, c *change, dial netexec.DialFunc, svc *corev1.Service) {
	t.Helper()
	c.answer = map[corev1.IPFamily]time.Time{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	var errs []error
	for _, f := range families {
		wg.Add(1)
		go func() {
			defer wg.Done()
			at, err := firstAnswer(dial, hostPort(svcIP(svc, f), 80), c.target.Name)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			c.answer[f] = at
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%s: %v", c.what, errs)
	}
}

// programmingFigures writes 100 changes per side to the API server — 50
// new Services over a running pod, 50 endpoint changes (a pod leaves the
// service by a label change and another joins) — alternating the sides
// change by change, and times each from its write until the first
// connection from a client pod of the side that sees it, per family. With
// the test's own watch of the EndpointSlices and, on a VPP side, the client
// node's renderer calls, each is split into write → EndpointSlice written
// → vppsvc's renderer call → first connection.
func programmingFigures(t *testing.T, ns string, sides []*side) {
	type state struct {
		run  *corev1.Pod
		late []*corev1.Pod
		lsvc *corev1.Service
		dial netexec.DialFunc
		done []*change
		// b2b are endpoint changes written right after the previous pod
		// left the same service.
		b2b []*change
	}
	st := map[string]*state{}
	for _, s := range sides {
		x := &state{run: createPods(t, ns, s.prefix+"-prog", 1, s.server.Name)[0], dial: fromPod(s.viaSvc)}
		for i := range 2 {
			createPod(t, ns, podSpec{name: fmt.Sprintf("%s-late-%d", s.prefix, i), node: s.server.Name, app: s.prefix + "-late-off"})
		}
		x.late = waitRunning(t, ns, s.prefix+"-late-0", s.prefix+"-late-1")
		x.lsvc = createService(t, ns, webService(s.prefix+"-late", s.prefix+"-late-on"))
		st[s.name] = x
	}
	sw := watchSlices(t, ns)
	defer sw.stop()
	label := func(p *corev1.Pod, app string) {
		patch := []byte(`{"metadata":{"labels":{"app":"` + app + `"}}}`)
		if _, err := client().CoreV1().Pods(ns).Patch(context.Background(), p.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	for i := range 100 {
		for _, s := range sides {
			x := st[s.name]
			c := &change{}
			var svc *corev1.Service
			if i < 50 {
				svc = webService(fmt.Sprintf("%s-prog-%d", s.prefix, i), s.prefix+"-prog")
				c.what, c.target = "new Service "+svc.Name, x.run
				c.write = time.Now()
				got, err := client().CoreV1().Services(ns).Create(context.Background(), svc, metav1.CreateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				svc = got
			} else {
				in, out := x.late[i%2], x.late[(i+1)%2]
				svc, c.what, c.target = x.lsvc, "endpoint change to "+in.Name, in
				// The leaving pod first, on its own: written back to back,
				// the join would find the EndpointSlice controller's cache
				// behind its own last write, and it retries such a sync only
				// after its backoff (1 s), which is not what is measured here.
				left := time.Now()
				label(out, s.prefix+"-late-off")
				if i > 50 {
					sw.waitLeft(t, x.lsvc.Name, out, left)
				}
				time.Sleep(250 * time.Millisecond)
				c.write = time.Now()
				label(in, s.prefix+"-late-on")
			}
			c.service = svc.Name
			probeChange(t, c, x.dial, svc)
			x.done = append(x.done, c)
		}
	}
	t.Logf("%d changes per side in %s", 100, time.Since(start).Round(time.Millisecond))
	// The same endpoint change with the leaving pod's label written right
	// before the joining one's, as a rolling update does: timed from the
	// first write.
	for i := range 20 {
		for _, s := range sides {
			x := st[s.name]
			in, out := x.late[i%2], x.late[(i+1)%2]
			c := &change{what: "back-to-back endpoint change to " + in.Name, target: in, service: x.lsvc.Name}
			c.write = time.Now()
			label(out, s.prefix+"-late-off")
			label(in, s.prefix+"-late-on")
			probeChange(t, c, x.dial, x.lsvc)
			x.b2b = append(x.b2b, c)
		}
	}
	time.Sleep(500 * time.Millisecond) // the last slice events
	for _, s := range sides {
		x := st[s.name]
		var calls []nodeagent.RendererCall
		if !s.client.IsKernel() {
			var err error
			if calls, err = nodeagent.ReadCallLog(theLab.Opts.StateDir, s.client.Name); err != nil {
				t.Logf("%s: no renderer calls: %v", s.name, err)
			}
		}
		for _, f := range families {
			var b2b, b2bSlice []time.Duration
			for _, c := range x.b2b {
				b2b = append(b2b, c.answer[f].Sub(c.write))
				if sl, ok := sw.firstReady(c.service, f, podIP(c.target, f), c.write); ok && !sl.After(c.answer[f]) {
					b2bSlice = append(b2bSlice, sl.Sub(c.write))
				}
			}
			t.Logf("FIGURE %s %s back-to-back endpoint changes (leave and join written together), write → first connection: %s; write → EndpointSlice: %s", famName(f), s.name, pcts(b2b), pcts(b2bSlice))
			var total, toSlice, sliceToAnswer, sliceToCall, callTime, callToAnswer []time.Duration
			renderer := "nat44"
			if f == corev1.IPv6Protocol {
				renderer = "ipv6"
			}
			var slow []string
			for _, c := range x.done {
				ans := c.answer[f]
				total = append(total, ans.Sub(c.write))
				sl, ok := sw.firstReady(c.service, f, podIP(c.target, f), c.write)
				if !ok || sl.After(ans) {
					if ans.Sub(c.write) > 300*time.Millisecond {
						slow = append(slow, fmt.Sprintf("%s: answer +%s, no slice seen before it", c.what, ans.Sub(c.write).Round(time.Millisecond)))
					}
					continue
				}
				toSlice = append(toSlice, sl.Sub(c.write))
				sliceToAnswer = append(sliceToAnswer, ans.Sub(sl))
				line := fmt.Sprintf("%s: slice +%s, answer +%s", c.what, sl.Sub(c.write).Round(time.Millisecond), ans.Sub(c.write).Round(time.Millisecond))
				// The renderer call that programmed it: the last one of the
				// family's renderer that began before the answer.
				var prog *nodeagent.RendererCall
				for j := range calls {
					if calls[j].Renderer == renderer && calls[j].Begin.After(c.write) && calls[j].End.Before(ans) {
						prog = &calls[j]
					}
				}
				if prog != nil {
					sliceToCall = append(sliceToCall, prog.Begin.Sub(sl))
					callTime = append(callTime, prog.End.Sub(prog.Begin))
					callToAnswer = append(callToAnswer, ans.Sub(prog.End))
					line += fmt.Sprintf(", %s call +%s…+%s", renderer, prog.Begin.Sub(c.write).Round(time.Millisecond), prog.End.Sub(c.write).Round(time.Millisecond))
				}
				if ans.Sub(c.write) > 300*time.Millisecond {
					slow = append(slow, line)
				}
			}
			fam := famName(f)
			t.Logf("FIGURE %s %s network programming latency, write → first connection over %d changes: %s", fam, s.name, len(total), pcts(total))
			t.Logf("FIGURE %s %s   write → EndpointSlice seen by the test: %s", fam, s.name, pcts(toSlice))
			t.Logf("FIGURE %s %s   EndpointSlice → first connection: %s", fam, s.name, pcts(sliceToAnswer))
			if len(sliceToCall) > 0 {
				t.Logf("FIGURE %s %s   EndpointSlice → vppsvc's last %s call before the answer began: %s", fam, s.name, renderer, pcts(sliceToCall))
				t.Logf("FIGURE %s %s   that call (VPP programmed): %s", fam, s.name, pcts(callTime))
				t.Logf("FIGURE %s %s   its end → first connection: %s", fam, s.name, pcts(callToAnswer))
			}
			for _, l := range slow {
				t.Logf("%s %s slow change: %s", fam, s.name, l)
			}
		}
	}
}

// pcts formats p50, p99 and max of ds (sorted in place).
func pcts(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	slices.Sort(ds)
	r := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
	return strings.Join([]string{"p50 " + r(netexec.Percentile(ds, 50)), "p99 " + r(netexec.Percentile(ds, 99)), "max " + r(ds[len(ds)-1]), fmt.Sprintf("(n %d)", len(ds))}, ", ")
}
