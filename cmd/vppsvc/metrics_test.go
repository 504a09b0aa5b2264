package main

import (
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc/vppcfg"
)

// collectorFor simulates a cluster file ("" for the sample) and returns the
// metrics collector over its agent.
func collectorFor(t *testing.T, file string, lastSync time.Time) (*metricsCollector, *simulation) {
	t.Helper()
	sim, err := simulate(context.Background(), &clusterFlags{file: file}, nil, quietLogger())
	require.NoError(t, err)
	t.Cleanup(sim.close)
	var names []string
	for name := range sim.agent.Renderers {
		names = append(names, name)
	}
	slices.Sort(names)
	return &metricsCollector{proc: sim.agent.Processor, rec: sim.agent.Reconciler, renderers: names,
		lastSync: func() time.Time { return lastSync }}, sim
}

func TestMetricsOfTheSample(t *testing.T) {
	c, sim := collectorFor(t, "", time.Unix(1700000000, 500_000_000))
	applied := len(sim.agent.Reconciler.Desired())
	// Backends by hand: web, web-nodeport, web-lb, web-local, web-ext 3 each;
	// web-dual 3 IPv4 + 3 IPv6; api-sticky 2, api-local 1, api-public 2,
	// no-endpoints 0; kube-dns 2 on each of its 2 ports.
	want := fmt.Sprintf(`
# HELP vppsvc_backends Backends of the rendered services, counted once per service port (a pod serving two ports of a service counts twice).
# TYPE vppsvc_backends gauge
vppsvc_backends 30
# HELP vppsvc_items Desired VPP configuration items by state: applied, pending (waiting for an interface or a dependency) or failed (retried with backoff).
# TYPE vppsvc_items gauge
vppsvc_items{state="applied"} %d
vppsvc_items{state="failed"} 0
vppsvc_items{state="pending"} 0
# HELP vppsvc_last_sync_timestamp_seconds Unix time at which VPP last held every change handed to the renderers; 0 before the first sync.
# TYPE vppsvc_last_sync_timestamp_seconds gauge
vppsvc_last_sync_timestamp_seconds 1.7000000005e+09
# HELP vppsvc_renderer_failures_total Failed renderer calls, each followed by a retried resync of that renderer, by renderer.
# TYPE vppsvc_renderer_failures_total counter
vppsvc_renderer_failures_total{renderer="ipv6"} 0
vppsvc_renderer_failures_total{renderer="nat44"} 0
# HELP vppsvc_services Services currently rendered.
# TYPE vppsvc_services gauge
vppsvc_services 11
`, applied)
	require.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(want),
		"vppsvc_backends", "vppsvc_items", "vppsvc_last_sync_timestamp_seconds", "vppsvc_renderer_failures_total", "vppsvc_services"))

	// Every ACL was created with one call on a fresh VPP; no call failed.
	problems, err := testutil.CollectAndLint(c)
	require.NoError(t, err)
	assert.Empty(t, problems)
	acls := 0
	for _, it := range sim.agent.Reconciler.Desired() {
		if _, ok := it.(*vppcfg.ACL); ok {
			acls++
		}
	}
	out := scrape(t, c)
	assert.Equal(t, float64(acls), metricValue(out, `vppsvc_vpp_api_calls_total{message="acl_add_replace"}`))
	assert.Greater(t, metricValue(out, `vppsvc_vpp_api_calls_total{message="nat44_add_del_lb_static_mapping"}`), 0.0)
	assert.Contains(t, out, "vppsvc_vpp_api_failures_total{")
	assert.NotRegexp(t, `vppsvc_vpp_api_failures_total\{[^}]*\} [1-9]`, out)
}

// scrape returns what a Prometheus server would read from c.
func scrape(t *testing.T, c prometheus.Collector) string {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	require.Equal(t, 200, rec.Code)
	return rec.Body.String()
}

func TestMetricsCountInvalidObjects(t *testing.T) {
	c, _ := collectorFor(t, "testdata/bad-fields.yaml", time.Time{})
	require.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(`
# HELP vppsvc_invalid_objects_skipped_total Invalid elements of Kubernetes objects skipped, by object kind and field; counted when they appear.
# TYPE vppsvc_invalid_objects_skipped_total counter
vppsvc_invalid_objects_skipped_total{field="endpoints[].addresses",kind="EndpointSlice"} 1
vppsvc_invalid_objects_skipped_total{field="spec.ports[].port",kind="Service"} 1
vppsvc_invalid_objects_skipped_total{field="status.addresses[].address",kind="Node"} 1
# HELP vppsvc_last_sync_timestamp_seconds Unix time at which VPP last held every change handed to the renderers; 0 before the first sync.
# TYPE vppsvc_last_sync_timestamp_seconds gauge
vppsvc_last_sync_timestamp_seconds 0
`), "vppsvc_invalid_objects_skipped_total", "vppsvc_last_sync_timestamp_seconds"))
}
