package k8swatch

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/vppsvc/vppsvc/processor"
)

func TestLocalPod(t *testing.T) {
	w := New(fake.NewClientset(), nil, Options{NodeName: "node-a", PodInterface: podInterface, Logger: quietLogger()})
	lp, ok := w.localPod(pod("p", "node-a", "10.244.1.1", "fd00:244:1::1", "bogus"))
	require.True(t, ok)
	assert.Equal(t, processor.LocalPod{
		ID: processor.PodID{Namespace: "default", Name: "p"}, Interface: "tap-p",
		IPs: []netip.Addr{netip.MustParseAddr("10.244.1.1"), netip.MustParseAddr("fd00:244:1::1")},
	}, lp)

	legacy := pod("old", "node-a")
	legacy.Status.PodIP = "10.244.1.9"
	lp, ok = w.localPod(legacy)
	require.True(t, ok)
	assert.Equal(t, []netip.Addr{netip.MustParseAddr("10.244.1.9")}, lp.IPs)

	_, ok = w.localPod(pod("p", "node-b", "10.244.2.1"))
	assert.False(t, ok, "other node")
	failed := pod("p", "node-a", "10.244.1.1")
	failed.Status.Phase = corev1.PodFailed
	_, ok = w.localPod(failed)
	assert.False(t, ok, "finished")
}
