package nodeagent

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Readiness follows the kubelet's thresholds: unready at first, ready after
// successThreshold successes in a row, unready after failureThreshold
// failures in a row (3 by default), a success resetting the failures.
func TestProbeThresholds(t *testing.T) {
	for _, c := range []struct {
		name    string
		probe   corev1.Probe
		results []bool
		ready   []bool
	}{
		{"defaults", corev1.Probe{}, []bool{true, false, false, true, false, false, false, true},
			[]bool{true, true, true, true, true, true, false, true}},
		{"success threshold 2", corev1.Probe{SuccessThreshold: 2}, []bool{true, true, false, false, false, true, true},
			[]bool{false, true, true, true, false, false, true}},
		{"failure threshold 1", corev1.Probe{FailureThreshold: 1}, []bool{false, true, false, true},
			[]bool{false, true, false, true}},
	} {
		st := &probeState{}
		for i, ok := range c.results {
			was := st.ready
			changed := st.record(ok, &c.probe)
			if st.ready != c.ready[i] || changed != (was != st.ready) {
				t.Errorf("%s: after result %d (%v) ready %v (changed %v), want %v", c.name, i, ok, st.ready, changed, c.ready[i])
			}
		}
	}
}

// A probe's port is a number, or the name of a container port.
func TestProbePort(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}}}}}
	for _, c := range []struct {
		port intstr.IntOrString
		want int
		ok   bool
	}{
		{intstr.FromInt32(81), 81, true},
		{intstr.FromString("http"), 8080, true},
		{intstr.FromString("nope"), 0, false},
		{intstr.FromInt32(0), 0, false},
		{intstr.FromInt32(70000), 70000, false},
	} {
		got, ok := probePort(pod, c.port)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("port %v: %d %v, want %d %v", c.port.String(), got, ok, c.want, c.ok)
		}
	}
}
