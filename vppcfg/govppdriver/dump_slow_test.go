package govppdriver

import (
	"context"
	"errors"
	"io"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.fd.io/govpp/binapi/nat44_ed"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
)

// A dump read by a reader that pauses (a GC, a busy machine) loses no
// object. govpp hands each reply to the reader through a buffer of 100 and,
// by default, drops a reply it cannot hand over within 100 ms: a dump of
// thousands of objects then silently misses some, and the layer takes
// present objects for missing (re-adding them) and stale ones for absent
// (never deleting them). Run on the real VPP too (dataplane.SocketEnv).
func TestDumpLosesNothingToASlowReader(t *testing.T) {
	n := newNode(t)
	d := connectNode(t, n)
	const mappings = 600
	ops := []driverapi.Op{create(&vppcfg.NAT44Global{}, "")}
	for i := range mappings {
		ops = append(ops, create(&vppcfg.NAT44StaticMapping{External: netip.AddrPortFrom(netip.MustParseAddr("1.1.2.1"), uint16(1000+i)),
			Protocol: vppcfg.ProtoUDP, Local: netip.AddrPortFrom(netip.MustParseAddr("10.1.2.1"), uint16(1000+i))}, "t"))
	}
	mustApply(t, d, ops...)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := nat44_ed.NewServiceClient(d.conn).Nat44StaticMappingDump(ctx, &nat44_ed.Nat44StaticMappingDump{})
	require.NoError(t, err)
	got := 0
	for {
		_, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		got++
		if got == 1 {
			// Longer than govpp's default hand-over wait, while VPP sends
			// the rest.
			time.Sleep(300 * time.Millisecond)
		}
	}
	require.Equal(t, mappings, got, "static mappings in the dump")
}
