package processor

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLocalPodInterfaces(t *testing.T) {
	p, _ := newTestProcessor(t)
	p.UpdateLocalPod(localPod(1, "10.1.1.2", "fd00::2"))
	p.UpdateLocalPod(localPod(2, "10.1.1.3"))
	got := p.LocalPodInterfaces()
	assert.Equal(t, map[netip.Addr]string{ip("10.1.1.2"): localPod(1).Interface, ip("fd00::2"): localPod(1).Interface,
		ip("10.1.1.3"): localPod(2).Interface}, got)
	p.DeleteLocalPod(localPod(1).ID)
	assert.Equal(t, map[netip.Addr]string{ip("10.1.1.3"): localPod(2).Interface}, p.LocalPodInterfaces())
}
