package nodeagent

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// A pod's container becomes the netexec command line its args or ports say,
// as agnhost would read them.
func TestContainerArgs(t *testing.T) {
	for _, c := range []struct {
		name string
		ctr  []corev1.Container
		want []string
		port int
	}{
		{"no container", nil, []string{"netexec"}, 8080},
		{"agnhost args", []corev1.Container{{Args: []string{"netexec", "--http-port=9000", "--udp-port=9001"}}}, []string{"netexec", "--http-port=9000", "--udp-port=9001"}, 9000},
		{"ports only", []corev1.Container{{Ports: []corev1.ContainerPort{
			{ContainerPort: 81}, {ContainerPort: 53, Protocol: corev1.ProtocolUDP}, {ContainerPort: 82}, {ContainerPort: 54, Protocol: corev1.ProtocolUDP}}}},
			[]string{"netexec", "--http-port=81", "--udp-port=53"}, 81},
		{"bad args keep the default port", []corev1.Container{{Args: []string{"netexec", "--http-port=x"}}}, []string{"netexec", "--http-port=x"}, 8080},
	} {
		pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: c.ctr}}
		got := containerArgs(pod)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: args %q, want %q", c.name, got, c.want)
		}
		if p := httpPort(got); p != c.port {
			t.Errorf("%s: readiness port %d, want %d", c.name, p, c.port)
		}
	}
}
