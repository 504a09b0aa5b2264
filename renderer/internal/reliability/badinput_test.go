package reliability_test

import (
	"fmt"
	"maps"
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/vppsvc/vppsvc/processor"
	"github.com/vppsvc/vppsvc/renderer/internal/tracetest"
)

// TestBadInputEndToEnd: 20 kinds of malformed objects go through the whole
// agent next to valid ones. VPP ends up holding exactly what the objects
// with their bad elements removed by hand give, and every bad element is
// counted once in the processor's Stats().InvalidSkipped, however often its
// service is recomputed.
func TestBadInputEndToEnd(t *testing.T) {
	v4 := discoveryv1.AddressTypeIPv4
	svcKey := func(f string) processor.ProblemKey {
		return processor.ProblemKey{Kind: processor.KindService, Field: f}
	}
	sliceKey := func(f string) processor.ProblemKey {
		return processor.ProblemKey{Kind: processor.KindEndpointSlice, Field: f}
	}
	// Each kind changes the valid service i (bulkService, its slices) into
	// the bad objects and into the objects the agent must render instead.
	type objects struct {
		svc    *corev1.Service
		slices []*discoveryv1.EndpointSlice
	}
	extraPort := corev1.ServicePort{Name: "extra", Protocol: corev1.ProtocolTCP, Port: 81}
	tests := []struct {
		name string
		bad  func(o *objects)
		// good turns the valid objects into what must be rendered (a no-op
		// when the bad element was an addition); nil: the bad objects
		// render as they are.
		good func(o *objects)
		want processor.ProblemKey
	}{
		{"bad cluster IP", func(o *objects) { o.svc.Spec.ClusterIPs = append(o.svc.Spec.ClusterIPs, "10.96.300.1") }, nil, svcKey("spec.clusterIPs[]")},
		{"bad external IP", func(o *objects) { o.svc.Spec.ExternalIPs = []string{"203.0.113.7", "203.0.113"} },
			func(o *objects) { o.svc.Spec.ExternalIPs = []string{"203.0.113.7"} }, svcKey("spec.externalIPs[]")},
		{"bad LoadBalancer ingress IP", func(o *objects) {
			o.svc.Status.LoadBalancer.Ingress = append(o.svc.Status.LoadBalancer.Ingress, corev1.LoadBalancerIngress{IP: "198.51.100.x"})
		}, func(*objects) {}, svcKey("status.loadBalancer.ingress[].ip")},
		{"service port 0", func(o *objects) { o.svc.Spec.Ports = append(o.svc.Spec.Ports, withPort(extraPort, 0)) }, func(*objects) {}, svcKey("spec.ports[].port")},
		{"service port 70000", func(o *objects) { o.svc.Spec.Ports = append(o.svc.Spec.Ports, withPort(extraPort, 70000)) }, func(*objects) {}, svcKey("spec.ports[].port")},
		{"unknown protocol", func(o *objects) {
			p := extraPort
			p.Protocol = "QUIC"
			o.svc.Spec.Ports = append(o.svc.Spec.Ports, p)
		}, func(*objects) {}, svcKey("spec.ports[].protocol")},
		{"duplicate port name", func(o *objects) {
			p := o.svc.Spec.Ports[0]
			p.Port = 82
			o.svc.Spec.Ports = append(o.svc.Spec.Ports, p)
		}, func(*objects) {}, svcKey("spec.ports[].name")},
		{"node port 70000", func(o *objects) { o.svc.Spec.Ports[0].NodePort = 70000 },
			func(o *objects) { o.svc.Spec.Ports[0].NodePort = 0 }, svcKey("spec.ports[].nodePort")},
		{"bad source range", func(o *objects) {
			o.svc.Spec.LoadBalancerSourceRanges = append(o.svc.Spec.LoadBalancerSourceRanges, "100.64.300.0/24")
		},
			func(*objects) {}, svcKey("spec.loadBalancerSourceRanges[]")},
		{"unknown service type", func(o *objects) { o.svc.Spec.Type = "Sideways" }, func(o *objects) { o.svc = nil }, svcKey("spec.type")},
		{"unknown external traffic policy", func(o *objects) { o.svc.Spec.ExternalTrafficPolicy = "Nearest" },
			func(o *objects) { o.svc.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster }, svcKey("spec.externalTrafficPolicy")},
		{"unknown session affinity", func(o *objects) { o.svc.Spec.SessionAffinity = "Sticky" },
			func(o *objects) { o.svc.Spec.SessionAffinity = corev1.ServiceAffinityNone }, svcKey("spec.sessionAffinity")},
		{"slice without the service-name label", func(o *objects) { delete(o.slices[0].Labels, discoveryv1.LabelServiceName) },
			func(o *objects) { o.slices = nil }, sliceKey("metadata.labels[" + discoveryv1.LabelServiceName + "]")},
		{"endpoint with a bad IP", func(o *objects) {
			o.slices[0].Endpoints = append(o.slices[0].Endpoints, tracetest.Remote("10.1.2.300"))
		},
			func(*objects) {}, sliceKey("endpoints[].addresses")},
		{"endpoint of the other family", func(o *objects) {
			o.slices[0].Endpoints = append(o.slices[0].Endpoints, tracetest.Remote("fd00:1:2::99"))
		},
			func(*objects) {}, sliceKey("endpoints[].addresses")},
		{"endpoint without address", func(o *objects) {
			o.slices[0].Endpoints = append(o.slices[0].Endpoints, discoveryv1.Endpoint{NodeName: tracetest.Ptr(tracetest.OtherNode)})
		}, func(*objects) {}, sliceKey("endpoints[].addresses")},
		{"slice port without number", func(o *objects) { o.slices[0].Ports[1].Port = nil },
			func(o *objects) { o.slices[0].Ports = o.slices[0].Ports[:1] }, sliceKey("ports[].port")},
		{"slice port with unknown protocol", func(o *objects) { o.slices[0].Ports[1].Protocol = tracetest.Ptr(corev1.Protocol("QUIC")) },
			func(o *objects) { o.slices[0].Ports = o.slices[0].Ports[:1] }, sliceKey("ports[].protocol")},
		{"unknown address type", func(o *objects) { o.slices[0].AddressType = "IPv5" }, func(o *objects) { o.slices = nil }, sliceKey("addressType")},
		// Valid but odd: nothing to report, and the result is as if well formed.
		{"duplicate endpoints", func(o *objects) {
			dup := o.slices[0].DeepCopy()
			dup.Name += "-dup"
			o.slices = append(o.slices, dup)
			o.slices[0].Endpoints = append(o.slices[0].Endpoints, o.slices[0].Endpoints...)
		}, func(*objects) {}, processor.ProblemKey{}},
		{"LoadBalancer without ingress", func(o *objects) { o.svc.Status.LoadBalancer.Ingress = nil }, nil, processor.ProblemKey{}},
		{"nil fields", func(o *objects) {
			o.svc.Spec.InternalTrafficPolicy = nil
			o.svc.Spec.SessionAffinityConfig = nil
			for i := range o.slices[0].Endpoints {
				o.slices[0].Endpoints[i].NodeName = nil
				o.slices[0].Endpoints[i].Conditions = discoveryv1.EndpointConditions{} // ready nil counts as ready
			}
		}, nil, processor.ProblemKey{}},
	}
	bad, good := newCluster(), newCluster()
	want := map[processor.ProblemKey]uint64{}
	for k, tc := range tests {
		i := 3 + 7*k // a LoadBalancer with source ranges, IPv4 only (bulkService)
		mk := func() *objects {
			o := &objects{svc: bulkService(i)}
			o.svc.Spec.ClusterIPs, o.svc.Spec.IPFamilies = o.svc.Spec.ClusterIPs[:1], o.svc.Spec.IPFamilies[:1]
			o.svc.Spec.ClusterIP = o.svc.Spec.ClusterIPs[0]
			if netip.MustParseAddr(o.svc.Spec.ClusterIP).Is6() {
				o.svc.Spec.ClusterIPs = []string{fmt.Sprintf("10.96.100.%d", k+1)}
				o.svc.Spec.ClusterIP = o.svc.Spec.ClusterIPs[0]
				o.svc.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
			}
			o.slices = []*discoveryv1.EndpointSlice{slice(o.svc.Name, v4, endpointOf(v4, k%4), endpointOf(v4, 5+k%6))}
			return o
		}
		b := mk()
		tc.bad(b)
		g := b
		if tc.good != nil {
			g = mk()
			tc.good(g)
		}
		for c, o := range map[*cluster]*objects{bad: b, good: g} {
			if o.svc != nil {
				c.addService(o.svc)
			}
			for _, s := range o.slices {
				c.addSlice(s)
			}
		}
		if tc.want != (processor.ProblemKey{}) {
			want[tc.want]++
		}
	}
	// A Node with a bad address: reported too.
	n2 := bad.nodes[tracetest.OtherNode].DeepCopy()
	n2.Status.Addresses = append(n2.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: "192.168.16.256"})
	bad.nodes[n2.Name] = n2
	want[processor.ProblemKey{Kind: processor.KindNode, Field: "status.addresses[].address"}]++

	wantDump := reference(t, good.snapshot(), nil)
	v := newFake(1)
	a := startAgent(t, v, true)
	a.proc.Resync(newCluster().snapshot())
	// Incrementally, twice over (every service recomputed again), then one
	// Resync of everything: each bad element is still counted once.
	for range 2 {
		for _, s := range sortedValues(bad.services) {
			a.proc.UpdateService(s)
		}
		for _, s := range sortedValues(bad.slices) {
			a.proc.UpdateEndpointSlice(s)
		}
		a.proc.UpdateNode(n2)
	}
	waitDump(t, a, v, wantDump, "incremental")
	a.proc.Resync(bad.snapshot())
	waitDump(t, a, v, wantDump, "after a Resync")
	if got := a.proc.Stats().InvalidSkipped; !maps.Equal(got, want) {
		t.Errorf("InvalidSkipped:\n got %v\nwant %v", got, want)
	}
	tracetest.AssertNoViolations(t, v)
}

func withPort(p corev1.ServicePort, n int32) corev1.ServicePort {
	p.Port = n
	return p
}
