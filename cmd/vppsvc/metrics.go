package main

import (
	"maps"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/vppsvc/vppsvc/processor"
	"github.com/vppsvc/vppsvc/vppcfg/engine"
)

// metricsCollector exports the agent's own state to Prometheus, under
// vppsvc_. It keeps no counters of its own: every value is read at scrape
// time from the processor's Stats and Services and the VPP layer's Stats
// (which carry the govpp driver's CallStats), so the library packages stay
// free of any metrics dependency and nothing can drift out of step.
// kube-proxy's metrics are the sync tracker's (metrics_kubeproxy.go) and
// registered beside it; the two former vppsvc_ sync metrics they duplicate
// are gone (docs/cli.md, "Metrics").
type metricsCollector struct {
	proc *processor.Processor
	rec  *engine.Reconciler
	// renderers are the registered renderers, exported with zero failures
	// until one fails, so that rate() and alerts see the series from start.
	renderers []string
}

var (
	descServices = prometheus.NewDesc("vppsvc_services",
		"Services currently rendered.", nil, nil)
	descBackends = prometheus.NewDesc("vppsvc_backends",
		"Backends of the rendered services, counted once per service port (a pod serving two ports of a service counts twice).", nil, nil)
	descCalls = prometheus.NewDesc("vppsvc_vpp_api_calls_total",
		"VPP binary API requests sent, by message.", []string{"message"}, nil)
	descCallFailures = prometheus.NewDesc("vppsvc_vpp_api_failures_total",
		"VPP binary API requests that failed (error retval, timeout or lost connection), by message.", []string{"message"}, nil)
	descItems = prometheus.NewDesc("vppsvc_items",
		"Desired VPP configuration items by state: applied, pending (waiting for an interface or a dependency) or failed (retried with backoff).", []string{"state"}, nil)
	descInvalid = prometheus.NewDesc("vppsvc_invalid_objects_skipped_total",
		"Invalid elements of Kubernetes objects skipped, by object kind and field; counted when they appear.", []string{"kind", "field"}, nil)
	descRendererFailures = prometheus.NewDesc("vppsvc_renderer_failures_total",
		"Failed renderer calls, each followed by a retried resync of that renderer, by renderer.", []string{"renderer"}, nil)
	descWaitingForInterface = prometheus.NewDesc("vppsvc_items_waiting_for_interface",
		"Desired VPP items (of the pending ones) waiting for an interface VPP does not have, such as NAT roles and ACL bindings after a VPP restart.", nil, nil)
)

// Describe implements prometheus.Collector.
func (c *metricsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descServices, descBackends, descCalls, descCallFailures, descItems, descInvalid, descRendererFailures, descWaitingForInterface} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *metricsCollector) Collect(ch chan<- prometheus.Metric) {
	ps := c.proc.Stats()
	ch <- prometheus.MustNewConstMetric(descServices, prometheus.GaugeValue, float64(ps.Services))
	backends := 0
	for _, svc := range c.proc.Services() {
		for _, p := range svc.Ports {
			backends += len(p.Backends)
		}
	}
	ch <- prometheus.MustNewConstMetric(descBackends, prometheus.GaugeValue, float64(backends))
	for key, n := range ps.InvalidSkipped {
		ch <- prometheus.MustNewConstMetric(descInvalid, prometheus.CounterValue, float64(n), key.Kind, key.Field)
	}
	failures := map[string]uint64{}
	for _, name := range c.renderers {
		failures[name] = 0
	}
	maps.Copy(failures, ps.RendererFailures)
	for name, n := range failures {
		ch <- prometheus.MustNewConstMetric(descRendererFailures, prometheus.CounterValue, float64(n), name)
	}

	vs := c.rec.Stats()
	for msg, n := range vs.Calls {
		ch <- prometheus.MustNewConstMetric(descCalls, prometheus.CounterValue, float64(n), msg)
	}
	for msg, n := range vs.CallFailures {
		ch <- prometheus.MustNewConstMetric(descCallFailures, prometheus.CounterValue, float64(n), msg)
	}
	for state, n := range map[string]int{"applied": vs.Applied, "pending": vs.Pending, "failed": vs.Failed} {
		ch <- prometheus.MustNewConstMetric(descItems, prometheus.GaugeValue, float64(n), state)
	}
	ch <- prometheus.MustNewConstMetric(descWaitingForInterface, prometheus.GaugeValue, float64(vs.WaitingForInterface))
}

// newMetricsRegistry returns the agent's own registry (never the global one,
// so that tests can run several agents in one process) with the Go and
// process collectors; runNode registers the agent's collectors once the
// agent is built, while /metrics already answers.
func newMetricsRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}
