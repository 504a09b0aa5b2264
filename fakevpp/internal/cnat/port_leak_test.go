package cnat

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.fd.io/govpp/binapi/cnat"
)

// cnat_session_free hands the port in network byte order to cnat_free_port:
// the port stays taken, and the byte-swapped number is cleared instead.
func TestFreeAsVPPClearsTheByteSwappedPort(t *testing.T) {
	var a portAllocator
	for i := 0; i <= 0xC1C0-minSrcPort; i++ {
		_, ok := a.alloc(protoTCP)
		require.True(t, ok)
	}
	for _, c := range []struct {
		port, cleared uint16
		taken         bool
	}{
		{0xC000, 0x00C0, false}, // 49152: below the range, the port leaks
		{0xC0C0, 0xC0C0, true},  // equal bytes: the port itself
		{0xC1C0, 0xC0C1, true},  // another port of the range
	} {
		cleared, taken := a.freeAsVPP(protoTCP, c.port)
		assert.Equal(t, c.cleared, cleared, "port %#x", c.port)
		assert.Equal(t, c.taken, taken, "port %#x", c.port)
	}
	got, _ := a.alloc(protoTCP)
	assert.Equal(t, uint16(0xC0C0), got)
	got, _ = a.alloc(protoTCP)
	assert.Equal(t, uint16(0xC0C1), got, "0xC0C1 was freed by 0xC1C0, not by its own session")
}

// After 449 source-NATed flows, the flow holding port 0xC1C0 (49600)
// expires and frees 0xC0C1 (49345), which a live flow still holds: the
// violation names both, and the allocator hands that port out again.
func TestExpiryFreesALiveFlowsPort(t *testing.T) {
	p := New(nil)
	m := trans(vip20, udpProto, via(snatSrcIP, backendA))
	m.Translation.Flags = uint8(cnat.CNAT_TRANSLATION_ALLOC_PORT)
	mustUpdate(t, p, m)
	flow := func(i int) Flow { return udpFlow(fmt.Sprintf("%s:%d", clientIP, 10000+i), vip20) }
	for i := 0; i <= 0xC1C0-minSrcPort; i++ {
		require.Equal(t, Forward, p.VIP(flow(i), at(0)).Verdict)
	}
	live := 0xC0C1 - minSrcPort
	p.VIP(flow(live), at(20))
	p.Expire(at(31))
	assert.Len(t, p.SessionDump(), 2, "only the refreshed flow is left")
	assert.Equal(t, []string{"cnat frees another flow's source port"}, violationMessages(p))
	assert.Equal(t, ap(snatSrcIP+":49344"), p.VIP(flow(1000), at(32)).Flow.Src, "0xC0C0 freed itself")
	assert.Equal(t, ap(snatSrcIP+":49345"), p.VIP(flow(1001), at(32)).Flow.Src, "the live flow's port, handed out twice")
}
