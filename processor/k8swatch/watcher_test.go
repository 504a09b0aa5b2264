package k8swatch

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/processor"
)

// Addresses follow the plan of the processor tests: cluster IPs 10.96.0.0/16,
// pods 10.244.<node>.0/24, node InternalIPs 192.168.0.<node>; this node is
// node-a (1).

// logRenderer records renderer calls as short lines.
type logRenderer struct {
	mu    sync.Mutex
	calls []string
	last  *model.ResyncEventData
}

func (r *logRenderer) add(line string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, line)
	return nil
}

func (r *logRenderer) AddService(s *model.ContivService) error { return r.add("add " + s.String()) }
func (r *logRenderer) UpdateService(_, s *model.ContivService) error {
	return r.add("update " + s.String())
}
func (r *logRenderer) DeleteService(s *model.ContivService) error {
	return r.add("delete " + s.ID.String())
}
func (r *logRenderer) UpdateNodePortServices(ips model.IPAddresses, _ []*model.ContivService) error {
	return r.add("nodeports " + ips.String())
}
func (r *logRenderer) UpdateLocalFrontendIfs(_, ifs model.Interfaces) error {
	return r.add("frontends " + ifs.String())
}
func (r *logRenderer) UpdateLocalBackendIfs(_, ifs model.Interfaces) error {
	return r.add("backends " + ifs.String())
}
func (r *logRenderer) UpdateServiceCIDRs(cidrs []netip.Prefix) error {
	return r.add(fmt.Sprintf("cidrs %v", cidrs))
}
func (r *logRenderer) Resync(ev *model.ResyncEventData) error {
	r.mu.Lock()
	r.last = ev
	r.mu.Unlock()
	return r.add(fmt.Sprintf("resync n=%d", len(ev.Services)))
}

func (r *logRenderer) snapshot() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// waitFor waits until some call starts with prefix and returns it.
func (r *logRenderer) waitFor(t *testing.T, prefix string) string {
	t.Helper()
	var found string
	require.Eventually(t, func() bool {
		for _, c := range r.snapshot() {
			if strings.HasPrefix(c, prefix) {
				found = c
				return true
			}
		}
		return false
	}, 10*time.Second, 5*time.Millisecond, "no call starting with %q; calls: %v", prefix, r.snapshot())
	return found
}

func quietLogger() *logrus.Logger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}

func service(name, clusterIP string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeClusterIP, ClusterIP: clusterIP, ClusterIPs: []string{clusterIP},
			Ports: []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80}},
		},
	}
}

func slice(name, svc string, addrs ...string) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "default", Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr("http"), Protocol: ptr(corev1.ProtocolTCP), Port: ptr(int32(8080))}},
	}
	for _, a := range addrs {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{a}, NodeName: ptr("node-b")})
	}
	return s
}

func node(name, ip string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status:     corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}},
	}
}

func pod(name, nodeName string, ips ...string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec:       corev1.PodSpec{NodeName: nodeName},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
	for _, ip := range ips {
		p.Status.PodIPs = append(p.Status.PodIPs, corev1.PodIP{IP: ip})
	}
	return p
}

func ptr[T any](v T) *T { return &v }

// podInterface connects every pod except those labelled "unwired".
func podInterface(p *corev1.Pod) (string, bool) {
	if p.Labels["unwired"] != "" {
		return "", false
	}
	return "tap-" + p.Name, true
}

// startWatcher runs a watcher over client until the test ends, and waits
// until the informers' watches are open: the fake clientset does not replay
// changes made between a list and the start of a watch.
// Its reactors apply the field selectors of lists and watches of Nodes as
// the API server does (the fake clientset ignores field selectors).
func startWatcher(t *testing.T, client *fake.Clientset, opts Options) (*processor.Processor, *logRenderer) {
	t.Helper()
	return startWatcherWith(t, client, opts, !opts.NoServiceCIDRs)
}

// startWatcherWith is startWatcher for a watcher that opens a watch of
// ServiceCIDRs or not (cidrWatch).
func startWatcherWith(t *testing.T, client *fake.Clientset, opts Options, cidrWatch bool) (*processor.Processor, *logRenderer) {
	t.Helper()
	watches := make(chan string, 16)
	client.PrependWatchReactor("*", func(action k8stesting.Action) (bool, watch.Interface, error) {
		w, err := client.Tracker().Watch(action.GetResource(), action.GetNamespace())
		if err != nil {
			return false, nil, err
		}
		if sel := action.(k8stesting.WatchAction).GetWatchRestrictions().Fields; action.GetResource().Resource == "nodes" && sel != nil && !sel.Empty() {
			w = watch.Filter(w, func(ev watch.Event) (watch.Event, bool) {
				m, err := meta.Accessor(ev.Object)
				return ev, err == nil && sel.Matches(fields.Set{metav1.ObjectNameField: m.GetName()})
			})
		}
		watches <- action.GetResource().Resource
		return true, w, nil
	})
	client.PrependReactor("list", "nodes", func(action k8stesting.Action) (bool, runtime.Object, error) {
		obj, err := client.Tracker().List(action.GetResource(), corev1.SchemeGroupVersion.WithKind("Node"), "")
		if err != nil {
			return true, nil, err
		}
		list := obj.(*corev1.NodeList)
		if sel := action.(k8stesting.ListAction).GetListRestrictions().Fields; sel != nil {
			list.Items = slices.DeleteFunc(list.Items, func(n corev1.Node) bool {
				return !sel.Matches(fields.Set{metav1.ObjectNameField: n.Name})
			})
		}
		return true, list, nil
	})
	p := processor.New(processor.Config{NodeName: "node-a", FrontendInterfaces: []string{"uplink0"}, Logger: quietLogger()})
	r := &logRenderer{}
	p.RegisterRenderer("log", r)
	if opts.Logger == nil {
		opts.Logger = quietLogger()
	}
	w := New(client, p, opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Error("watcher did not stop")
		}
	})
	want := 3
	if opts.PodInterface != nil {
		want++
	}
	if cidrWatch {
		want++
	}
	for range want {
		select {
		case <-watches:
		case <-time.After(10 * time.Second):
			t.Fatal("informer watches did not start")
		}
	}
	r.waitFor(t, "resync")
	return p, r
}

func TestWatcherInitialResyncThenIncremental(t *testing.T) {
	client := fake.NewClientset(
		service("web", "10.96.0.10"),
		slice("web-1", "web", "10.244.2.1"),
		node("node-a", "192.168.0.1"),
		node("node-b", "192.168.0.2"),
		pod("local", "node-a", "10.244.1.1"),
		pod("remote", "node-b", "10.244.2.1"),
		func() *corev1.Pod {
			p := pod("unwired", "node-a", "10.244.1.2")
			p.Labels = map[string]string{"unwired": "y"}
			return p
		}(),
		func() *corev1.Pod {
			p := pod("done", "node-a", "10.244.1.3")
			p.Status.Phase = corev1.PodSucceeded
			return p
		}(),
	)
	p, r := startWatcher(t, client, Options{NodeName: "node-a", PodInterface: podInterface})

	// Everything created before the start arrives in the first Resync, and
	// it is the first call.
	require.Equal(t, "resync n=1", r.snapshot()[0])
	r.mu.Lock()
	first := r.last
	r.mu.Unlock()
	assert.Equal(t, "default/web etp=Cluster itp=Cluster clusterIPs={10.96.0.10} port[http]=80/TCP->[10.244.2.1:8080]", first.Services[0].String())
	assert.Equal(t, "{192.168.0.1}", first.NodeIPs.String(), "NodePorts are answered on this node's primary IP only")
	assert.Equal(t, model.Interfaces{"tap-local", "uplink0"}, first.FrontendIfs)

	ctx := context.Background()
	_, err := client.CoreV1().Services("default").Create(ctx, service("api", "10.96.0.11"), metav1.CreateOptions{})
	require.NoError(t, err)
	r.waitFor(t, "add default/api")

	_, err = client.DiscoveryV1().EndpointSlices("default").Create(ctx, slice("api-1", "api", "10.244.1.1"), metav1.CreateOptions{})
	require.NoError(t, err)
	assert.Contains(t, r.waitFor(t, "update default/api"), "10.244.1.1:8080")
	r.waitFor(t, "backends {tap-local}")

	_, err = client.DiscoveryV1().EndpointSlices("default").Update(ctx, slice("web-1", "web", "10.244.2.1", "10.244.2.2"), metav1.UpdateOptions{})
	require.NoError(t, err)
	assert.Contains(t, r.waitFor(t, "update default/web"), "10.244.2.2:8080")

	_, err = client.CoreV1().Nodes().Update(ctx, node("node-a", "192.168.0.9"), metav1.UpdateOptions{})
	require.NoError(t, err)
	r.waitFor(t, "nodeports {192.168.0.9}")

	_, err = client.CoreV1().Pods("default").Create(ctx, pod("new", "node-a", "10.244.1.5"), metav1.CreateOptions{})
	require.NoError(t, err)
	r.waitFor(t, "frontends {tap-local,tap-new,uplink0}")

	require.NoError(t, client.CoreV1().Services("default").Delete(ctx, "api", metav1.DeleteOptions{}))
	r.waitFor(t, "delete default/api")

	require.NoError(t, client.CoreV1().Pods("default").Delete(ctx, "new", metav1.DeleteOptions{}))
	require.Eventually(t, func() bool { return slices.Contains(r.snapshot(), "frontends {tap-local,uplink0}") }, 10*time.Second, 5*time.Millisecond)

	assert.Equal(t, 1, strings.Count(strings.Join(r.snapshot(), "\n"), "resync"), "one Resync only")
	assert.Equal(t, []string{"default/web"}, serviceIDs(p))
}

func serviceIDs(p *processor.Processor) []string {
	var out []string
	for _, s := range p.Services() {
		out = append(out, s.ID.String())
	}
	return out
}

func TestWatcherWithoutPods(t *testing.T) {
	client := fake.NewClientset(service("web", "10.96.0.10"), pod("local", "node-a", "10.244.1.1"))
	_, r := startWatcher(t, client, Options{NodeName: "node-a"})
	r.mu.Lock()
	defer r.mu.Unlock()
	assert.Equal(t, model.Interfaces{"uplink0"}, r.last.FrontendIfs, "pods are not watched without PodInterface")
}

func TestWatcherHandlesTombstones(t *testing.T) {
	client := fake.NewClientset(service("web", "10.96.0.10"), node("node-a", "192.168.0.1"))
	p, r := startWatcher(t, client, Options{NodeName: "node-a"})
	w := New(client, p, Options{NodeName: "node-a", Logger: quietLogger()})
	w.synced = true

	svc := service("web", "10.96.0.10")
	w.handler(w.updateService, p.DeleteService).OnDelete(cache.DeletedFinalStateUnknown{Key: "default/web", Obj: svc})
	r.waitFor(t, "delete default/web")

	w.handler(w.updateNode, func(_, name string) { p.DeleteNode(name) }).OnDelete(cache.DeletedFinalStateUnknown{Key: "node-a"})
	r.waitFor(t, "nodeports {}")

	// Garbage is ignored, not a panic.
	w.handler(w.updateService, p.DeleteService).OnDelete(42)
	w.handler(w.updateService, p.DeleteService).OnAdd(42, false)
	assert.Empty(t, p.Services())
}

func TestWatcherRequiresNodeName(t *testing.T) {
	for name, opts := range map[string]Options{
		"local pods":    {PodInterface: podInterface, AllNodes: true},
		"own Node only": {},
	} {
		t.Run(name, func(t *testing.T) {
			p := processor.New(processor.Config{Logger: quietLogger()})
			opts.Logger = quietLogger()
			err := New(fake.NewClientset(), p, opts).Run(context.Background())
			assert.ErrorContains(t, err, "NodeName")
		})
	}
}

func TestWatcherFailsWhenCancelledBeforeSync(t *testing.T) {
	p := processor.New(processor.Config{Logger: quietLogger()})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := New(fake.NewClientset(), p, Options{NodeName: "node-a", Logger: quietLogger()}).Run(ctx)
	assert.ErrorIs(t, err, context.Canceled)
}
