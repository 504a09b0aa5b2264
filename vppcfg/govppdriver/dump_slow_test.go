package govppdriver

import (
	"context"
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

	// drain is the path of every kind's dump; its reader pauses after the
	// first object, longer than govpp's default hand-over wait, while VPP
	// sends the rest.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	got := 0
	err := drain(d, "nat44_static_mapping_dump", func() (receiver[*nat44_ed.Nat44StaticMappingDetails], error) {
		return nat44_ed.NewServiceClient(d.conn).Nat44StaticMappingDump(ctx, &nat44_ed.Nat44StaticMappingDump{})
	}, func(*nat44_ed.Nat44StaticMappingDetails) {
		got++
		if got == 1 {
			time.Sleep(300 * time.Millisecond)
		}
	})
	require.NoError(t, err)
	require.Equal(t, mappings, got, "static mappings in the dump")
}
