package dataplane_test

// Differential cases of NAT44-ED's per-user dumps: nat44_user_dump and the
// three generations of nat44_user_session_dump, all read from the one
// session table. A user is an (inside address, inside FIB) pair; each
// user-session dump lists every session of an inside address, expired
// ones included, whatever VRF the request names.

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"go.fd.io/govpp/binapi/ip_types"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/binapi/nat_types"

	"github.com/vppsvc/vppsvc/fakevpp"
)

// userSessionDumps records the v1, v2 and v3 session dumps of inside in
// VRF vrf, leaving out VPP's clock and the byte count (see sessions) and
// the twice-NAT port, which VPP draws at random.
func userSessionDumps(d *diffCase, label, inside string, vrf uint32) {
	d.t.Helper()
	a := ip_types.IP4Address(netip.MustParseAddr(inside).As4())
	omit := []string{"LastHeard", "TimeSinceLastHeard", "TotalBytes", "ExtHostNatPort"}
	Dump[*nat44_ed.Nat44UserSessionDetails](d, label+": user_session_dump", &nat44_ed.Nat44UserSessionDump{IPAddress: a, VrfID: vrf}, omit...)
	Dump[*nat44_ed.Nat44UserSessionV2Details](d, label+": user_session_v2_dump", &nat44_ed.Nat44UserSessionV2Dump{IPAddress: a, VrfID: vrf}, omit...)
	Dump[*nat44_ed.Nat44UserSessionV3Details](d, label+": user_session_v3_dump", &nat44_ed.Nat44UserSessionV3Dump{IPAddress: a, VrfID: vrf}, omit...)
}

func TestDiffUserDumps(t *testing.T) {
	// Dynamic sessions of two pods, a static-mapping session and a
	// twice-NAT one: which user each lands in, the static count, the
	// flags and twice-NAT address of each dump generation.
	runDifferential(t, "sessions/user-dumps", func(d *diffCase) {
		nat := natTopology(d)
		// UDP times out after 3 s: at least 2 s for the dumps before the
		// wait, whatever the second of VPP's clock (the fast paths and
		// dumps round expiry down to a whole second: docs/fakevpp.md,
		// "Session expiry"), short for the wait.
		setTimeouts(d, nat, 3, 60, 60, 60)
		_, err := nat.Nat44AddDelAddressRange(d.Ctx, &nat44_ed.Nat44AddDelAddressRange{IsAdd: true, VrfID: ^uint32(0), Flags: nat_types.NAT_IS_TWICE_NAT,
			FirstIPAddress: ip4a("192.168.16.200"), LastIPAddress: ip4a("192.168.16.200")})
		d.Retval("twice-NAT pool 192.168.16.200", err)
		for _, m := range []nat44_ed.Nat44AddDelStaticMappingV2{
			{Flags: nat_types.NAT_IS_OUT2IN_ONLY, LocalIPAddress: ip4a("10.1.1.3"), ExternalIPAddress: ip4a("192.168.16.1"), Protocol: 6, LocalPort: 8080, ExternalPort: 30080},
			{Flags: nat_types.NAT_IS_OUT2IN_ONLY | nat_types.NAT_IS_TWICE_NAT, LocalIPAddress: ip4a("10.1.1.4"), ExternalIPAddress: ip4a("192.168.16.1"), Protocol: 6, LocalPort: 8443, ExternalPort: 30443},
		} {
			m.IsAdd, m.ExternalSwIfIndex = true, noIf
			_, err := nat.Nat44AddDelStaticMappingV2(d.Ctx, &m)
			d.Retval("static mapping "+m.Flags.String(), err)
		}
		users(d, "users with no sessions")
		d.Trace("UDP from 10.1.1.2", fakevpp.Packet{Ingress: "tap2", Protocol: 17, Src: ap("10.1.1.2:5353"), Dst: ap("8.8.4.4:53")})
		d.Trace("TCP from 10.1.1.2", tcp("tap2", "10.1.1.2:40000", "8.8.8.8:443"))
		d.Trace("UDP from 10.1.1.5", fakevpp.Packet{Ingress: "tap2", Protocol: 17, Src: ap("10.1.1.5:5353"), Dst: ap("8.8.8.8:53")})
		d.Trace("TCP to the static mapping", tcp("uplink0", "198.51.100.7:1234", "192.168.16.1:30080"))
		// The twice-NAT source port is VPP's random draw: recorded is
		// where the packet went and from which address.
		tw := d.Node.Trace(tcp("uplink0", "198.51.100.7:1235", "192.168.16.1:30443"))
		d.Record("TCP to the twice-NAT mapping", fmt.Sprintf("%s via %s from %s to %s reply ok %t",
			tw.Verdict, tw.Egress, tw.Out.Src.Addr(), tw.Out.Dst, tw.ReplyOK))
		users(d, "users")
		userSessionDumps(d, "10.1.1.2 in VRF 0", "10.1.1.2", 0)
		userSessionDumps(d, "10.1.1.2 in VRF 77 (no such table)", "10.1.1.2", 77)
		userSessionDumps(d, "10.1.1.3 (static)", "10.1.1.3", 0)
		userSessionDumps(d, "10.1.1.4 (twice-NAT)", "10.1.1.4", 0)
		userSessionDumps(d, "192.168.16.1 (an outside address)", "192.168.16.1", 0)
		d.Wait(3500 * time.Millisecond)
		userSessionDumps(d, "10.1.1.2 3.5 s later: UDP timed out, still listed", "10.1.1.2", 0)
		users(d, "users 3.5 s later")
	})
}
