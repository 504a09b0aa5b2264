package processor

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vppsvc/vppsvc/model"
)

// TestIncrementalEqualsResync is the central property: for any sequence of
// events, the state a renderer reaches through incremental calls equals the
// state a fresh renderer gets from one Resync of the final objects. It also
// checks that a renderer failing at random converges to the same state once
// its retries succeed, and that resyncing the same processor changes nothing.
//
// Objects are drawn from a small universe (two namespaces, a few names, a
// few addresses shared between pods, nodes and endpoints) so that sequences
// hit collisions: slices moving between services, endpoints moving between
// slices, endpoints on node IPs, pods backing several services.
func TestIncrementalEqualsResync(t *testing.T) {
	sequences := 3000
	if testing.Short() {
		sequences = 500
	}
	for seed := range sequences {
		rng := rand.New(rand.NewPCG(uint64(seed), 0x5eed))
		if !runSequence(t, seed, rng) {
			return
		}
	}
}

func runSequence(t *testing.T, seed int, rng *rand.Rand) bool {
	t.Helper()
	w := newWorld(rng)
	p, _ := newTestProcessor(t)
	clock := &fakeClock{t: time.Unix(1000, 0)}
	p.now = clock.now
	inc, flaky := newRecorder(), newRecorder()
	flakyOn := rng.IntN(2) == 0
	flaky.fail = func(string) bool { return flakyOn && rng.IntN(10) == 0 }
	p.RegisterRenderer("inc", inc)
	p.RegisterRenderer("flaky", flaky)

	// Sometimes events arrive before the first Resync, as they do while a
	// watcher's informers sync; they must only fill the caches.
	var trace []string
	for range rng.IntN(3) * rng.IntN(10) {
		trace = append(trace, w.randomEvent(p))
	}
	for range rng.IntN(8) {
		w.randomEvent(nil) // objects that exist before the snapshot
	}
	p.Resync(w.snapshot())
	trace = append(trace, "resync")
	for range 1 + rng.IntN(200) {
		trace = append(trace, w.randomEvent(p))
		if rng.IntN(50) == 0 {
			clock.advance(time.Minute)
			p.retryDue(clock.now())
		}
	}
	flakyOn = false
	for i := 0; p.Stats().DirtyRenderers > 0; i++ {
		require.Less(t, i, 100, "seed %d: flaky renderer never recovered", seed)
		clock.advance(time.Minute)
		p.retryDue(clock.now())
	}

	fresh, _ := newTestProcessor(t)
	ref := newRecorder()
	fresh.RegisterRenderer("ref", ref)
	fresh.Resync(w.snapshot())

	ok := true
	check := func(cond bool, what string, args ...any) {
		if !cond && ok {
			ok = false
			t.Errorf("seed %d: %s\nevents:\n  %s", seed, fmt.Sprintf(what, args...), strings.Join(trace, "\n  "))
		}
	}
	inc.mu.Lock()
	violations := slices.Clone(inc.violations)
	inc.mu.Unlock()
	check(len(violations) == 0, "inconsistent renderer calls: %v", violations)
	want := ref.state()
	check(inc.state() == want, "incremental state differs from resync\n--- incremental\n%s--- resync\n%s", inc.state(), want)
	check(flaky.state() == want, "retried renderer differs from resync\n--- retried\n%s--- resync\n%s", flaky.state(), want)
	check(servicesString(p) == servicesString(fresh), "Services() differ")
	// The values are ConvertService's of the final objects, given every
	// slice: the processor's own conversion does not check again that a
	// slice is its service's, as it holds each service's slices by that.
	snap := w.snapshot()
	fresh.mu.Lock()
	for _, svc := range snap.Services {
		want, _ := ConvertService(svc, snap.EndpointSlices, fresh.nodeContext())
		var got *model.ContivService
		if e := fresh.services.entries.Get(ServiceIDOf(svc)); e != nil {
			got = e.value
		}
		check(got.Equal(want), "the processor's value of %s differs from ConvertService's\n%s\n%s", ServiceIDOf(svc), got, want)
	}
	fresh.mu.Unlock()
	check(p.NodeIPs().Equal(fresh.NodeIPs()), "NodeIPs() differ")

	p.Resync(w.snapshot())
	check(inc.state() == want, "resync of the same processor changed the state")
	return ok
}

func servicesString(p *Processor) string {
	var b strings.Builder
	for _, s := range p.Services() {
		fmt.Fprintln(&b, s)
	}
	return b.String()
}

// world is the test's own record of the current objects, from which the
// final snapshot is built.
type world struct {
	rng      *rand.Rand
	services map[string]*corev1.Service
	slices   map[string]*discoveryv1.EndpointSlice
	nodes    map[string]*corev1.Node
	pods     map[PodID]LocalPod
}

func newWorld(rng *rand.Rand) *world {
	return &world{rng: rng, services: map[string]*corev1.Service{}, slices: map[string]*discoveryv1.EndpointSlice{},
		nodes: map[string]*corev1.Node{}, pods: map[PodID]LocalPod{}}
}

func (w *world) snapshot() Snapshot {
	var s Snapshot
	for _, svc := range w.services {
		s.Services = append(s.Services, svc)
	}
	for _, sl := range w.slices {
		s.EndpointSlices = append(s.EndpointSlices, sl)
	}
	for _, n := range w.nodes {
		s.Nodes = append(s.Nodes, n)
	}
	for _, pod := range w.pods {
		s.LocalPods = append(s.LocalPods, pod)
	}
	return s
}

var (
	propNamespaces = []string{"default", "ns2"}
	propNodes      = []string{"node-a", "node-b", "node-c", "node-d"}
	propZones      = []string{"zone-a", "zone-b", "zone-c", ""}
	// propEndpointIPs overlaps local pod IPs (10.244.1.x) and node IPs.
	propEndpointIPs = []string{"10.244.1.1", "10.244.1.2", "10.244.1.3", "10.244.2.1", "10.244.2.2", "192.168.0.1", "192.168.0.2", "203.0.113.2", "bogus"}
	propEndpointIP6 = []string{"fd00:244:1::1", "fd00:244:2::1", "fd00:192::2", "10.244.2.9"}
	propNodeIPs     = []string{"192.168.0.1", "192.168.0.2", "192.168.0.3", "203.0.113.2", "fd00:192::2", "192.168.0"}
	propPodIPs      = []string{"10.244.1.1", "10.244.1.2", "10.244.1.3", "fd00:244:1::1"}
)

func (w *world) pick(list []string) string { return list[w.rng.IntN(len(list))] }
func (w *world) chance(n int) bool         { return w.rng.IntN(n) == 0 }

func (w *world) subset(list []string, max int) []string {
	var out []string
	for range w.rng.IntN(max + 1) {
		out = append(out, w.pick(list))
	}
	return out
}

// randomEvent applies one random change to the world and, when p is not nil,
// to the processor; it returns a line for the failure trace.
func (w *world) randomEvent(p *Processor) string {
	ns := w.pick(propNamespaces)
	switch r := w.rng.IntN(100); {
	case r < 20:
		svc := w.randomService(ns, fmt.Sprintf("s%d", w.rng.IntN(4)))
		w.services[svc.Namespace+"/"+svc.Name] = svc
		if p != nil {
			p.UpdateService(svc)
		}
		return fmt.Sprintf("UpdateService %s/%s %s %v", svc.Namespace, svc.Name, svc.Spec.Type, svc.Spec.ClusterIPs)
	case r < 27:
		name := fmt.Sprintf("s%d", w.rng.IntN(4))
		delete(w.services, ns+"/"+name)
		if p != nil {
			p.DeleteService(ns, name)
		}
		return "DeleteService " + ns + "/" + name
	case r < 62:
		s := w.randomSlice(ns, fmt.Sprintf("e%d", w.rng.IntN(6)))
		w.slices[s.Namespace+"/"+s.Name] = s
		if p != nil {
			p.UpdateEndpointSlice(s)
		}
		return fmt.Sprintf("UpdateEndpointSlice %s/%s -> %q %s %d endpoints", s.Namespace, s.Name, s.Labels[discoveryv1.LabelServiceName], s.AddressType, len(s.Endpoints))
	case r < 70:
		name := fmt.Sprintf("e%d", w.rng.IntN(6))
		delete(w.slices, ns+"/"+name)
		if p != nil {
			p.DeleteEndpointSlice(ns, name)
		}
		return "DeleteEndpointSlice " + ns + "/" + name
	case r < 80:
		n := w.randomNode(w.pick(propNodes))
		w.nodes[n.Name] = n
		if p != nil {
			p.UpdateNode(n)
		}
		return fmt.Sprintf("UpdateNode %s %v %q", n.Name, n.Status.Addresses, n.Labels[corev1.LabelTopologyZone])
	case r < 84:
		name := w.pick(propNodes)
		delete(w.nodes, name)
		if p != nil {
			p.DeleteNode(name)
		}
		return "DeleteNode " + name
	case r < 94:
		pod := w.randomPod()
		if valid, _, ok := validateLocalPod(pod); ok {
			w.pods[pod.ID] = valid
		} else {
			delete(w.pods, pod.ID)
		}
		if p != nil {
			p.UpdateLocalPod(pod)
		}
		return fmt.Sprintf("UpdateLocalPod %s %v %s", pod.ID, pod.IPs, pod.Interface)
	default:
		id := PodID{Namespace: "default", Name: fmt.Sprintf("pod-%d", w.rng.IntN(4))}
		delete(w.pods, id)
		if p != nil {
			p.DeleteLocalPod(id)
		}
		return "DeleteLocalPod " + id.String()
	}
}

func (w *world) randomService(ns, name string) *corev1.Service {
	svc := makeService(ns, name)
	svc.Spec.Type = []corev1.ServiceType{corev1.ServiceTypeClusterIP, corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort,
		corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeExternalName}[w.rng.IntN(5)]
	switch w.rng.IntN(8) {
	case 0:
		withClusterIPs("fd00:96::10")(svc)
	case 1, 2:
		withClusterIPs("10.96.0.10", "fd00:96::10")(svc)
	case 3:
		withClusterIPs(corev1.ClusterIPNone)(svc)
	case 4:
		withClusterIPs("10.96.0.x")(svc)
	}
	svc.Spec.Ports = nil
	for _, sp := range []corev1.ServicePort{
		svcPort("http", corev1.ProtocolTCP, 80, 30080), svcPort("dns", corev1.ProtocolUDP, 53, 30053),
		svcPort("", corev1.ProtocolTCP, 81, 0), svcPort("bad", corev1.ProtocolTCP, 0, 0),
	} {
		if w.chance(2) {
			svc.Spec.Ports = append(svc.Spec.Ports, sp)
		}
	}
	if w.chance(3) {
		svc.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		svc.Spec.HealthCheckNodePort = 32000
	}
	if w.chance(3) {
		svc.Spec.InternalTrafficPolicy = ptr(corev1.ServiceInternalTrafficPolicyLocal)
	}
	if w.chance(4) {
		svc.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
	}
	if w.chance(4) {
		svc.Spec.ExternalIPs = w.subset([]string{"198.51.100.1", "2001:db8:51::1", "x"}, 2)
	}
	if w.chance(3) {
		for _, a := range w.subset([]string{"192.0.2.1", "192.0.2.2", "2001:db8:2::1"}, 2) {
			svc.Status.LoadBalancer.Ingress = append(svc.Status.LoadBalancer.Ingress, corev1.LoadBalancerIngress{IP: a})
		}
		svc.Spec.LoadBalancerSourceRanges = w.subset([]string{"10.0.0.0/8", " 198.18.0.1/15", "bad"}, 2)
	}
	if w.chance(15) {
		svc.Labels = map[string]string{LabelServiceProxyName: "other"}
	}
	return svc
}

func (w *world) randomSlice(ns, name string) *discoveryv1.EndpointSlice {
	owner := fmt.Sprintf("s%d", w.rng.IntN(5)) // s4 never exists as a service
	if w.chance(12) {
		owner = ""
	}
	s := makeSlice(ns, name, owner)
	pool := propEndpointIPs
	switch w.rng.IntN(6) {
	case 0:
		s.AddressType = discoveryv1.AddressTypeIPv6
		pool = propEndpointIP6
	case 1:
		if w.chance(3) {
			s.AddressType = discoveryv1.AddressTypeFQDN
		}
	}
	s.Ports = nil
	for _, sp := range []discoveryv1.EndpointPort{
		slicePort("http", corev1.ProtocolTCP, 8080), slicePort("http", corev1.ProtocolTCP, 8081),
		slicePort("dns", corev1.ProtocolUDP, 5353), slicePort("", corev1.ProtocolTCP, 9000),
		slicePort("http", corev1.ProtocolUDP, 1), {Name: ptr("dns"), Port: ptr(int32(0))},
	} {
		if w.chance(2) {
			s.Ports = append(s.Ports, sp)
		}
	}
	// In a hinted slice every endpoint carries hints, as the EndpointSlice
	// controller does, so that topology filtering really happens.
	hintedSlice := w.chance(2)
	for range w.rng.IntN(5) {
		ep := discoveryv1.Endpoint{Addresses: []string{w.pick(pool)}}
		if !w.chance(5) {
			ep.NodeName = ptr(w.pick(propNodes))
		}
		ep.Conditions = discoveryv1.EndpointConditions{
			Ready: w.optBool(), Serving: w.optBool(), Terminating: w.optBool(),
		}
		if hintedSlice || w.chance(6) {
			ep.Hints = &discoveryv1.EndpointHints{ForZones: []discoveryv1.ForZone{{Name: w.pick(propZones[:3])}}}
			if w.chance(3) {
				ep.Hints.ForZones = append(ep.Hints.ForZones, discoveryv1.ForZone{Name: w.pick(propZones[:3])})
			}
		}
		s.Endpoints = append(s.Endpoints, ep)
	}
	return s
}

func (w *world) optBool() *bool {
	switch w.rng.IntN(3) {
	case 0:
		return nil
	case 1:
		return ptr(true)
	}
	return ptr(false)
}

func (w *world) randomNode(name string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	if z := w.pick(propZones); z != "" {
		n.Labels[corev1.LabelTopologyZone] = z
	}
	for _, a := range w.subset(propNodeIPs, 2) {
		typ := corev1.NodeInternalIP
		if w.chance(3) {
			typ = corev1.NodeExternalIP
		}
		n.Status.Addresses = append(n.Status.Addresses, corev1.NodeAddress{Type: typ, Address: a})
	}
	return n
}

func (w *world) randomPod() LocalPod {
	n := w.rng.IntN(4)
	pod := LocalPod{ID: PodID{Namespace: "default", Name: fmt.Sprintf("pod-%d", n)}, Interface: fmt.Sprintf("tap-%d", n)}
	if w.chance(10) {
		pod.Interface = ""
	}
	for _, a := range w.subset(propPodIPs, 2) {
		pod.IPs = append(pod.IPs, netip.MustParseAddr(a))
	}
	return pod
}
