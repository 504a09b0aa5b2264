package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/vppsvc/vppsvc/healthcheck"
	"github.com/vppsvc/vppsvc/processor"
)

// Which trigger times are recorded, and when they are observed: only
// well-formed ones from after the start, once per IP family (none for FQDN
// slices), and only after the processor has handled the change or resynced.
func TestTriggerTimes(t *testing.T) {
	sim, err := simulate(context.Background(), &clusterFlags{}, nil, quietLogger())
	require.NoError(t, err)
	t.Cleanup(sim.close)
	tr := newSyncTracker(&healthcheck.ProxyHealth{Timeout: time.Minute}, &healthcheck.ServiceServers{}, time.Second, quietLogger())
	tr.agent = sim.agent
	at := func(d time.Duration) map[string]string {
		return map[string]string{corev1.EndpointsLastChangeTriggerTime: tr.started.Add(d).UTC().Format(time.RFC3339Nano)}
	}
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		families    []string
		want        []string
	}{
		{"no annotation", nil, []string{"IPv4"}, nil},
		{"malformed", map[string]string{corev1.EndpointsLastChangeTriggerTime: "yesterday"}, []string{"IPv4"}, nil},
		{"before the start", at(-time.Hour), []string{"IPv4"}, nil},
		{"FQDN slice", at(time.Second), []string{"FQDN"}, nil},
		{"IPv6 slice", at(time.Second), []string{"IPv6"}, []string{"IPv6"}},
		{"dual-stack service", at(time.Second), []string{"IPv4", "IPv6"}, []string{"IPv4", "IPv6"}},
	} {
		tr.triggers = nil
		tr.seeTrigger(processor.KindEndpointSlice, tc.annotations, tc.families)
		var got []string
		for _, x := range tr.triggers {
			got = append(got, x.family)
		}
		assert.Equal(t, tc.want, got, tc.name)
	}

	// Not handled yet: kept. Handled (one more event of its kind): observed.
	now := tr.started.Add(3 * time.Second)
	ps := sim.agent.Processor.Stats()
	tr.drainTriggers(now, ps)
	assert.Len(t, tr.triggers, 2, "the processor has not seen the change yet")
	ps.Events[processor.KindEndpointSlice]++
	tr.drainTriggers(now, ps)
	assert.Empty(t, tr.triggers)
	body := scrape(t, tr.metrics.netProg)
	for _, fam := range []string{"IPv4", "IPv6"} {
		assert.Equal(t, 1.0, metricValue(body, `kubeproxy_network_programming_duration_seconds_count{ip_family="`+fam+`"}`), fam)
		assert.InDelta(t, 2.0, metricValue(body, `kubeproxy_network_programming_duration_seconds_sum{ip_family="`+fam+`"}`), 1e-6,
			"from the trigger time (start + 1 s) to now (start + 3 s)")
	}
}
