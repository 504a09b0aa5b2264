package processor

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/vppsvc/vppsvc/model"
)

// startedProcessor returns a processor for node-a, synced with the given
// snapshot, and its recorder with the resync call already taken.
func startedProcessor(t *testing.T, snap Snapshot) (*Processor, *recorder) {
	t.Helper()
	p, _ := newTestProcessor(t)
	r := newRecorder()
	p.RegisterRenderer("rec", r)
	p.Resync(snap)
	require.Len(t, r.takeCalls(), 1)
	return p, r
}

func requireNoViolations(t *testing.T, r *recorder) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	require.Empty(t, r.violations)
}

func TestNothingRenderedBeforeFirstResync(t *testing.T) {
	p, _ := newTestProcessor(t)
	r := newRecorder()
	p.RegisterRenderer("rec", r)
	p.UpdateNode(makeNode("node-a", "192.168.0.1", thisZone))
	p.UpdateService(makeService("default", "svc"))
	p.UpdateEndpointSlice(makeSlice("default", "svc-1", "svc", withEndpoints(makeEndpoint("10.244.2.1"))))
	p.UpdateLocalPod(localPod(1, "10.244.1.1"))
	assert.Empty(t, r.takeCalls())
	// The caches were updated all the same.
	require.Len(t, p.Services(), 1)
	assert.Equal(t, ips("192.168.0.1"), p.NodeIPs())

	p.Resync(Snapshot{
		Services:       []*corev1.Service{makeService("default", "svc")},
		EndpointSlices: []*discoveryv1.EndpointSlice{makeSlice("default", "svc-1", "svc", withEndpoints(makeEndpoint("10.244.2.1")))},
		Nodes:          []*corev1.Node{makeNode("node-a", "192.168.0.1", thisZone)},
		LocalPods:      []LocalPod{localPod(1, "10.244.1.1")},
	})
	assert.Equal(t, []string{"resync n=1"}, r.takeCalls())
	assert.Equal(t, "nodeIPs {192.168.0.1}\nfrontends {host0,tap-1,uplink0}\nbackends {}\n"+
		"default/svc etp=Cluster itp=Cluster clusterIPs={10.96.0.10} port[http]=80/TCP->[10.244.2.1:8080]\n", r.state())
	requireNoViolations(t, r)
}

func TestServiceLifecycle(t *testing.T) {
	p, r := startedProcessor(t, Snapshot{})
	slice := func(addrs ...string) *discoveryv1.EndpointSlice {
		var eps []discoveryv1.Endpoint
		for _, a := range addrs {
			eps = append(eps, makeEndpoint(a))
		}
		return makeSlice("default", "svc-1", "svc", withEndpoints(eps...))
	}
	steps := []struct {
		name      string
		do        func()
		wantCalls []string
		wantHTTP  []model.ServiceBackend
	}{
		{"create without endpoints", func() { p.UpdateService(makeService("default", "svc")) }, []string{"add default/svc"}, nil},
		{"first endpoint", func() { p.UpdateEndpointSlice(slice("10.244.2.1")) }, []string{"update default/svc"}, []model.ServiceBackend{be("10.244.2.1:8080")}},
		{"scale up", func() { p.UpdateEndpointSlice(slice("10.244.2.2", "10.244.2.1")) }, []string{"update default/svc"}, []model.ServiceBackend{be("10.244.2.1:8080"), be("10.244.2.2:8080")}},
		{"same endpoints in another order: no call", func() { p.UpdateEndpointSlice(slice("10.244.2.1", "10.244.2.2")) }, nil, []model.ServiceBackend{be("10.244.2.1:8080"), be("10.244.2.2:8080")}},
		{"same service again: no call", func() { p.UpdateService(makeService("default", "svc")) }, nil, []model.ServiceBackend{be("10.244.2.1:8080"), be("10.244.2.2:8080")}},
		{"scale down", func() { p.UpdateEndpointSlice(slice("10.244.2.2")) }, []string{"update default/svc"}, []model.ServiceBackend{be("10.244.2.2:8080")}},
		{"slice deleted", func() { p.DeleteEndpointSlice("default", "svc-1") }, []string{"update default/svc"}, nil},
		{"slice deleted twice: no call", func() { p.DeleteEndpointSlice("default", "svc-1") }, nil, nil},
		{"service deleted", func() { p.DeleteService("default", "svc") }, []string{"delete default/svc"}, nil},
		{"service deleted twice: no call", func() { p.DeleteService("default", "svc") }, nil, nil},
	}
	for _, step := range steps {
		step.do()
		assert.Equal(t, step.wantCalls, r.takeCalls(), step.name)
		svcs := p.Services()
		if step.name == "service deleted" || step.name == "service deleted twice: no call" {
			assert.Empty(t, svcs, step.name)
			continue
		}
		require.Len(t, svcs, 1, step.name)
		assert.Equal(t, step.wantHTTP, svcs[0].Backends("http"), step.name)
	}
	requireNoViolations(t, r)
}

func TestServiceRenderability(t *testing.T) {
	p, r := startedProcessor(t, Snapshot{})
	p.UpdateEndpointSlice(makeSlice("default", "svc-1", "svc", withEndpoints(makeEndpoint("10.244.2.1"))))
	assert.Empty(t, r.takeCalls(), "slices alone render nothing")

	p.UpdateService(makeService("default", "svc"))
	assert.Equal(t, []string{"add default/svc"}, r.takeCalls(), "slice seen first: one add with its backends")
	assert.Len(t, p.Services()[0].Backends("http"), 1)

	p.UpdateService(makeService("default", "svc", withType(corev1.ServiceTypeExternalName), withClusterIPs()))
	assert.Equal(t, []string{"delete default/svc"}, r.takeCalls(), "stops being renderable")

	p.UpdateService(makeService("default", "svc", func(s *corev1.Service) { s.Labels = map[string]string{LabelServiceProxyName: "other"} }))
	assert.Empty(t, r.takeCalls(), "still not renderable")

	p.UpdateService(makeService("default", "svc"))
	assert.Equal(t, []string{"add default/svc"}, r.takeCalls(), "renderable again")

	p.UpdateService(makeService("default", "svc", withClusterIPs(corev1.ClusterIPNone)))
	assert.Equal(t, []string{"delete default/svc"}, r.takeCalls(), "headless")
	requireNoViolations(t, r)
}

func TestSliceMovesBetweenServices(t *testing.T) {
	p, r := startedProcessor(t, Snapshot{Services: []*corev1.Service{
		makeService("default", "a", withClusterIPs("10.96.0.1")),
		makeService("default", "b", withClusterIPs("10.96.0.2")),
	}})
	p.UpdateEndpointSlice(makeSlice("default", "s1", "a", withEndpoints(makeEndpoint("10.244.2.1"))))
	assert.Equal(t, []string{"update default/a"}, r.takeCalls())

	p.UpdateEndpointSlice(makeSlice("default", "s1", "b", withEndpoints(makeEndpoint("10.244.2.1"))))
	assert.Equal(t, []string{"update default/a", "update default/b"}, r.takeCalls(), "label changed: old service loses, new gains")

	p.UpdateEndpointSlice(makeSlice("default", "s1", "", withEndpoints(makeEndpoint("10.244.2.1"))))
	assert.Equal(t, []string{"update default/b"}, r.takeCalls(), "label removed: slice ignored and leaves b")

	p.DeleteEndpointSlice("default", "s1")
	assert.Empty(t, r.takeCalls())
	for _, s := range p.Services() {
		for _, port := range s.Ports {
			assert.Empty(t, port.Backends, s.ID.String())
		}
	}
	requireNoViolations(t, r)
}

func TestEndpointMovesBetweenSlices(t *testing.T) {
	p, r := startedProcessor(t, Snapshot{
		Services: []*corev1.Service{makeService("default", "svc")},
		EndpointSlices: []*discoveryv1.EndpointSlice{
			makeSlice("default", "s1", "svc", withEndpoints(makeEndpoint("10.244.2.1"), makeEndpoint("10.244.2.2"))),
			makeSlice("default", "s2", "svc", withEndpoints(makeEndpoint("10.244.2.3"))),
		},
	})
	// The controller adds the endpoint to s2 first, then removes it from s1:
	// the service never loses it, so no call is needed.
	p.UpdateEndpointSlice(makeSlice("default", "s2", "svc", withEndpoints(makeEndpoint("10.244.2.3"), makeEndpoint("10.244.2.2"))))
	p.UpdateEndpointSlice(makeSlice("default", "s1", "svc", withEndpoints(makeEndpoint("10.244.2.1"))))
	assert.Empty(t, r.takeCalls())
	assert.Len(t, p.Services()[0].Backends("http"), 3)
}

func TestNodeIPChanges(t *testing.T) {
	np := makeService("default", "np", withClusterIPs("10.96.0.1"), withType(corev1.ServiceTypeNodePort),
		withPorts(svcPort("http", corev1.ProtocolTCP, 80, 30080)))
	hostnet := makeService("default", "hostnet", withClusterIPs("10.96.0.2"))
	plain := makeService("default", "plain", withClusterIPs("10.96.0.3"))
	p, r := startedProcessor(t, Snapshot{
		Services: []*corev1.Service{np, hostnet, plain},
		EndpointSlices: []*discoveryv1.EndpointSlice{
			makeSlice("default", "hostnet-1", "hostnet", withEndpoints(makeEndpoint("192.168.0.2"))),
			makeSlice("default", "plain-1", "plain", withEndpoints(makeEndpoint("10.244.2.1"))),
		},
		Nodes: []*corev1.Node{makeNode("node-a", "192.168.0.1", thisZone)},
	})

	p.UpdateNode(makeNode("node-b", "192.168.0.2", "zone-b"))
	assert.Equal(t, []string{"update default/hostnet"}, r.takeCalls(),
		"the endpoint on the new node IP becomes host-network; another node's IP answers no node port here")
	assert.True(t, p.Services()[0].Backends("http")[0].HostNetwork, "default/hostnet sorts first")

	p.UpdateNode(makeNode("node-b", "192.168.0.2", "zone-b", func(n *corev1.Node) {
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
		n.Status.Addresses = append(n.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeHostName, Address: "node-b"})
	}))
	assert.Empty(t, r.takeCalls(), "a heartbeat or a hostname address changes nothing")

	p.UpdateNode(makeNode("node-c", "192.168.0.2", "zone-c"))
	assert.Empty(t, r.takeCalls(), "an IP shared by two nodes does not change the set")

	p.UpdateNode(makeNode("node-b", "192.168.0.2", "zone-b", func(n *corev1.Node) {
		n.Status.Addresses = append(n.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: "203.0.113.2"})
	}))
	assert.Empty(t, r.takeCalls(), "another node's external IP changes nothing here")

	p.DeleteNode("node-b")
	assert.Empty(t, r.takeCalls(), "node-c still has 192.168.0.2")
	p.DeleteNode("node-c")
	assert.Equal(t, []string{"update default/hostnet"}, r.takeCalls())
	p.DeleteNode("node-c")
	assert.Empty(t, r.takeCalls())
	assert.Equal(t, ips("192.168.0.1"), p.NodeIPs())
	requireNoViolations(t, r)
}

func TestThisNodeZoneChange(t *testing.T) {
	hintedSvc := makeService("default", "hinted", withClusterIPs("10.96.0.1"))
	plain := makeService("default", "plain", withClusterIPs("10.96.0.2"))
	p, r := startedProcessor(t, Snapshot{
		Services: []*corev1.Service{hintedSvc, plain},
		EndpointSlices: []*discoveryv1.EndpointSlice{
			makeSlice("default", "hinted-1", "hinted", withEndpoints(makeEndpoint("10.244.2.1", hinted("zone-a")), makeEndpoint("10.244.2.2", hinted("zone-b")))),
			makeSlice("default", "plain-1", "plain", withEndpoints(makeEndpoint("10.244.2.3"))),
		},
		Nodes: []*corev1.Node{makeNode("node-a", "192.168.0.1", "")},
	})
	assert.Len(t, p.Services()[0].Backends("http"), 2, "no zone label: hints ignored")

	p.UpdateNode(makeNode("node-a", "192.168.0.1", "zone-a"))
	assert.Equal(t, []string{"update default/hinted"}, r.takeCalls())
	assert.Equal(t, []model.ServiceBackend{be("10.244.2.1:8080", "zones=zone-a")}, p.Services()[0].Backends("http"))

	p.UpdateNode(makeNode("node-b", "192.168.0.1", "zone-b"))
	assert.Empty(t, r.takeCalls(), "another node's zone does not matter")

	p.UpdateNode(makeNode("node-a", "192.168.0.1", "zone-b"))
	assert.Equal(t, []string{"update default/hinted"}, r.takeCalls())
	p.DeleteNode("node-a")
	assert.Equal(t, []string{"update default/hinted", "nodeports {} []"}, r.takeCalls(), "this node gone: no zone, hints ignored, no node-port address")
	assert.Len(t, p.Services()[0].Backends("http"), 2)
	requireNoViolations(t, r)
}

func TestFrontendAndBackendInterfaces(t *testing.T) {
	p, r := startedProcessor(t, Snapshot{LocalPods: []LocalPod{localPod(1, "10.244.1.1")}})
	assert.Equal(t, "nodeIPs {}\nfrontends {host0,tap-1,uplink0}\nbackends {}\n", r.state())

	p.UpdateLocalPod(localPod(2, "10.244.1.2", "fd00:244:1::2"))
	assert.Equal(t, []string{"frontends {host0,tap-1,uplink0}->{host0,tap-1,tap-2,uplink0}"}, r.takeCalls())

	p.UpdateLocalPod(localPod(2, "fd00:244:1::2", "10.244.1.2"))
	assert.Empty(t, r.takeCalls(), "same pod again")

	p.UpdateService(makeService("default", "svc"))
	p.UpdateEndpointSlice(makeSlice("default", "svc-1", "svc", withEndpoints(makeEndpoint("10.244.1.2", onNode(thisNode)))))
	assert.Equal(t, []string{"add default/svc", "update default/svc", "backends {}->{tap-2}"}, r.takeCalls())

	p.UpdateService(makeService("default", "svc2", withClusterIPs("10.96.0.11")))
	p.UpdateEndpointSlice(makeSlice("default", "svc2-1", "svc2", withEndpoints(makeEndpoint("10.244.1.2", onNode(thisNode)))))
	assert.Equal(t, []string{"add default/svc2", "update default/svc2"}, r.takeCalls(), "second reference: interface already a backend")

	p.DeleteService("default", "svc")
	assert.Equal(t, []string{"delete default/svc"}, r.takeCalls(), "still referenced by svc2")

	p.UpdateLocalPod(localPod(3, "10.244.1.3"))
	p.UpdateEndpointSlice(makeSlice("default", "svc2-1", "svc2", withEndpoints(makeEndpoint("10.244.1.3", onNode(thisNode)))))
	assert.Equal(t, []string{
		"frontends {host0,tap-1,tap-2,uplink0}->{host0,tap-1,tap-2,tap-3,uplink0}",
		"update default/svc2",
		"backends {tap-2}->{tap-3}",
	}, r.takeCalls())

	p.DeleteLocalPod(PodID{Namespace: "default", Name: "pod-3"})
	assert.Equal(t, []string{
		"frontends {host0,tap-1,tap-2,tap-3,uplink0}->{host0,tap-1,tap-2,uplink0}",
		"backends {tap-3}->{}",
	}, r.takeCalls(), "a pod that leaves is no longer a backend interface, even if slices still list its IP")

	p.UpdateLocalPod(LocalPod{ID: PodID{Namespace: "default", Name: "pod-2"}})
	assert.Equal(t, []string{"frontends {host0,tap-1,tap-2,uplink0}->{host0,tap-1,uplink0}"}, r.takeCalls(), "a pod without interface is dropped")
	requireNoViolations(t, r)
}

func TestResyncAgainMatchesIncrementalState(t *testing.T) {
	snap := Snapshot{
		Services:       []*corev1.Service{makeService("default", "svc"), makeService("default", "other", withClusterIPs("10.96.0.11"))},
		EndpointSlices: []*discoveryv1.EndpointSlice{makeSlice("default", "svc-1", "svc", withEndpoints(makeEndpoint("10.244.1.1", onNode(thisNode))))},
		Nodes:          []*corev1.Node{makeNode("node-a", "192.168.0.1", thisZone)},
		LocalPods:      []LocalPod{localPod(1, "10.244.1.1")},
	}
	p, r := startedProcessor(t, Snapshot{})
	for _, s := range snap.Services {
		p.UpdateService(s)
	}
	for _, s := range snap.EndpointSlices {
		p.UpdateEndpointSlice(s)
	}
	p.UpdateNode(snap.Nodes[0])
	p.UpdateLocalPod(snap.LocalPods[0])
	p.UpdateService(makeService("default", "gone", withClusterIPs("10.96.0.12")))
	p.DeleteService("default", "gone")
	incremental := r.state()
	r.takeCalls()

	p.Resync(snap)
	assert.Equal(t, []string{"resync n=2"}, r.takeCalls())
	assert.Equal(t, incremental, r.state())
	assert.Contains(t, incremental, "backends {tap-1}")
	requireNoViolations(t, r)
}

func TestResyncReplacesCaches(t *testing.T) {
	p, r := startedProcessor(t, Snapshot{
		Services:  []*corev1.Service{makeService("default", "old")},
		Nodes:     []*corev1.Node{makeNode("node-b", "192.168.0.2", "zone-b")},
		LocalPods: []LocalPod{localPod(1, "10.244.1.1")},
	})
	p.Resync(Snapshot{Services: []*corev1.Service{makeService("default", "new")}})
	assert.Equal(t, []string{"resync n=1"}, r.takeCalls())
	assert.Equal(t, "nodeIPs {}\nfrontends {host0,uplink0}\nbackends {}\n"+
		"default/new etp=Cluster itp=Cluster clusterIPs={10.96.0.10} port[http]=80/TCP->[]\n", r.state())
	p.DeleteService("default", "old")
	assert.Empty(t, r.takeCalls(), "the old service is gone from the caches")
}

// A CNI that reports its pods with UpdateLocalPod, as the README's
// embedder does, may do so before the watcher's first Resync: that Resync
// (KeepLocalPods, it knows no pods) must not forget them. The lab's node
// agent found this: its pods vanished from the frontend interfaces.
func TestResyncKeepsLocalPodsReportedByTheCNI(t *testing.T) {
	p, _ := newTestProcessor(t)
	r := newRecorder()
	p.RegisterRenderer("rec", r)
	p.UpdateLocalPod(localPod(1, "10.244.1.1"))
	p.Resync(Snapshot{Services: []*corev1.Service{makeService("default", "web")}, KeepLocalPods: true})
	assert.Contains(t, r.state(), "frontends {host0,tap-1,uplink0}")
	p.Resync(Snapshot{KeepLocalPods: true})
	assert.Contains(t, r.state(), "frontends {host0,tap-1,uplink0}", "a later Resync keeps them too")
	p.Resync(Snapshot{})
	assert.Contains(t, r.state(), "frontends {host0,uplink0}", "without KeepLocalPods the snapshot's (no) pods replace them")
	requireNoViolations(t, r)
}

// concurrencyGuard is a renderer that fails the test if two calls overlap.
type concurrencyGuard struct {
	inCall   atomic.Int32
	overlaps atomic.Int32
	calls    atomic.Int32
}

func (g *concurrencyGuard) enter() error {
	if g.inCall.Add(1) != 1 {
		g.overlaps.Add(1)
	}
	g.calls.Add(1)
	for range 100 { // widen the window a little
		_ = g.inCall.Load()
	}
	g.inCall.Add(-1)
	return nil
}

func (g *concurrencyGuard) AddService(*model.ContivService) error              { return g.enter() }
func (g *concurrencyGuard) UpdateService(_, _ *model.ContivService) error      { return g.enter() }
func (g *concurrencyGuard) DeleteService(*model.ContivService) error           { return g.enter() }
func (g *concurrencyGuard) Resync(*model.ResyncEventData) error                { return g.enter() }
func (g *concurrencyGuard) UpdateLocalFrontendIfs(_, _ model.Interfaces) error { return g.enter() }
func (g *concurrencyGuard) UpdateLocalBackendIfs(_, _ model.Interfaces) error  { return g.enter() }
func (g *concurrencyGuard) UpdateNodePortServices(model.IPAddresses, []*model.ContivService) error {
	return g.enter()
}

func TestConcurrentCallersNeverOverlapRendererCalls(t *testing.T) {
	p, _ := newTestProcessor(t)
	g := &concurrencyGuard{}
	p.RegisterRenderer("guard", g)
	p.Resync(Snapshot{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				name := []string{"a", "b", "c"}[i%3]
				switch (i + w) % 5 {
				case 0:
					p.UpdateService(makeService("default", name))
				case 1:
					p.UpdateEndpointSlice(makeSlice("default", name+"-1", name, withEndpoints(makeEndpoint("10.244.2.1"), makeEndpoint("10.244.2."+string(rune('1'+w))))))
				case 2:
					p.DeleteService("default", name)
				case 3:
					p.UpdateLocalPod(localPod(w, "10.244.2.1"))
				case 4:
					_ = p.Services()
					_ = p.Stats()
				}
			}
		}()
	}
	wg.Wait()
	assert.Zero(t, g.overlaps.Load())
	assert.Greater(t, g.calls.Load(), int32(10))
}
