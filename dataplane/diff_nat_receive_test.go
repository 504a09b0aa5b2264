package dataplane_test

// Differential case of NAT44-ED's receive entries: the external addresses
// it answers for become local /32 entries in the FIB of its outside
// interfaces (nat44_ed_add_fib_entry_reg), registered per address and
// interface with a count, by code paths that do not all undo each other:
// an LB mapping registers nothing when added or deleted, but an interface
// made outside registers every mapping, LB ones included, so an LB
// mapping's address stays local after the mapping is gone.

import (
	"strconv"
	"testing"

	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip_types"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/binapi/nat_types"
)

func TestDiffNATReceiveEntries(t *testing.T) {
	runDifferential(t, "nat44/receive-entries", func(d *diffCase) {
		nat := natTopology(d)
		lb := func(label string, add bool) {
			_, err := nat.Nat44AddDelLbStaticMapping(d.Ctx, &nat44_ed.Nat44AddDelLbStaticMapping{IsAdd: add, Flags: nat_types.NAT_IS_OUT2IN_ONLY,
				ExternalAddr: ip_types.IP4Address{10, 96, 0, 50}, ExternalPort: 80, Protocol: 6, LocalNum: 2, Locals: []nat44_ed.Nat44LbAddrPort{
					{Addr: ip_types.IP4Address{10, 1, 1, 2}, Port: 8080, Probability: 1}, {Addr: ip_types.IP4Address{10, 1, 1, 4}, Port: 8080, Probability: 1}}})
			d.Retval(label, err)
		}
		static := func(label string, add bool) {
			_, err := nat.Nat44AddDelStaticMappingV2(d.Ctx, &nat44_ed.Nat44AddDelStaticMappingV2{IsAdd: add, Flags: nat_types.NAT_IS_OUT2IN_ONLY,
				LocalIPAddress: ip_types.IP4Address{10, 1, 1, 3}, ExternalIPAddress: ip_types.IP4Address{10, 96, 0, 51},
				Protocol: 6, LocalPort: 8080, ExternalPort: 80, ExternalSwIfIndex: ^interface_types.InterfaceIndex(0)})
			d.Retval(label, err)
		}
		outside := func(label, ifName string, add bool) {
			_, err := nat.Nat44InterfaceAddDelFeature(d.Ctx, &nat44_ed.Nat44InterfaceAddDelFeature{IsAdd: add, SwIfIndex: d.Sw(ifName)})
			d.Retval(label, err)
		}
		probe := func(label string, port int) {
			d.Trace(label+": LB address, other port", tcp("tap2", "10.1.1.9:"+strconv.Itoa(port), "10.96.0.50:81"))
			d.Trace(label+": static address, other port", tcp("tap2", "10.1.1.9:"+strconv.Itoa(port+1), "10.96.0.51:81"))
		}

		lb("LB mapping 10.96.0.50:80", true)
		static("static mapping 10.96.0.51:80", true)
		probe("outside uplink0 before both", 41000)
		outside("host0 outside", "host0", true)
		probe("host0 made outside after both", 41010)
		lb("delete the LB mapping", false)
		probe("LB mapping deleted", 41020)
		outside("host0 no longer outside", "host0", false)
		probe("host0 no longer outside", 41030)
		static("delete the static mapping", false)
		probe("static mapping deleted", 41040)

		// The count an LB mapping left on host0 only comes down the other
		// way round: host0 made outside while no mapping holds the address,
		// an LB mapping for it added, host0 no longer outside. This also
		// leaves a scratch VPP as the case found it.
		outside("host0 outside again", "host0", true)
		lb("the LB mapping again", true)
		outside("host0 no longer outside again", "host0", false)
		probe("the leak undone", 41050)
		lb("delete the LB mapping again", false)
	})
}
