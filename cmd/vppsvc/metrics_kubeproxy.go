package main

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vppsvc/vppsvc/processor"
)

// kubeProxyMetrics are kube-proxy's metrics, with its names, types, labels,
// buckets and meanings (Kubernetes 1.33+, where the sync metrics carry
// ip_family), so that an operator's kube-proxy dashboards and alerts work
// unchanged. A "sync" is the moment VPP holds every change handed to the
// renderers (syncTracker); docs/cli.md lists what differs from kube-proxy.
//
// The histograms are observed by the tracker; everything else is read at
// scrape time.
type kubeProxyMetrics struct {
	syncDuration, syncFull, syncPartial, netProg *prometheus.HistogramVec
	// droppedTriggers counts trigger times not recorded because too many
	// waited (maxTriggers); guarded by the tracker's mu.
	droppedTriggers uint64
}

// syncBuckets are kube-proxy's: 1 ms to 16 s, doubling.
var syncBuckets = prometheus.ExponentialBuckets(0.001, 2, 15)

// netProgBuckets are kube-proxy's network programming buckets: 0, 0.25 s,
// 0.5 s, every second to 59 s, every 5 s to 115 s, every 30 s to 5 min.
func netProgBuckets() []float64 {
	b := []float64{0}
	b = append(b, prometheus.LinearBuckets(0.25, 0.25, 2)...)
	b = append(b, prometheus.LinearBuckets(1, 1, 59)...)
	b = append(b, prometheus.LinearBuckets(60, 5, 12)...)
	return append(b, prometheus.LinearBuckets(120, 30, 7)...)
}

func newKubeProxyMetrics() *kubeProxyMetrics {
	hist := func(name, help string, buckets []float64) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "kubeproxy", Name: name, Help: help, Buckets: buckets},
			[]string{"ip_family"})
	}
	return &kubeProxyMetrics{
		syncDuration: hist("sync_proxy_rules_duration_seconds",
			"SyncProxyRules latency in seconds: time from a change reaching the renderers until VPP holds it, per applied batch of changes.", syncBuckets),
		syncFull: hist("sync_full_proxy_rules_duration_seconds",
			"SyncProxyRules latency in seconds for full resyncs: batches that held a renderer resync.", syncBuckets),
		syncPartial: hist("sync_partial_proxy_rules_duration_seconds",
			"SyncProxyRules latency in seconds for partial resyncs: batches of incremental renderer calls.", syncBuckets),
		netProg: hist("network_programming_duration_seconds",
			"In Cluster Network Programming Latency in seconds: from a change's endpoints.kubernetes.io/last-change-trigger-time until VPP holds it.", netProgBuckets()),
	}
}

// observeSync records one applied batch of one IP family.
func (m *kubeProxyMetrics) observeSync(family string, d time.Duration, full bool) {
	m.syncDuration.WithLabelValues(family).Observe(d.Seconds())
	if full {
		m.syncFull.WithLabelValues(family).Observe(d.Seconds())
	} else {
		m.syncPartial.WithLabelValues(family).Observe(d.Seconds())
	}
}

var (
	descLastTimestamp = prometheus.NewDesc("kubeproxy_sync_proxy_rules_last_timestamp_seconds",
		"The last time proxy rules were successfully synced: VPP held every change handed to the renderers of this IP family.", []string{"ip_family"}, nil)
	descLastQueued = prometheus.NewDesc("kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds",
		"The last time a sync of proxy rules was queued: a renderer of this IP family was handed a change (the start before the first).", []string{"ip_family"}, nil)
	descServiceChanges = prometheus.NewDesc("kubeproxy_sync_proxy_rules_service_changes_total",
		"Cumulative proxy rules Service changes: Service events handed to the processor after the initial snapshot.", nil, nil)
	descEndpointChanges = prometheus.NewDesc("kubeproxy_sync_proxy_rules_endpoint_changes_total",
		"Cumulative proxy rules Endpoint changes: EndpointSlice events handed to the processor after the initial snapshot.", nil, nil)
	descServicePending = prometheus.NewDesc("kubeproxy_sync_proxy_rules_service_changes_pending",
		"Pending proxy rules Service changes: Service events since VPP last held everything.", nil, nil)
	descEndpointPending = prometheus.NewDesc("kubeproxy_sync_proxy_rules_endpoint_changes_pending",
		"Pending proxy rules Endpoint changes: EndpointSlice events since VPP last held everything.", nil, nil)
	descHealthz = prometheus.NewDesc("kubeproxy_proxy_healthz_total",
		"Cumulative proxy healthz HTTP status", []string{"code"}, nil)
	descLivez = prometheus.NewDesc("kubeproxy_proxy_livez_total",
		"Cumulative proxy livez HTTP status", []string{"code"}, nil)
	descDroppedTriggers = prometheus.NewDesc("vppsvc_network_programming_triggers_dropped_total",
		"Trigger times not observed in kubeproxy_network_programming_duration_seconds because too many changes waited for VPP.", nil, nil)
)

// Describe implements prometheus.Collector.
func (t *syncTracker) Describe(ch chan<- *prometheus.Desc) {
	for _, h := range []*prometheus.HistogramVec{t.metrics.syncDuration, t.metrics.syncFull, t.metrics.syncPartial, t.metrics.netProg} {
		h.Describe(ch)
	}
	for _, d := range []*prometheus.Desc{descLastTimestamp, descLastQueued, descServiceChanges, descEndpointChanges,
		descServicePending, descEndpointPending, descHealthz, descLivez, descDroppedTriggers} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (t *syncTracker) Collect(ch chan<- prometheus.Metric) {
	for _, h := range []*prometheus.HistogramVec{t.metrics.syncDuration, t.metrics.syncFull, t.metrics.syncPartial, t.metrics.netProg} {
		h.Collect(ch)
	}
	s := t.snapshot()
	unix := func(at time.Time) float64 { return float64(at.UnixNano()) / 1e9 }
	for fam, at := range s.lastSync {
		ch <- prometheus.MustNewConstMetric(descLastTimestamp, prometheus.GaugeValue, unix(at), fam)
	}
	for fam, at := range s.lastQueued {
		ch <- prometheus.MustNewConstMetric(descLastQueued, prometheus.GaugeValue, unix(at), fam)
	}
	var events map[string]uint64
	if t.agent != nil {
		events = t.agent.Processor.Stats().Events
	}
	ch <- prometheus.MustNewConstMetric(descServiceChanges, prometheus.CounterValue, float64(events[processor.KindService]))
	ch <- prometheus.MustNewConstMetric(descEndpointChanges, prometheus.CounterValue, float64(events[processor.KindEndpointSlice]))
	ch <- prometheus.MustNewConstMetric(descServicePending, prometheus.GaugeValue, float64(s.pending[processor.KindService]))
	ch <- prometheus.MustNewConstMetric(descEndpointPending, prometheus.GaugeValue, float64(s.pending[processor.KindEndpointSlice]))
	probes := t.health.Probes()
	for code, n := range probes["healthz"] {
		ch <- prometheus.MustNewConstMetric(descHealthz, prometheus.CounterValue, float64(n), strconv.Itoa(code))
	}
	for code, n := range probes["livez"] {
		ch <- prometheus.MustNewConstMetric(descLivez, prometheus.CounterValue, float64(n), strconv.Itoa(code))
	}
	t.mu.Lock()
	dropped := t.metrics.droppedTriggers
	t.mu.Unlock()
	ch <- prometheus.MustNewConstMetric(descDroppedTriggers, prometheus.CounterValue, float64(dropped))
}
