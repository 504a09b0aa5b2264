package processor

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/vppsvc/vppsvc/model"
)

func TestValidateLocalPod(t *testing.T) {
	pod := localPod(1, "fd00:244:1::1", "10.244.1.1")
	pod.IPs = append(pod.IPs, netip.Addr{})
	got, probs, ok := validateLocalPod(pod)
	assert.True(t, ok)
	assert.Equal(t, []netip.Addr{ip("10.244.1.1"), ip("fd00:244:1::1")}, got.IPs)
	assert.Equal(t, []ProblemKey{{KindLocalPod, "IPs[]"}}, problemKeys(probs))

	_, probs, ok = validateLocalPod(LocalPod{ID: PodID{Namespace: "default"}, Interface: "tap-1"})
	assert.False(t, ok)
	assert.Equal(t, []ProblemKey{{KindLocalPod, "ID.Name"}}, problemKeys(probs))

	_, probs, ok = validateLocalPod(LocalPod{ID: PodID{Namespace: "default", Name: "pod-1"}})
	assert.False(t, ok)
	assert.Equal(t, []ProblemKey{{KindLocalPod, "Interface"}}, problemKeys(probs))
}

func TestLocalPodCacheInterfaces(t *testing.T) {
	c := newLocalPodCache()
	assert.Equal(t, model.Interfaces{"host0", "uplink0"}, c.frontendIfs([]string{"uplink0", "host0", ""}))
	c.set(localPod(1, "10.244.1.1"))
	c.set(localPod(2, "10.244.1.2", "fd00:244:1::2"))
	assert.Equal(t, model.Interfaces{"host0", "tap-1", "tap-2", "uplink0"}, c.frontendIfs([]string{"uplink0", "host0"}))

	backends := map[netip.Addr]bool{ip("fd00:244:1::2"): true}
	isBackend := func(a netip.Addr) bool { return backends[a] }
	assert.Equal(t, model.Interfaces{"tap-2"}, c.backendIfs(isBackend), "one IP of a dual-stack pod is enough")

	assert.True(t, c.hasIP(ip("10.244.1.2")))
	c.set(localPod(2, "10.244.1.3")) // the pod got a new IP
	assert.False(t, c.hasIP(ip("10.244.1.2")))
	assert.True(t, c.hasIP(ip("10.244.1.3")))
	assert.Empty(t, c.backendIfs(isBackend))
	c.remove(PodID{Namespace: "default", Name: "pod-2"})
	assert.False(t, c.hasIP(ip("10.244.1.3")))
	assert.Equal(t, model.Interfaces{"tap-1"}, c.frontendIfs(nil))
}
