package processor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

func TestStatsCounters(t *testing.T) {
	p, log := newTestProcessor(t)
	r := newRecorder()
	p.RegisterRenderer("rec", r)
	p.Resync(Snapshot{Services: []*corev1.Service{makeService("default", "svc", withClusterIPs("10.96.0.10", "bogus"))}})

	// The bad cluster IP is counted once although the service is recomputed
	// on every slice change.
	for _, addr := range []string{"10.244.2.1", "10.244.2.2", "10.244.2.3"} {
		p.UpdateEndpointSlice(makeSlice("default", "svc-1", "svc", withEndpoints(makeEndpoint(addr))))
	}
	p.UpdateEndpointSlice(makeSlice("default", "orphan", ""))
	p.UpdateEndpointSlice(makeSlice("default", "orphan", ""))
	p.UpdateNode(makeNode("node-b", "192.168.0.300", ""))
	p.UpdateLocalPod(LocalPod{ID: PodID{Namespace: "default", Name: "pod-9"}})
	p.UpdateService(nil)
	p.UpdateEndpointSlice(nil)
	p.UpdateNode(nil)
	p.DeleteLocalPod(PodID{Namespace: "default", Name: "pod-9"})

	st := p.Stats()
	assert.Equal(t, map[string]uint64{KindService: 1, KindEndpointSlice: 6, KindNode: 2, KindLocalPod: 2}, st.Events)
	assert.Equal(t, uint64(1), st.Resyncs)
	assert.Equal(t, map[ProblemKey]uint64{
		{KindService, "spec.clusterIPs[]"}: 1,
		{KindService, ""}:                  1,
		{KindEndpointSlice, "metadata.labels[" + discoveryv1.LabelServiceName + "]"}: 1,
		{KindEndpointSlice, ""}:                  1,
		{KindNode, "status.addresses[].address"}: 1,
		{KindNode, "metadata.name"}:              1,
		{KindLocalPod, "Interface"}:              1,
	}, st.InvalidSkipped)
	assert.Equal(t, 1, st.Services)
	assert.Equal(t, map[string]uint64{"rec": 1}, st.RendererResyncs)

	// Every counted problem was logged as a warning with its fields.
	var warnings int
	for _, e := range log.hook.snapshot() {
		if e.Message == "skipping invalid input element" {
			warnings++
			assert.Contains(t, e.Data, "kind")
			assert.Contains(t, e.Data, "field")
			assert.Contains(t, e.Data, "key")
		}
	}
	assert.Equal(t, 7, warnings)
}

func TestStatsIsACopy(t *testing.T) {
	p, _ := newTestProcessor(t)
	st := p.Stats()
	st.Events[KindService] = 42
	st.InvalidSkipped[ProblemKey{"x", "y"}] = 1
	st.RendererFailures["x"] = 1
	st.RendererResyncs["x"] = 1
	again := p.Stats()
	assert.Empty(t, again.Events)
	assert.Empty(t, again.InvalidSkipped)
	assert.Empty(t, again.RendererFailures)
	assert.Empty(t, again.RendererResyncs)
}
