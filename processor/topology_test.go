package processor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/vppsvc/vppsvc/model"
)

// filterByZoneHints is zoneFilter over one list of ready endpoints.
func filterByZoneHints(ready []model.ServiceBackend, zone string, keepLocal bool) []model.ServiceBackend {
	f := zoneFilter{zone: zone, keepLocal: keepLocal}
	for _, b := range ready {
		f.see(b)
	}
	var out []model.ServiceBackend
	for _, b := range ready {
		if f.keeps(b) {
			out = append(out, b)
		}
	}
	return out
}

func TestFilterByZoneHints(t *testing.T) {
	a1 := be("10.244.1.1:80", "zones=zone-a")
	b1 := be("10.244.2.1:80", "zones=zone-b")
	ab := be("10.244.2.2:80", "zones=zone-a+zone-b")
	bLocal := be("10.244.1.2:80", "local", "zones=zone-b")
	none := be("10.244.3.1:80")
	testCases := []struct {
		name      string
		ready     []model.ServiceBackend
		zone      string
		keepLocal bool
		want      []model.ServiceBackend
	}{
		{name: "all hinted, this zone present: keep this zone", ready: []model.ServiceBackend{a1, b1, ab}, zone: "zone-a", want: []model.ServiceBackend{a1, ab}},
		{name: "other zone", ready: []model.ServiceBackend{a1, b1, ab}, zone: "zone-b", want: []model.ServiceBackend{b1, ab}},
		{name: "one endpoint without hints: hints ignored", ready: []model.ServiceBackend{a1, b1, none}, zone: "zone-a", want: []model.ServiceBackend{a1, b1, none}},
		{name: "no endpoint for this zone: hints ignored", ready: []model.ServiceBackend{b1}, zone: "zone-a", want: []model.ServiceBackend{b1}},
		{name: "node without zone label: hints ignored", ready: []model.ServiceBackend{a1, b1}, zone: "", want: []model.ServiceBackend{a1, b1}},
		{name: "empty", ready: nil, zone: "zone-a", want: nil},
		{name: "local endpoint hinted elsewhere dropped under Cluster policies", ready: []model.ServiceBackend{a1, bLocal}, zone: "zone-a", want: []model.ServiceBackend{a1}},
		{name: "local endpoint hinted elsewhere kept under a Local policy", ready: []model.ServiceBackend{a1, bLocal, b1}, zone: "zone-a", keepLocal: true, want: []model.ServiceBackend{a1, bLocal}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, filterByZoneHints(tc.ready, tc.zone, tc.keepLocal))
		})
	}
}

// TestConvertServiceTopology checks the rule end to end: hints filter ready
// endpoints, never the terminating fallback, and local endpoints survive
// whenever either traffic policy is Local.
func TestConvertServiceTopology(t *testing.T) {
	slice := makeSlice("default", "svc-1", "svc", withEndpoints(
		makeEndpoint("10.244.1.1", onNode(thisNode), hinted("zone-b")),
		makeEndpoint("10.244.2.1", hinted("zone-a")),
		makeEndpoint("10.244.3.1", onNode("node-c"), hinted("zone-c")),
	))
	local := be("10.244.1.1:8080", "local", "zones=zone-b")
	inZone := be("10.244.2.1:8080", "zones=zone-a")
	other := be("10.244.3.1:8080", "zones=zone-c")
	testCases := []struct {
		name   string
		svc    *corev1.Service
		slices []*discoveryv1.EndpointSlice
		zone   string
		want   []model.ServiceBackend
	}{
		{name: "Cluster policies: only this zone", svc: makeService("default", "svc"), slices: []*discoveryv1.EndpointSlice{slice}, zone: thisZone, want: []model.ServiceBackend{inZone}},
		{name: "node in a zone nobody is hinted for", svc: makeService("default", "svc"), slices: []*discoveryv1.EndpointSlice{slice}, zone: "zone-x", want: []model.ServiceBackend{local, inZone, other}},
		{
			name: "internalTrafficPolicy Local keeps local endpoints",
			svc: makeService("default", "svc", func(s *corev1.Service) {
				s.Spec.InternalTrafficPolicy = ptr(corev1.ServiceInternalTrafficPolicyLocal)
			}),
			slices: []*discoveryv1.EndpointSlice{slice}, zone: thisZone, want: []model.ServiceBackend{local, inZone},
		},
		{
			name: "externalTrafficPolicy Local keeps local endpoints",
			svc: makeService("default", "svc", withType(corev1.ServiceTypeNodePort), func(s *corev1.Service) {
				s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
			}),
			slices: []*discoveryv1.EndpointSlice{slice}, zone: thisZone, want: []model.ServiceBackend{local, inZone},
		},
		{
			name: "terminating fallback ignores hints",
			svc:  makeService("default", "svc"),
			slices: []*discoveryv1.EndpointSlice{makeSlice("default", "svc-1", "svc", withEndpoints(
				makeEndpoint("10.244.2.1", terminating, hinted("zone-a")),
				makeEndpoint("10.244.3.1", terminating, hinted("zone-c")),
			))},
			zone: thisZone,
			want: []model.ServiceBackend{be("10.244.2.1:8080", "terminating", "zones=zone-a"), be("10.244.3.1:8080", "terminating", "zones=zone-c")},
		},
		{
			name: "hints of not-ready endpoints do not count",
			svc:  makeService("default", "svc"),
			slices: []*discoveryv1.EndpointSlice{makeSlice("default", "svc-1", "svc", withEndpoints(
				makeEndpoint("10.244.2.1", hinted("zone-a")),
				makeEndpoint("10.244.3.1", hinted("zone-c")),
				makeEndpoint("10.244.3.2", notReady),
			))},
			zone: thisZone,
			want: []model.ServiceBackend{be("10.244.2.1:8080", "zones=zone-a")},
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			node := nodeCtx
			node.Zone = tc.zone
			got, probs := ConvertService(tc.svc, tc.slices, node)
			assert.Empty(t, probs)
			assert.Equal(t, tc.want, got.Backends("http"))
		})
	}
}
