package healthcheck

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	logtest "github.com/sirupsen/logrus/hooks/test"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vppsvc/vppsvc/model"
)

// clock is a settable time for ProxyHealth.Now.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }
func newHealth(c *clock) *ProxyHealth {
	return &ProxyHealth{Timeout: 10 * time.Second, InterfaceGrace: 30 * time.Second, Now: c.now}
}

// probe asks path of h and returns the status code, the decoded body and
// the content type.
func probe(t *testing.T, h http.Handler, path string) (int, map[string]any, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	var body map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body), rec.Body.String())
	return rec.Code, body, rec.Header().Get("Content-Type")
}

// The verdicts of /healthz and /livez through an agent's life. Each step
// acts, advances the clock, and states both codes and /healthz's reason.
func TestProxyHealthLifecycle(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	h := newHealth(c)
	livez := h.Livez()
	h.Start()
	for _, step := range []struct {
		name          string
		advance       time.Duration
		act           func()
		healthz, live int
		reason        string
	}{
		{name: "starting", healthz: 503, live: 200, reason: "waiting for first sync"},
		{name: "the API server does not answer", act: func() { h.WaitingFor("waiting for the API server: connection refused") }, advance: 5 * time.Second,
			healthz: 503, live: 200, reason: "waiting for the API server: connection refused"},
		{name: "it answers", act: func() { h.WaitingFor("") }, healthz: 503, live: 200, reason: "waiting for first sync"},
		{name: "no sync within the timeout of the start", advance: 11 * time.Second, healthz: 503, live: 503, reason: "no sync with VPP within 10s of the start"},
		{name: "first sync", act: h.Updated, healthz: 200, live: 200},
		{name: "a change queued", act: h.QueuedUpdate, advance: 5 * time.Second, healthz: 200, live: 200},
		{name: "a later change does not reset the oldest", act: h.QueuedUpdate, advance: 6 * time.Second, healthz: 503, live: 503,
			reason: "a change has waited 11s for VPP (timeout 10s)"},
		{name: "synced", act: h.Updated, healthz: 200, live: 200},
		{name: "items wait for an interface", act: func() { h.WaitingForInterfaces(332, c.t) }, advance: 30 * time.Second, healthz: 200, live: 200},
		{name: "past the grace", advance: time.Second, healthz: 503, live: 200,
			reason: "332 VPP item(s) have waited 31s for their interfaces (grace 30s)"},
		{name: "interfaces back", act: func() { h.WaitingForInterfaces(0, time.Time{}) }, healthz: 200, live: 200},
		{name: "node tainted for deletion", act: func() {
			h.SyncNode(&corev1.Node{Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "ToBeDeletedByClusterAutoscaler"}}}})
		}, healthz: 503, live: 200, reason: "node is being deleted"},
		{name: "taint removed", act: func() { h.SyncNode(&corev1.Node{}) }, healthz: 200, live: 200},
		{name: "node deleting", act: func() {
			h.SyncNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &metav1.Time{Time: c.t}}})
		}, healthz: 503, live: 200, reason: "node is being deleted"},
	} {
		if step.act != nil {
			step.act()
		}
		c.advance(step.advance)
		code, body, ctype := probe(t, h, "/healthz")
		assert.Equal(t, step.healthz, code, step.name)
		assert.Equal(t, "application/json", ctype)
		if step.reason == "" {
			assert.NotContains(t, body, "reason", step.name)
		} else {
			assert.Equal(t, step.reason, body["reason"], step.name)
		}
		assert.Equal(t, step.reason != "node is being deleted", body["nodeEligible"], step.name)
		code, lbody, _ := probe(t, livez, "/livez")
		assert.Equal(t, step.live, code, step.name)
		assert.NotContains(t, lbody, "nodeEligible", "/livez has no nodeEligible, as kube-proxy's")
		assert.Equal(t, h.ServiceProxyHealthy(), step.healthz == 200 || step.reason == "node is being deleted", step.name)
	}
}

// kube-proxy's body: lastUpdated is the current time while healthy, the
// last sync (or the start, never year 1) while not.
func TestProxyHealthBody(t *testing.T) {
	c := &clock{t: time.Date(2026, 11, 25, 16, 0, 0, 0, time.UTC)}
	h := newHealth(c)
	h.Start()
	c.advance(time.Second)
	_, body, _ := probe(t, h, "/healthz")
	assert.Equal(t, map[string]any{"lastUpdated": "2026-11-25T16:00:00Z", "currentTime": "2026-11-25T16:00:01Z",
		"nodeEligible": true, "reason": "waiting for first sync"}, body)
	h.Updated()
	c.advance(time.Second)
	_, body, _ = probe(t, h, "/healthz")
	assert.Equal(t, map[string]any{"lastUpdated": "2026-11-25T16:00:02Z", "currentTime": "2026-11-25T16:00:02Z", "nodeEligible": true}, body)
	_, body, _ = probe(t, h.Livez(), "/livez")
	assert.Equal(t, map[string]any{"lastUpdated": "2026-11-25T16:00:02Z", "currentTime": "2026-11-25T16:00:02Z"}, body)
	assert.Equal(t, map[string]map[int]uint64{"healthz": {200: 1, 503: 1}, "livez": {200: 1, 503: 0}}, h.Probes())
}

// A change of /healthz's verdict is logged once, with the reason; the
// start's waits (for the API server, for the first sync) are not warnings.
func TestProxyHealthLogsChanges(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	log, hook := logtest.NewNullLogger()
	h := newHealth(c)
	h.Log = log
	h.Healthy()
	h.Healthy()
	h.WaitingFor("waiting for the API server: connection refused")
	h.Healthy()
	h.WaitingFor("")
	h.Updated()
	h.Healthy()
	h.QueuedUpdate()
	c.advance(11 * time.Second)
	h.Healthy()
	h.Healthy()
	var lines []string
	for _, e := range hook.AllEntries() {
		lines = append(lines, fmt.Sprintf("%s %s %v", e.Level, e.Message, e.Data["reason"]))
	}
	assert.Equal(t, []string{
		"info not ready: waiting for first sync with VPP <nil>",
		"info not ready waiting for the API server: connection refused",
		"info healthy: VPP holds every change <nil>",
		"warning unhealthy a change has waited 11s for VPP (timeout 10s)",
	}, lines)
}

func localService(hcPort uint16, backends ...model.ServiceBackend) *model.ContivService {
	return &model.ContivService{
		ID:                    model.ServiceID{Namespace: "default", Name: "web"},
		ExternalTrafficPolicy: model.TrafficPolicyLocal,
		HealthCheckNodePort:   hcPort,
		Ports: []model.NamedPort{
			{Name: "http", ServicePort: model.ServicePort{Protocol: model.ProtocolTCP, Port: 80, NodePort: 30080}, Backends: backends},
			{Name: "https", ServicePort: model.ServicePort{Protocol: model.ProtocolTCP, Port: 443, NodePort: 30443}, Backends: backends},
		},
	}
}

func be(ip string, local, terminating bool) model.ServiceBackend {
	return model.ServiceBackend{IP: netip.MustParseAddr(ip), Port: 8080, Local: local, Terminating: terminating}
}

func TestLocalReadyEndpointsCountsDistinctReadyLocalIPs(t *testing.T) {
	svc := localService(32000, be("10.1.1.2", true, false), be("10.1.1.3", true, true), be("10.1.2.2", false, false))
	v4, v6 := LocalReadyEndpoints(svc)
	assert.Equal(t, [2]int{1, 0}, [2]int{v4, v6}, "one local ready pod serving two ports counts once; terminating and remote do not count")
	// A dual-stack pod is one endpoint in each family, as kube-proxy's
	// per-family proxiers count it (found in the lab: it answered 2).
	dual := localService(32000, be("10.1.1.2", true, false), be("fd00:244:1::2", true, false), be("fd00:244:1::3", true, true))
	v4, v6 = LocalReadyEndpoints(dual)
	assert.Equal(t, [2]int{1, 1}, [2]int{v4, v6})
}

// A probe to an IPv6 address is answered with the IPv6 count.
func TestServiceServersAnswerPerFamily(t *testing.T) {
	ln6, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skip("no IPv6 loopback: ", err)
	}
	s := &ServiceServers{Listen: func(uint16) (net.Listener, error) { return ln6, nil }}
	defer s.Close()
	s.Sync([]*model.ContivService{localService(32000, be("10.1.1.2", true, false), be("10.1.1.3", true, false), be("fd00:244:1::2", true, false))})
	addr, ok := s.Addr(32000)
	require.True(t, ok)
	code, body := get(t, addr)
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, 1.0, body["localEndpoints"])
}

func get(t *testing.T, addr net.Addr) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get("http://" + addr.String() + "/anything")
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var body map[string]any
	require.NoError(t, json.Unmarshal(data, &body))
	return resp.StatusCode, body
}

func TestServiceServersFollowEndpoints(t *testing.T) {
	s := &ServiceServers{Listen: func(uint16) (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }}
	defer s.Close()

	s.Sync([]*model.ContivService{localService(32000, be("10.1.1.2", true, false))})
	addr, ok := s.Addr(32000)
	require.True(t, ok)
	code, body := get(t, addr)
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, float64(1), body["localEndpoints"])
	assert.Equal(t, map[string]any{"namespace": "default", "name": "web"}, body["service"])

	s.Sync([]*model.ContivService{localService(32000, be("10.1.2.2", false, false))})
	code, body = get(t, addr)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, float64(0), body["localEndpoints"])

	cluster := localService(32000)
	cluster.ExternalTrafficPolicy = model.TrafficPolicyCluster
	s.Sync([]*model.ContivService{cluster})
	_, ok = s.Addr(32000)
	assert.False(t, ok, "a Cluster-policy service has no health-check server")
}

func TestServiceServersReportUnhealthyProxy(t *testing.T) {
	s := &ServiceServers{
		Listen:       func(uint16) (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") },
		ProxyHealthy: func() bool { return false },
	}
	defer s.Close()
	s.Sync([]*model.ContivService{localService(32001, be("10.1.1.2", true, false))})
	addr, ok := s.Addr(32001)
	require.True(t, ok)
	code, body := get(t, addr)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, false, body["serviceProxyHealthy"])
}

func TestServiceServersPortInUseIsRetried(t *testing.T) {
	fail := true
	s := &ServiceServers{Listen: func(uint16) (net.Listener, error) {
		if fail {
			return nil, &net.OpError{Op: "listen", Err: io.ErrUnexpectedEOF}
		}
		return net.Listen("tcp", "127.0.0.1:0")
	}}
	defer s.Close()
	svcs := []*model.ContivService{localService(32002, be("10.1.1.2", true, false))}
	s.Sync(svcs)
	_, ok := s.Addr(32002)
	assert.False(t, ok)
	fail = false
	s.Sync(svcs)
	_, ok = s.Addr(32002)
	assert.True(t, ok)
}
