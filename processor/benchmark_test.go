package processor

import (
	"fmt"
	"testing"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/vppsvc/vppsvc/model"
)

// nopRenderer accepts every call; benchmarks measure the processor alone.
type nopRenderer struct{ calls int }

func (r *nopRenderer) AddService(*model.ContivService) error         { r.calls++; return nil }
func (r *nopRenderer) UpdateService(_, _ *model.ContivService) error { r.calls++; return nil }
func (r *nopRenderer) DeleteService(*model.ContivService) error      { r.calls++; return nil }
func (r *nopRenderer) UpdateNodePortServices(model.IPAddresses, []*model.ContivService) error {
	r.calls++
	return nil
}
func (r *nopRenderer) UpdateLocalFrontendIfs(_, _ model.Interfaces) error { r.calls++; return nil }
func (r *nopRenderer) UpdateLocalBackendIfs(_, _ model.Interfaces) error  { r.calls++; return nil }
func (r *nopRenderer) Resync(*model.ResyncEventData) error                { r.calls++; return nil }

// benchCluster builds n NodePort services with one slice of 10 endpoints
// each, spread over 100 nodes, plus those nodes and 100 local pods.
func benchCluster(n int) Snapshot {
	var s Snapshot
	for i := range n {
		name := fmt.Sprintf("svc-%d", i)
		s.Services = append(s.Services, makeService("bench", name,
			withClusterIPs(fmt.Sprintf("10.96.%d.%d", i/250, i%250+1)), withType(corev1.ServiceTypeNodePort),
			withPorts(svcPort("http", corev1.ProtocolTCP, 80, int32(30000+i%2000)))))
		s.EndpointSlices = append(s.EndpointSlices, benchSlice(i, -1))
	}
	for node := range 100 {
		s.Nodes = append(s.Nodes, makeNode(fmt.Sprintf("node-%d", node), fmt.Sprintf("192.168.%d.%d", node/250, node%250+1), "zone-a"))
	}
	for pod := range 100 {
		s.LocalPods = append(s.LocalPods, localPod(pod, fmt.Sprintf("10.244.0.%d", pod+1)))
	}
	return s
}

// benchSlice returns the slice of service i; endpoint notReadyIdx (if any)
// is not ready, which is the "one endpoint change" of the update benchmark.
func benchSlice(i, notReadyIdx int) *discoveryv1.EndpointSlice {
	eps := make([]discoveryv1.Endpoint, 10)
	for e := range eps {
		pod := i*10 + e
		eps[e] = makeEndpoint(fmt.Sprintf("10.%d.%d.%d", 128+pod/65536, pod/256%256, pod%256), onNode(fmt.Sprintf("node-%d", pod%100)))
		if e == notReadyIdx {
			notReady(&eps[e])
		}
	}
	return makeSlice("bench", fmt.Sprintf("svc-%d-abcde", i), fmt.Sprintf("svc-%d", i), withEndpoints(eps...))
}

func benchProcessor() (*Processor, *nopRenderer) {
	log := logrus.New()
	log.SetLevel(logrus.ErrorLevel)
	p := New(Config{NodeName: "node-0", FrontendInterfaces: []string{"uplink0"}, Logger: log})
	r := &nopRenderer{}
	p.RegisterRenderer("nop", r)
	return p, r
}

// BenchmarkProcessorColdSync measures the first Resync of 5,000 services with
// 10 endpoints each: the start-up cost of an agent.
func BenchmarkProcessorColdSync(b *testing.B) {
	snap := benchCluster(5000)
	b.ReportAllocs()
	for b.Loop() {
		p, _ := benchProcessor()
		p.Resync(snap)
	}
}

// BenchmarkProcessorColdSyncOneEndpoint is the first Resync of 50,000
// ClusterIP services with one endpoint each, the shape of the scale
// benchmarks' largest cold sync (internal/benchmarks): the processor's
// cost per service, with few endpoints to spread it.
func BenchmarkProcessorColdSyncOneEndpoint(b *testing.B) {
	const n = 50000
	var snap Snapshot
	for i := range n {
		name := fmt.Sprintf("svc%d", i)
		snap.Services = append(snap.Services, makeService("default", name,
			withClusterIPs(fmt.Sprintf("172.30.%d.%d", (i+1)/256, (i+1)%256)), withPorts(svcPort("p80", corev1.ProtocolTCP, 80, 0))))
		ep := makeEndpoint(fmt.Sprintf("10.%d.%d.%d", (i+1)/65536, (i+1)/256%256, (i+1)%256), onNode("node-0"))
		snap.EndpointSlices = append(snap.EndpointSlices, makeSlice("default", name+"-abcde", name,
			withSlicePorts(slicePort("p80", corev1.ProtocolTCP, 80)), withEndpoints(ep)))
	}
	snap.Nodes = append(snap.Nodes, makeNode("node-0", "192.168.0.1", "zone-a"))
	b.ReportAllocs()
	var p *Processor
	for b.Loop() {
		p, _ = benchProcessor()
		p.Resync(snap)
	}
	if got := p.Services(); len(got) != n || len(got[0].Ports) != 1 || len(got[0].Ports[0].Backends) != 1 {
		b.Fatalf("%d services rendered, the first %v; want %d with one backend each", len(got), got[0], n)
	}
}

// BenchmarkProcessorEndpointUpdate measures one endpoint turning not ready and
// back in an otherwise steady state. The cost must not depend on the number
// of services: compare the 1k and 10k cases.
func BenchmarkProcessorEndpointUpdate(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("services=%d", n), func(b *testing.B) {
			p, r := benchProcessor()
			p.Resync(benchCluster(n))
			// Touch 100 services spread over the state, each with two
			// versions of its slice, so that every event changes a value.
			const touched = 100
			var versions [touched][2]*discoveryv1.EndpointSlice
			for k := range touched {
				i := k * (n / touched)
				versions[k] = [2]*discoveryv1.EndpointSlice{benchSlice(i, 3), benchSlice(i, -1)}
			}
			before := r.calls
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				p.UpdateEndpointSlice(versions[(i/2)%touched][i%2])
				i++
			}
			if r.calls-before != i {
				b.Fatalf("%d events made %d renderer calls, want one each", i, r.calls-before)
			}
		})
	}
}
