package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.fd.io/govpp/adapter"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/vppsvc/vppsvc/fakevpp"
)

// wait bounds every wait of the run tests; conditions are polled every tick.
const (
	wait = 10 * time.Second
	tick = 5 * time.Millisecond
)

// healthCheckPorts opens health-check node ports on loopback port 0 and
// remembers where each one listens.
type healthCheckPorts struct {
	mu    sync.Mutex
	addrs map[uint16]string
}

func (h *healthCheckPorts) listen(port uint16) (net.Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.addrs == nil {
		h.addrs = map[uint16]string{}
	}
	h.addrs[port] = ln.Addr().String()
	return ln, nil
}

func (h *healthCheckPorts) addr(port uint16) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.addrs[port]
}

// testNode is one runNode in-process over a fake clientset and a fake VPP.
type testNode struct {
	t      *testing.T
	client *fake.Clientset
	vpp    *fakevpp.VPP
	http   string
	hc     *healthCheckPorts
	cancel context.CancelFunc
	done   chan error
	sport  uint16 // source port of the next probe packet
	logs   *logtest.Hook
}

// sampleClientset holds the embedded sample cluster, and reports every watch
// the informers open: the fake clientset does not replay changes made
// between a list and the start of its watch.
func sampleClientset(t *testing.T) (*fake.Clientset, chan string) {
	c, err := loadCluster("", nil)
	require.NoError(t, err)
	var objs []runtime.Object
	for _, o := range c.Nodes {
		objs = append(objs, o)
	}
	for _, o := range c.Pods {
		objs = append(objs, o)
	}
	for _, o := range c.Services {
		objs = append(objs, o)
	}
	for _, o := range c.EndpointSlices {
		objs = append(objs, o)
	}
	client := fake.NewClientset(objs...)
	watches := make(chan string, 16)
	client.PrependWatchReactor("*", func(action k8stesting.Action) (bool, watch.Interface, error) {
		w, err := client.Tracker().Watch(action.GetResource(), action.GetNamespace())
		if err != nil {
			return false, nil, err
		}
		watches <- action.GetResource().Resource
		return true, w, nil
	})
	return client, watches
}

func quietLogger() *logrus.Logger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}

// startNode runs the agent for node-a with local pods and waits until its
// informers watch and its first sync is applied.
func startNode(t *testing.T, client *fake.Clientset, watches chan string, vpp *fakevpp.VPP, healthzTimeout time.Duration) *testNode {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	log := quietLogger()
	n := &testNode{t: t, client: client, vpp: vpp, http: ln.Addr().String(), hc: &healthCheckPorts{}, done: make(chan error, 1), sport: 20000,
		logs: logtest.NewLocal(log)}
	ctx, cancel := context.WithCancel(context.Background())
	n.cancel = cancel
	cfg := nodeConfig{
		Node: "node-a", FrontendInterfaces: []string{"uplink0", "host0"}, LocalPods: true,
		HealthzTimeout: healthzTimeout, RetryMin: time.Millisecond, RetryMax: 20 * time.Millisecond, SyncPoll: 5 * time.Millisecond,
		InterfaceGrace: 200 * time.Millisecond,
	}
	go func() {
		n.done <- runNode(ctx, cfg, nodeDeps{Client: client, VPP: vpp, Fake: vpp, HTTP: ln, ListenHealthCheck: n.hc.listen, Log: log})
	}()
	t.Cleanup(func() { n.stop() })
	for range 4 { // services, endpointslices, nodes, pods
		select {
		case <-watches:
		case err := <-n.done:
			t.Fatalf("agent stopped: %v", err)
		case <-time.After(wait):
			t.Fatal("informer watches did not start")
		}
	}
	require.Eventually(t, func() bool {
		return n.metric(`kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family="IPv4"}`) > 0
	}, wait, tick, "first sync")
	return n
}

// stop ends the agent as SIGTERM would and returns its result.
func (n *testNode) stop() error {
	if n.cancel == nil {
		return nil
	}
	n.cancel()
	n.cancel = nil
	select {
	case err := <-n.done:
		return err
	case <-time.After(wait):
		n.t.Error("agent did not stop")
		return nil
	}
}

// get returns the status and body of an HTTP GET.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// metric returns the value of one sample of /metrics, "name" or
// `name{label="value"}` exactly as exposed; -1 when absent.
func (n *testNode) metric(sample string) float64 {
	_, body := get(n.t, "http://"+n.http+"/metrics")
	return metricValue(body, sample)
}

func metricValue(body, sample string) float64 {
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(sample) + ` (\S+)$`)
	m := re.FindStringSubmatch(body)
	if m == nil {
		return -1
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return -1
	}
	return v
}

// probe traces a new TCP connection from an external client to dst through
// uplink0 and returns the endpoints it may reach.
func (n *testNode) probe(dst string) []string {
	n.sport++
	tr := n.vpp.Trace(fakevpp.Packet{Ingress: "uplink0", Protocol: 6,
		Src: netip.AddrPortFrom(netip.MustParseAddr("198.51.100.7"), n.sport), Dst: netip.MustParseAddrPort(dst)})
	var out []string
	for _, ep := range tr.Endpoints {
		out = append(out, ep.String())
	}
	return out
}

// healthCheck asks a health-check node port, as a cloud load balancer does.
func (n *testNode) healthCheck(port uint16) (int, int) {
	addr := n.hc.addr(port)
	if addr == "" {
		return 0, -1
	}
	code, body := get(n.t, "http://"+addr+"/")
	var v struct {
		LocalEndpoints int `json:"localEndpoints"`
	}
	require.NoError(n.t, json.Unmarshal([]byte(body), &v), body)
	return code, v.LocalEndpoints
}

func shopService(ports ...int32) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "shop"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.1.1", ClusterIPs: []string{"10.96.1.1"},
			Ports: []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80}}},
	}
}

func shopSlice(addrs ...string) *discoveryv1.EndpointSlice {
	name, proto, port := "http", corev1.ProtocolTCP, int32(8080)
	s := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "default", Name: "shop-1", Labels: map[string]string{discoveryv1.LabelServiceName: "shop"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: &name, Protocol: &proto, Port: &port}},
	}
	for _, a := range addrs {
		node := "node-b"
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{a}, NodeName: &node})
	}
	return s
}

// TestRunFollowsTheCluster runs the agent in-process against the fake
// clientset and a fake VPP: services created, scaled and deleted reach VPP;
// /metrics and /healthz answer; health-check node ports follow local
// endpoints; a VPP that refuses a change makes /healthz fail until it
// recovers; and a restarted agent finds VPP configured and changes nothing.
func TestRunFollowsTheCluster(t *testing.T) {
	client, watches := sampleClientset(t)
	vpp := fakevpp.New(fakevpp.WithSeed(1))
	n := startNode(t, client, watches, vpp, 500*time.Millisecond)
	ctx := context.Background()

	// The sample is rendered: an external client reaches web's three endpoints.
	assert.ElementsMatch(t, []string{"10.1.1.2:8080", "10.1.2.2:8080", "10.1.3.2:8080"}, n.probe("10.96.0.10:80"))
	assert.Equal(t, 11.0, n.metric("vppsvc_services"), "13 sample services minus ExternalName and headless")
	code, body := get(t, "http://"+n.http+"/healthz")
	assert.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, `"nodeEligible":true`)

	// Create, scale up, scale down, delete: VPP follows.
	_, err := client.CoreV1().Services("default").Create(ctx, shopService(), metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = client.DiscoveryV1().EndpointSlices("default").Create(ctx, shopSlice("10.1.2.50", "10.1.3.50"), metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		return fmt.Sprint(n.probe("10.96.1.1:80")) == "[10.1.2.50:8080 10.1.3.50:8080]"
	}, wait, tick, "new service")
	_, err = client.DiscoveryV1().EndpointSlices("default").Update(ctx, shopSlice("10.1.2.50", "10.1.3.50", "10.1.3.51"), metav1.UpdateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(n.probe("10.96.1.1:80")) == 3 }, wait, tick, "scaled to 3")
	_, err = client.DiscoveryV1().EndpointSlices("default").Update(ctx, shopSlice("10.1.3.51"), metav1.UpdateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return fmt.Sprint(n.probe("10.96.1.1:80")) == "[10.1.3.51:8080]" }, wait, tick, "scaled to 1")
	assert.Equal(t, 12.0, n.metric("vppsvc_services"))
	require.NoError(t, client.CoreV1().Services("default").Delete(ctx, "shop", metav1.DeleteOptions{}))
	require.NoError(t, client.DiscoveryV1().EndpointSlices("default").Delete(ctx, "shop-1", metav1.DeleteOptions{}))
	require.Eventually(t, func() bool { return fmt.Sprint(n.probe("10.96.1.1:80")) == "[10.96.1.1:80]" }, wait, tick, "deleted: untranslated")

	// Local pods are wired: client-a1's tap is a frontend.
	require.Eventually(t, func() bool {
		tr := vpp.Trace(fakevpp.Packet{Ingress: "tap-default-client-a1", Protocol: 6,
			Src: netip.MustParseAddrPort("10.1.1.9:45000"), Dst: netip.MustParseAddrPort("10.96.0.18:80")})
		return tr.Verdict == fakevpp.Drop // no-endpoints' ACL is bound on the tap
	}, wait, tick, "local pod tap")

	// Health-check node ports: web-local has web-a1 here, api-public nothing.
	require.Eventually(t, func() bool { c, eps := n.healthCheck(32082); return c == http.StatusOK && eps == 1 }, wait, tick)
	code, eps := n.healthCheck(32083)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, 0, eps)
	local, err := client.DiscoveryV1().EndpointSlices("default").Get(ctx, "web-local-v4", metav1.GetOptions{})
	require.NoError(t, err)
	withoutA1 := local.DeepCopy()
	withoutA1.Endpoints = withoutA1.Endpoints[1:] // web-a1 goes away
	_, err = client.DiscoveryV1().EndpointSlices("default").Update(ctx, withoutA1, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { c, eps := n.healthCheck(32082); return c == http.StatusServiceUnavailable && eps == 0 }, wait, tick)
	_, err = client.DiscoveryV1().EndpointSlices("default").Update(ctx, local, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { c, eps := n.healthCheck(32082); return c == http.StatusOK && eps == 1 }, wait, tick)

	// VPP refuses LB mappings: the change waits, /healthz fails after the
	// timeout, and recovers once VPP accepts the retried call.
	vpp.FailMessage("nat44_add_del_lb_static_mapping", -1)
	_, err = client.CoreV1().Services("default").Create(ctx, shopService(), metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = client.DiscoveryV1().EndpointSlices("default").Create(ctx, shopSlice("10.1.2.60", "10.1.3.60"), metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return n.metric(`vppsvc_items{state="failed"}`) > 0 }, wait, tick)
	require.Eventually(t, func() bool { c, _ := get(t, "http://"+n.http+"/healthz"); return c == http.StatusServiceUnavailable }, wait, tick)
	code, _ = n.healthCheck(32082)
	assert.Equal(t, http.StatusServiceUnavailable, code, "health-check ports fail while the agent is unhealthy, as kube-proxy's")
	assert.Greater(t, n.metric(`vppsvc_vpp_api_failures_total{message="nat44_add_del_lb_static_mapping"}`), 0.0)
	vpp.ClearFaults()
	require.Eventually(t, func() bool { c, _ := get(t, "http://"+n.http+"/healthz"); return c == http.StatusOK }, wait, tick)
	assert.Equal(t, 0.0, n.metric(`vppsvc_items{state="failed"}`))
	assert.ElementsMatch(t, []string{"10.1.2.60:8080", "10.1.3.60:8080"}, n.probe("10.96.1.1:80"))
	assert.Greater(t, n.metric(`kubeproxy_sync_proxy_rules_duration_seconds_count{ip_family="IPv4"}`), 1.0)

	// SIGTERM leaves VPP configured; the next agent changes nothing.
	before := vpp.Dump()
	require.NoError(t, n.stop())
	assert.Equal(t, before, vpp.Dump(), "VPP keeps its configuration")
	vpp.ResetCalls()
	n2 := startNode(t, client, watches, vpp, time.Minute)
	assert.Equal(t, before, vpp.Dump(), "a restarted agent resyncs without changes")
	for msg := range vpp.Calls() {
		assert.False(t, mutating(msg), "restart sent %s", msg)
	}
	assert.Equal(t, 12.0, n2.metric("vppsvc_services"))
}

// mutating tells whether a VPP message changes configuration.
func mutating(msg string) bool {
	if strings.HasPrefix(msg, "want_") {
		return false // event registration
	}
	return regexp.MustCompile(`(^|_)(add|del|set|update|enable|replace)(_|$)`).MatchString(msg)
}

func TestRunUnknownNode(t *testing.T) {
	client, _ := sampleClientset(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	vpp := fakevpp.New()
	err = runNode(context.Background(), nodeConfig{Node: "node-z"}, nodeDeps{Client: client, VPP: vpp, Fake: vpp, HTTP: ln, Log: quietLogger()})
	assert.EqualError(t, err, `unknown node "node-z": no such Node in the cluster`)
}

func TestRunFlagErrors(t *testing.T) {
	t.Setenv("NODE_NAME", "")
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"run", "--fake-vpp"}, "--node is required"},
		{[]string{"run", "--node", "node-a", "--fake-vpp", "--vpp-socket", "/x.sock"}, "exclusive"},
		{[]string{"run", "--node", "node-a", "--fake-vpp", "--kubeconfig", "/nonexistent/kubeconfig"}, "--kubeconfig /nonexistent/kubeconfig"},
		{[]string{"run", "--node", "node-a", "--bogus"}, "unknown flag: --bogus"},
	} {
		_, _, err := runCLI(t, tc.args...)
		assert.ErrorContains(t, err, tc.err, tc.args)
	}
}

// After the CNI removed a pod's tap (as a VPP restart removes them all), the
// items on it wait: vppsvc_items_waiting_for_interface shows them, /healthz
// fails with the reason once they have waited past the grace period (a
// warning says so) while /livez holds, and both recover when the tap is back.
func TestRunHealthFollowsInterfaceWaits(t *testing.T) {
	client, watches := sampleClientset(t)
	vpp := fakevpp.New(fakevpp.WithSeed(1))
	n := startNode(t, client, watches, vpp, time.Minute)
	healthz := "http://" + n.http + "/healthz"
	code, _ := get(t, healthz)
	require.Equal(t, http.StatusOK, code)

	const tap = "tap-default-client-a1"
	require.True(t, vpp.DeleteInterface(tap))
	require.Eventually(t, func() bool { return n.metric("vppsvc_items_waiting_for_interface") > 0 }, wait, tick)
	var body string
	require.Eventually(t, func() bool { code, body = get(t, healthz); return code == http.StatusServiceUnavailable }, wait, tick)
	var v struct {
		NodeEligible bool   `json:"nodeEligible"`
		Reason       string `json:"reason"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &v))
	assert.True(t, v.NodeEligible)
	assert.Regexp(t, `^\d+ VPP item\(s\) have waited \S+ for their interfaces \(grace 200ms\)$`, v.Reason)
	code, _ = get(t, "http://"+n.http+"/livez")
	assert.Equal(t, http.StatusOK, code, "waiting for the CNI is no reason to restart the agent")
	assert.True(t, slices.ContainsFunc(n.logs.AllEntries(), func(e *logrus.Entry) bool {
		return e.Level == logrus.WarnLevel && e.Message == "unhealthy" && e.Data["reason"] == v.Reason
	}), "a warning says why")

	vpp.AddInterface(tap)
	vpp.SetUnnumbered(tap, "host0")
	require.Eventually(t, func() bool { code, _ := get(t, healthz); return code == http.StatusOK }, wait, tick)
	assert.Equal(t, 0.0, n.metric("vppsvc_items_waiting_for_interface"))
}

// flakyVPP is a VPP adapter whose Connect fails until up is set.
type flakyVPP struct {
	adapter.VppAPI
	up bool
}

func (f *flakyVPP) WaitReady() error { return nil }

func (f *flakyVPP) Connect() error {
	if !f.up {
		return errors.New("VPP API socket file /run/vpp/api.sock does not exist")
	}
	return nil
}

// Waiting for VPP's socket is logged at info level with the socket and the
// time waited, throttled to doubling intervals up to 30 s, and the end of
// the wait too. Each attempt is govpp's: WaitReady, Connect, a second's
// pause.
func TestSocketWaitsAreLogged(t *testing.T) {
	log, hook := logtest.NewNullLogger()
	f := &flakyVPP{}
	a := newSocketWaitLogger(f, "/run/vpp/api.sock", log)
	now := time.Unix(0, 0)
	a.now = func() time.Time { return now }
	for range 70 {
		require.NoError(t, a.WaitReady())
		assert.Error(t, a.Connect())
		now = now.Add(time.Second)
	}
	f.up = true
	require.NoError(t, a.WaitReady())
	require.NoError(t, a.Connect())
	require.NoError(t, a.Connect(), "a connection without a wait logs nothing")
	var lines []string
	for _, e := range hook.AllEntries() {
		assert.Equal(t, logrus.InfoLevel, e.Level)
		assert.Equal(t, "/run/vpp/api.sock", e.Data["vpp_socket"])
		line := e.Message
		if w, ok := e.Data["waited"]; ok {
			line += fmt.Sprint(" ", w)
		}
		lines = append(lines, line)
	}
	assert.Equal(t, []string{
		"connecting to VPP's API socket",
		"waiting for VPP's API socket 0s", "waiting for VPP's API socket 1s", "waiting for VPP's API socket 2s",
		"waiting for VPP's API socket 4s", "waiting for VPP's API socket 8s", "waiting for VPP's API socket 16s",
		"waiting for VPP's API socket 32s", "waiting for VPP's API socket 1m2s", "VPP's API socket answers 1m10s",
	}, lines)
}
