package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vppsvc/vppsvc/fakevpp"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// collectorFor simulates a cluster file ("" for the sample) and returns the
// metrics collector over its agent.
func collectorFor(t *testing.T, file string) (*metricsCollector, *simulation) {
	t.Helper()
	sim, err := simulate(context.Background(), &clusterFlags{file: file}, nil, quietLogger())
	require.NoError(t, err)
	t.Cleanup(sim.close)
	var names []string
	for name := range sim.agent.Renderers {
		names = append(names, name)
	}
	slices.Sort(names)
	return &metricsCollector{proc: sim.agent.Processor, rec: sim.agent.Reconciler, renderers: names}, sim
}

func TestMetricsOfTheSample(t *testing.T) {
	c, sim := collectorFor(t, "")
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
# HELP vppsvc_items_waiting_for_interface Desired VPP items (of the pending ones) waiting for an interface VPP does not have, such as NAT roles and ACL bindings after a VPP restart.
# TYPE vppsvc_items_waiting_for_interface gauge
vppsvc_items_waiting_for_interface 0
# HELP vppsvc_renderer_failures_total Failed renderer calls, each followed by a retried resync of that renderer, by renderer.
# TYPE vppsvc_renderer_failures_total counter
vppsvc_renderer_failures_total{renderer="ipv6"} 0
vppsvc_renderer_failures_total{renderer="nat44"} 0
# HELP vppsvc_services Services currently rendered.
# TYPE vppsvc_services gauge
vppsvc_services 11
`, applied)
	require.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(want),
		"vppsvc_backends", "vppsvc_items", "vppsvc_items_waiting_for_interface", "vppsvc_renderer_failures_total", "vppsvc_services"))

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
	c, _ := collectorFor(t, "testdata/bad-fields.yaml")
	require.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(`
# HELP vppsvc_invalid_objects_skipped_total Invalid elements of Kubernetes objects skipped, by object kind and field; counted when they appear.
# TYPE vppsvc_invalid_objects_skipped_total counter
vppsvc_invalid_objects_skipped_total{field="endpoints[].addresses",kind="EndpointSlice"} 1
vppsvc_invalid_objects_skipped_total{field="spec.ports[].port",kind="Service"} 1
vppsvc_invalid_objects_skipped_total{field="status.addresses[].address",kind="Node"} 1
`), "vppsvc_invalid_objects_skipped_total"))
}

// metricType returns the TYPE a /metrics body declares for a family.
func metricType(body, family string) string {
	m := regexp.MustCompile(`(?m)^# TYPE ` + regexp.QuoteMeta(family) + ` (\w+)$`).FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return m[1]
}

// withTrigger sets the EndpointSlice controller's trigger time annotation.
func withTrigger[T interface{ SetAnnotations(map[string]string) }](obj T, at time.Time) T {
	obj.SetAnnotations(map[string]string{corev1.EndpointsLastChangeTriggerTime: at.UTC().Format(time.RFC3339Nano)})
	return obj
}

// TestKubeProxyMetricsAfterRealChanges runs the agent against the fake
// clientset and a fake VPP, makes service and endpoint changes carrying
// trigger times, and reads kube-proxy's metrics from /metrics over HTTP:
// names and types as kube-proxy's, change counts, network programming
// latency observed once per change and bounded by the test's own clock, sync
// timestamps moving, health probes counted.
func TestKubeProxyMetricsAfterRealChanges(t *testing.T) {
	client, watches := sampleClientset(t)
	vpp := fakevpp.New(fakevpp.WithSeed(1))
	n := startNode(t, client, watches, vpp, time.Minute)
	ctx := context.Background()
	_, body := get(t, "http://"+n.http+"/metrics")

	for family, typ := range map[string]string{
		"kubeproxy_sync_proxy_rules_duration_seconds":              "histogram",
		"kubeproxy_sync_full_proxy_rules_duration_seconds":         "histogram",
		"kubeproxy_sync_proxy_rules_last_timestamp_seconds":        "gauge",
		"kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds": "gauge",
		"kubeproxy_sync_proxy_rules_service_changes_total":         "counter",
		"kubeproxy_sync_proxy_rules_endpoint_changes_total":        "counter",
		"kubeproxy_sync_proxy_rules_service_changes_pending":       "gauge",
		"kubeproxy_sync_proxy_rules_endpoint_changes_pending":      "gauge",
		"kubeproxy_proxy_healthz_total":                            "counter",
		"kubeproxy_proxy_livez_total":                              "counter",
		"vppsvc_items_waiting_for_interface":                       "gauge",
	} {
		assert.Equal(t, typ, metricType(body, family), family)
	}
	assert.NotContains(t, body, "vppsvc_sync_duration_seconds", "replaced by kube-proxy's")
	assert.NotContains(t, body, "vppsvc_last_sync_timestamp_seconds", "replaced by kube-proxy's")
	// The sample is dual-stack: both renderers synced once, in full.
	for _, fam := range []string{"IPv4", "IPv6"} {
		assert.Equal(t, 1.0, metricValue(body, `kubeproxy_sync_full_proxy_rules_duration_seconds_count{ip_family="`+fam+`"}`), fam)
		assert.Positive(t, metricValue(body, `kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family="`+fam+`"}`), fam)
	}
	assert.Equal(t, -1.0, metricValue(body, `kubeproxy_network_programming_duration_seconds_count{ip_family="IPv4"}`),
		"the initial list's trigger times are from before the start")
	services0 := metricValue(body, "kubeproxy_sync_proxy_rules_service_changes_total")
	endpoints0 := metricValue(body, "kubeproxy_sync_proxy_rules_endpoint_changes_total")
	lastSync0 := metricValue(body, `kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family="IPv4"}`)

	// A new service, its endpoints, and a scale-up: one Service change and
	// two EndpointSlice changes, two of them with trigger times.
	begin := time.Now()
	_, err := client.CoreV1().Services("default").Create(ctx, shopService(), metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = client.DiscoveryV1().EndpointSlices("default").Create(ctx, withTrigger(shopSlice("10.1.2.50"), time.Now()), metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(n.probe("10.96.1.1:80")) == 1 }, wait, tick, "new service")
	_, err = client.DiscoveryV1().EndpointSlices("default").Update(ctx, withTrigger(shopSlice("10.1.2.50", "10.1.3.50"), time.Now()), metav1.UpdateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(n.probe("10.96.1.1:80")) == 2 }, wait, tick, "scaled up")
	require.Eventually(t, func() bool {
		return n.metric(`kubeproxy_network_programming_duration_seconds_count{ip_family="IPv4"}`) == 2
	}, wait, tick, "both trigger times observed")
	elapsed := time.Since(begin).Seconds()

	_, body = get(t, "http://"+n.http+"/metrics")
	assert.Equal(t, services0+1, metricValue(body, "kubeproxy_sync_proxy_rules_service_changes_total"))
	assert.Equal(t, endpoints0+2, metricValue(body, "kubeproxy_sync_proxy_rules_endpoint_changes_total"))
	latency := metricValue(body, `kubeproxy_network_programming_duration_seconds_sum{ip_family="IPv4"}`)
	assert.Greater(t, latency, 0.0)
	assert.LessOrEqual(t, latency, 2*elapsed, "each latency is bounded by the time since the test set it")
	assert.Equal(t, 2.0, metricValue(body, `kubeproxy_network_programming_duration_seconds_bucket{ip_family="IPv4",le="+Inf"}`))
	assert.Equal(t, -1.0, metricValue(body, `kubeproxy_network_programming_duration_seconds_count{ip_family="IPv6"}`),
		"an IPv4 slice is IPv4's latency only")
	t.Logf("network programming latency: %.4f s for 2 changes within %.4f s", latency, elapsed)
	assert.Greater(t, metricValue(body, `kubeproxy_sync_partial_proxy_rules_duration_seconds_count{ip_family="IPv4"}`), 0.0)
	assert.Greater(t, metricValue(body, `kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family="IPv4"}`), lastSync0, "the sync timestamp moved")
	assert.GreaterOrEqual(t, metricValue(body, `kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds{ip_family="IPv4"}`), lastSync0)
	assert.Equal(t, 0.0, metricValue(body, "vppsvc_items_waiting_for_interface"))
	require.Eventually(t, func() bool {
		_, body := get(t, "http://"+n.http+"/metrics")
		return metricValue(body, "kubeproxy_sync_proxy_rules_service_changes_pending") == 0 &&
			metricValue(body, "kubeproxy_sync_proxy_rules_endpoint_changes_pending") == 0
	}, wait, tick, "nothing pending once applied")

	// Probes are counted by path and code, both codes from the start.
	healthz0 := n.metric(`kubeproxy_proxy_healthz_total{code="200"}`)
	for range 2 {
		code, _ := get(t, "http://"+n.http+"/healthz")
		require.Equal(t, http.StatusOK, code)
		code, _ = get(t, "http://"+n.http+"/livez")
		require.Equal(t, http.StatusOK, code)
	}
	_, body = get(t, "http://"+n.http+"/metrics")
	assert.Equal(t, healthz0+2, metricValue(body, `kubeproxy_proxy_healthz_total{code="200"}`))
	assert.Equal(t, 2.0, metricValue(body, `kubeproxy_proxy_livez_total{code="200"}`))
	assert.Equal(t, 0.0, metricValue(body, `kubeproxy_proxy_livez_total{code="503"}`))
}
