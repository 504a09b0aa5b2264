package cnat

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// README.md#source-ports: lowest free port from 49152, per protocol, freed ports
// first, 16383 ports (65535 is never used), no allocator for SCTP.
func TestPortAllocator(t *testing.T) {
	var a portAllocator
	for want := uint16(49152); want < 49157; want++ {
		got, ok := a.alloc(protoTCP)
		require.True(t, ok)
		assert.Equal(t, want, got)
	}
	got, _ := a.alloc(protoUDP)
	assert.Equal(t, uint16(49152), got, "one bitmap per protocol")
	got, _ = a.alloc(protoICMP6)
	assert.Equal(t, uint16(49152), got)

	a.free(protoTCP, 49153)
	got, _ = a.alloc(protoTCP)
	assert.Equal(t, uint16(49153), got, "the lowest free port, not the next one")
	got, _ = a.alloc(protoTCP)
	assert.Equal(t, uint16(49157), got)

	_, ok := a.alloc(protoSCTP)
	assert.False(t, ok, "SCTP has no allocator")

	var b portAllocator
	var last uint16
	for i := 0; i < maxSrcPort-minSrcPort+1; i++ {
		last, ok = b.alloc(protoUDP)
		require.True(t, ok)
	}
	assert.Equal(t, uint16(65534), last)
	assert.Equal(t, 16383, b.inUse(protoUDP))
	_, ok = b.alloc(protoUDP)
	assert.False(t, ok, "exhausted")
	b.free(protoUDP, 60000)
	got, ok = b.alloc(protoUDP)
	assert.True(t, ok)
	assert.Equal(t, uint16(60000), got)
}
