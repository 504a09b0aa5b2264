package health

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc/model"
)

func TestProxyHealthTimeout(t *testing.T) {
	now := time.Unix(1000, 0)
	h := &ProxyHealth{Timeout: 10 * time.Second, Now: func() time.Time { return now }}
	assert.True(t, h.Healthy(), "idle agent is healthy")
	h.QueuedUpdate()
	now = now.Add(5 * time.Second)
	h.QueuedUpdate() // a later change does not reset the oldest pending one
	now = now.Add(6 * time.Second)
	assert.False(t, h.Healthy(), "oldest pending update waited 11s > 10s")

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code)

	h.Updated()
	assert.True(t, h.Healthy())
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
	assert.Equal(t, http.StatusOK, rec.Code)
	var body map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body))
	assert.Equal(t, true, body["nodeHealthy"])
}

func localService(hcPort uint16, backends ...model.ServiceBackend) *model.ContivService {
	return &model.ContivService{
		ID:                    model.ServiceID{Namespace: "default", Name: "web"},
		ExternalTrafficPolicy: model.TrafficPolicyLocal,
		HealthCheckNodePort:   hcPort,
		Ports:                 map[string]model.ServicePort{"http": {Protocol: model.ProtocolTCP, Port: 80, NodePort: 30080}, "https": {Protocol: model.ProtocolTCP, Port: 443, NodePort: 30443}},
		Backends:              map[string][]model.ServiceBackend{"http": backends, "https": backends},
	}
}

func be(ip string, local, terminating bool) model.ServiceBackend {
	return model.ServiceBackend{IP: netip.MustParseAddr(ip), Port: 8080, Local: local, Terminating: terminating}
}

func TestLocalReadyEndpointsCountsDistinctReadyLocalIPs(t *testing.T) {
	svc := localService(32000, be("10.1.1.2", true, false), be("10.1.1.3", true, true), be("10.1.2.2", false, false))
	assert.Equal(t, 1, LocalReadyEndpoints(svc), "one local ready pod serving two ports counts once; terminating and remote do not count")
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
