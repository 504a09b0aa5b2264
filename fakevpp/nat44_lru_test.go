package fakevpp

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.fd.io/govpp/binapi/nat44_ed"
)

// Each new session first frees at most one expired session: the head of
// the first list, in the order TCP transitory, UDP, other, ICMP, TCP
// established, that has expired (nat_lru_free_one). Expired sessions
// stay in the dump until then.
func TestLRUReclaimOnePerAllocation(t *testing.T) {
	e := newEnv(t)
	e.standardNAT()
	_, err := e.nat.NatSetTimeouts(e.ctx, &nat44_ed.NatSetTimeouts{UDP: 1, TCPEstablished: 7440, TCPTransitory: 1, ICMP: 60})
	e.ok(err)
	require.Equal(t, Forward, e.v.Trace(udpPkt("tap0", "10.1.1.2:1001", "8.8.8.8:53")).Verdict)
	require.Equal(t, Forward, e.v.Trace(tcpSyn("tap0", "10.1.1.2:2001", "8.8.8.8:80")).Verdict)
	e.v.Advance(2 * time.Second) // both expired, both still there
	protos := func() (udp, tcp int) {
		for _, s := range e.sessions("10.1.1.2") {
			switch s.Protocol {
			case 17:
				udp++
			case 6:
				tcp++
			}
		}
		return udp, tcp
	}
	u, tc := protos()
	require.Equal(t, [2]int{1, 1}, [2]int{u, tc})
	// One allocation: the transitory TCP session goes first, though older
	// UDP expired before it.
	require.Equal(t, Forward, e.v.Trace(udpPkt("tap0", "10.1.1.2:3001", "8.8.4.4:53")).Verdict)
	u, tc = protos()
	require.Equal(t, [2]int{2, 0}, [2]int{u, tc}, "the new UDP session and the old one")
	// The next frees the old UDP one; the first new one has not expired.
	require.Equal(t, Forward, e.v.Trace(udpPkt("tap0", "10.1.1.2:3002", "8.8.4.4:53")).Verdict)
	u, tc = protos()
	require.Equal(t, [2]int{2, 0}, [2]int{u, tc}, "the two new UDP sessions")
	for _, s := range e.sessions("10.1.1.2") {
		require.Equal(t, [4]byte{8, 8, 4, 4}, [4]byte(s.ExtHostAddress))
	}
}
