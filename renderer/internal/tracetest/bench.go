package tracetest

import (
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/vppsvc/vppsvc/fakevpp"
)

// ToggleEndpoint is the loop of the end-to-end endpoint-change benchmarks:
// operation i adds extra to one of the slices slices[0], slices[stride],
// slices[2*stride], … (even i) or restores that slice (odd i), the slice
// chosen by spreading i over them, and hands it to update (the processor's
// UpdateEndpointSlice). It reports the VPP calls that changed state per
// operation as vpp-calls/op.
func ToggleEndpoint(b *testing.B, v *fakevpp.VPP, slices []*discoveryv1.EndpointSlice, stride int, extra discoveryv1.Endpoint, update func(*discoveryv1.EndpointSlice)) {
	n := (len(slices) + stride - 1) / stride
	v.ResetCalls()
	i := 0
	for b.Loop() {
		s := slices[stride*((i/2*7919)%n)].DeepCopy()
		if i%2 == 0 {
			s.Endpoints = append(s.Endpoints, extra)
		}
		update(s)
		i++
	}
	b.ReportMetric(float64(Writes(v))/float64(b.N), "vpp-calls/op")
}
