package processor

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/vppsvc/vppsvc/internal/parallel"
	"github.com/vppsvc/vppsvc/model"
)

// TestParallelResyncEqualsOneByOne: a Resync large enough to convert its
// services on several goroutines gives the renderers the values, and
// counts the problems, that converting the services one at a time gives.
// make test runs it under -race.
func TestParallelResyncEqualsOneByOne(t *testing.T) {
	n := 3 * parallel.MinElements
	var snap Snapshot
	for i := range n {
		name := fmt.Sprintf("svc%d", i)
		vip := netip.AddrFrom4([4]byte{10, 96, byte(i >> 8), byte(i)})
		ports := []corev1.ServicePort{svcPort("http", corev1.ProtocolTCP, 80, int32(30000+i%2000))}
		if i%97 == 0 { // a port VPP cannot serve: one problem each
			ports = append(ports, svcPort("bad", corev1.ProtocolTCP, 0, 0))
		}
		snap.Services = append(snap.Services, makeService("ns", name, withType(corev1.ServiceTypeNodePort),
			withClusterIPs(vip.String()), withPorts(ports...)))
		backend := netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)})
		eps := []discoveryv1.Endpoint{makeEndpoint(backend.String(), onNode(thisNode))}
		if i%3 == 0 {
			eps = append(eps, makeEndpoint(backend.Next().String(), notReady))
		}
		snap.EndpointSlices = append(snap.EndpointSlices, makeSlice("ns", name+"-a", name,
			withSlicePorts(slicePort("http", corev1.ProtocolTCP, 8080)), withEndpoints(eps...)))
	}
	p, _ := newTestProcessor(t)
	r := newRecorder()
	p.RegisterRenderer("r", r)
	p.Resync(snap)

	node := p.nodeContext()
	problems := map[ProblemKey]uint64{}
	for i, svc := range snap.Services {
		want, probs := ConvertService(svc, snap.EndpointSlices[i:i+1], node)
		for _, pr := range probs {
			problems[pr.Key()]++
		}
		got := r.services[model.ServiceID{Namespace: "ns", Name: svc.Name}]
		if !assert.True(t, want.Equal(got), "%s: resync gave %v, one by one %v", svc.Name, got, want) {
			return
		}
	}
	require.NotEmpty(t, problems)
	assert.Equal(t, problems, p.Stats().InvalidSkipped)
	assert.Equal(t, n, p.Stats().Services)
}
