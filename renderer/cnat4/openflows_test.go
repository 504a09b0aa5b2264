package cnat4_test

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/vppsvc/vppsvc/fakevpp"
)

// TestTraceOpenFlowAcrossEndpointChanges follows one established flow
// through a scale-up to three endpoints and a scale-down back to its own
// endpoint. A cnat session forwards through the load balance of its
// backend's host entry (cs_lbi), which every translation update releases
// and re-creates unless something else holds it: a host route to the pod
// (local endpoints here, as CNIs install them), another translation of the
// same backend (a NodePort service's second frontend), or the service's
// flow keeper (docs/renderer-ipv6.md, "Open flows across endpoint changes").
func TestTraceOpenFlowAcrossEndpointChanges(t *testing.T) {
	cases := []struct {
		name  string
		svc   *corev1.Service
		ep    func(string) discoveryv1.Endpoint
		addrs []string // the open flow's endpoint first
		snat  bool
	}{
		{"local endpoint with a host route, ClusterIP only", k8sService("a", "10.96.0.31"), local,
			[]string{"10.1.1.2", "10.1.1.3", "10.1.1.4"}, true},
		{"remote endpoint, NodePort: two translations track it", k8sService("c", "10.96.0.33", nodePortType(30133)), remote,
			[]string{"10.1.2.2", "10.1.2.3", "10.1.2.4"}, false},
		{"remote endpoint, ClusterIP only: the flow keeper holds it", k8sService("b", "10.96.0.32"), remote,
			[]string{"10.1.2.2", "10.1.2.3", "10.1.2.4"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, cluster{services: []*corev1.Service{c.svc}, slices: []*discoveryv1.EndpointSlice{k8sSlice(c.svc.Name, c.ep(c.addrs[0]))}})
			want := reaches(c.addrs[0] + ":8080")
			if c.snat {
				want = want.SNATAll()
			}
			open := e.Check(localPod, protoTCP, c.svc.Spec.ClusterIP+":80", want)
			data := func(when string) {
				t.Helper()
				tr := e.Node.Trace(fakevpp.Packet{Ingress: localPod.Ingress, Protocol: protoTCP, Src: open.In.Src, Dst: open.In.Dst, TCPFlags: 0x10})
				if tr.Verdict != fakevpp.Forward || tr.Out.Src != open.Out.Src || tr.Out.Dst != open.Out.Dst {
					t.Fatalf("open flow %s: %s to %s (%s), want it kept to %s\n%s", when, tr.Verdict, tr.Out.Dst, tr.Reason, open.Out.Dst, strings.Join(tr.Steps, "\n"))
				}
			}
			data("before any change")
			eps := []discoveryv1.Endpoint{c.ep(c.addrs[0])}
			for _, a := range c.addrs[1:] {
				eps = append(eps, c.ep(a))
				e.agent.proc.UpdateEndpointSlice(k8sSlice(c.svc.Name, eps...))
				data(fmt.Sprintf("after the scale-up to %d endpoints", len(eps)))
			}
			e.agent.proc.UpdateEndpointSlice(k8sSlice(c.svc.Name, c.ep(c.addrs[0])))
			data("after the scale-down to its own endpoint")
		})
	}
}
