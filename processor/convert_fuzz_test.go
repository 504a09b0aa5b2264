package processor_test

import (
	"encoding/json"
	"net/netip"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/processor"
)

// FuzzConvertService feeds ConvertService with a Service and two
// EndpointSlices decoded from JSON (seeds in testdata/fuzz/FuzzConvertService).
// It must never panic, must be deterministic and independent of the order of
// the slices, and must name the kind and field of every problem it reports.
//
//	go test ./processor -run '^$' -fuzz FuzzConvertService -fuzztime 60s
func FuzzConvertService(f *testing.F) {
	f.Add(`{"metadata":{"namespace":"default","name":"web"},"spec":{"type":"LoadBalancer","clusterIP":"10.96.0.10","clusterIPs":["10.96.0.10","fd00:96::10"],"ipFamilies":["IPv4","IPv6"],"externalIPs":["203.0.113.1","bad"],"loadBalancerSourceRanges":["100.64.0.0/16","x"],"externalTrafficPolicy":"Local","healthCheckNodePort":32000,"sessionAffinity":"ClientIP","ports":[{"name":"http","protocol":"TCP","port":80,"nodePort":30080},{"name":"dns","protocol":"UDP","port":70000}]},"status":{"loadBalancer":{"ingress":[{"ip":"198.51.100.1"},{"hostname":"lb.example"}]}}}`,
		`{"metadata":{"namespace":"default","name":"web-a","labels":{"kubernetes.io/service-name":"web"}},"addressType":"IPv4","ports":[{"name":"http","protocol":"TCP","port":8080}],"endpoints":[{"addresses":["10.1.1.2"],"nodeName":"node-1","zone":"a","hints":{"forZones":[{"name":"a"}]}},{"addresses":["10.1.2.3"],"conditions":{"ready":false,"serving":true,"terminating":true}}]}`,
		`{"metadata":{"namespace":"default","name":"web-b","labels":{"kubernetes.io/service-name":"web"}},"addressType":"IPv6","ports":[{"name":"http","port":0}],"endpoints":[{"addresses":["fd00:1::2"]},{"addresses":[]}]}`,
		"a")
	f.Add(`{"metadata":{"namespace":"ns","name":"s"},"spec":{"clusterIP":"None"}}`, `{}`, `null`, "")
	f.Add(`{"metadata":{"namespace":"ns","name":"s"},"spec":{"type":"ExternalName","externalName":"example.com"}}`, `{"addressType":"FQDN"}`, `{}`, "z")
	node := func(zone string) processor.NodeContext {
		return processor.NodeContext{Name: "node-1", Zone: zone,
			NodeIPs: model.IPAddresses{netip.MustParseAddr("10.1.2.3"), netip.MustParseAddr("192.168.16.1")}}
	}
	f.Fuzz(func(t *testing.T, svcJSON, slice1JSON, slice2JSON, zone string) {
		var svc *corev1.Service
		if json.Unmarshal([]byte(svcJSON), &svc) != nil {
			return
		}
		var in []*discoveryv1.EndpointSlice
		for _, j := range []string{slice1JSON, slice2JSON} {
			var s *discoveryv1.EndpointSlice
			if json.Unmarshal([]byte(j), &s) != nil {
				return
			}
			in = append(in, s)
		}
		if svc == nil {
			return // the processor never converts a nil Service
		}
		got, probs := processor.ConvertService(svc, in, node(zone))
		again, _ := processor.ConvertService(svc, slices.Clone(in), node(zone))
		reversed, _ := processor.ConvertService(svc, []*discoveryv1.EndpointSlice{in[1], in[0]}, node(zone))
		for name, other := range map[string]*model.ContivService{"a second conversion": again, "the slices reversed": reversed} {
			if (got == nil) != (other == nil) || (got != nil && !got.Equal(other)) {
				t.Fatalf("%s differs:\n%+v\n%+v", name, got, other)
			}
		}
		for _, p := range probs {
			if p.Kind == "" || p.Field == "" || p.Reason == "" {
				t.Fatalf("problem without kind, field or reason: %+v", p)
			}
		}
	})
}
