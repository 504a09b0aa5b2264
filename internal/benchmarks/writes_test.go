package benchmarks

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// serviceShape is one kind of service whose VPP writes
// BenchmarkServiceWrites counts.
type serviceShape struct {
	name  string
	shape func(*corev1.Service)
}

var serviceShapes = []serviceShape{
	{"clusterip", func(*corev1.Service) {}},
	{"clusterip-affinity", func(s *corev1.Service) { s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP }},
	{"nodeport", func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeNodePort
		s.Spec.Ports[0].NodePort = 30080
	}},
	{"nodeport-local", func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeNodePort
		s.Spec.Ports[0].NodePort = 30080
		s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	}},
	{"loadbalancer-ranges", func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeLoadBalancer
		s.Spec.Ports[0].NodePort = 30080
		s.Spec.LoadBalancerSourceRanges = []string{"203.0.113.0/24"}
		s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "198.51.100.10"}}
	}},
}

// BenchmarkServiceWrites counts the VPP calls of one service added and
// deleted again, per shape and IPv4 renderer (NAT44-ED or cnat), among
// 1,000 others (one of them a LoadBalancer with source ranges, so the
// filter ACLs are bound already), through the fake VPP: a TCP port with
// three endpoints, one on this node and two on node-2. It reports vpp-calls/add and
// vpp-calls/delete (ns/op is the pair's time), and logs the add's
// messages.
func BenchmarkServiceWrites(b *testing.B) {
	const others, eps = 1000, 3
	for _, r := range []struct {
		name    string
		useCNAT bool
	}{{"nat44", false}, {"cnat4", true}} {
		for _, sh := range serviceShapes {
			b.Run(r.name+"/"+sh.name, func(b *testing.B) {
				ag, _ := startFakeAgentWith(b, r.useCNAT)
				defer ag.stop()
				// One filtered service already binds the filter ACLs on the
				// frontend interfaces: the first one's bindings are the
				// filter's cost, not a service's.
				snap := snapshot(others, eps)
				filtered, fslice := Service(others+1), EndpointSlice(others+1, eps, 0)
				serviceShapes[len(serviceShapes)-1].shape(filtered)
				filtered.Spec.Ports[0].NodePort = 30081
				filtered.Status.LoadBalancer.Ingress[0].IP = "198.51.100.11"
				snap.Services, snap.EndpointSlices = append(snap.Services, filtered), append(snap.EndpointSlices, fslice)
				ag.proc.Resync(snap)
				svc, slice := Service(others), EndpointSlice(others, eps, 0)
				sh.shape(svc)
				remote := "node-2"
				for j := 1; j < len(slice.Endpoints); j++ {
					slice.Endpoints[j].NodeName = &remote
				}
				var adds, deletes uint64
				first := true
				for b.Loop() {
					before, byMsg := ag.calls(), ag.callsByMsg()
					ag.proc.UpdateEndpointSlice(slice)
					ag.proc.UpdateService(svc)
					mid := ag.calls()
					if first {
						b.Logf("add: %v", ag.callsSince(byMsg))
						first = false
					}
					ag.proc.DeleteService(svc.Namespace, svc.Name)
					ag.proc.DeleteEndpointSlice(slice.Namespace, slice.Name)
					adds += mid - before
					deletes += ag.calls() - mid
				}
				b.ReportMetric(float64(adds)/float64(b.N), "vpp-calls/add")
				b.ReportMetric(float64(deletes)/float64(b.N), "vpp-calls/delete")
			})
		}
	}
}

// callsByMsg is the number of requests the agent's driver has sent, by
// message name.
func (a *agent) callsByMsg() map[string]uint64 {
	out := map[string]uint64{}
	for _, s := range a.drv.CallStats() {
		out[s.Msg] += s.Calls
	}
	return out
}

// callsSince returns the messages sent since before, by name.
func (a *agent) callsSince(before map[string]uint64) map[string]uint64 {
	out := map[string]uint64{}
	for msg, n := range a.callsByMsg() {
		if d := n - before[msg]; d > 0 {
			out[msg] = d
		}
	}
	return out
}
