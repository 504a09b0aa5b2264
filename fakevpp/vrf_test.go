package fakevpp

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/binapi/nat_types"
)

// vrfNode is newEnv plus a pod VRF: tap5 in table 10 with 10.10.0.1/24,
// whose default route continues in table 0.
func vrfNode(t *testing.T) *env {
	e := newEnv(t)
	e.v.AddInterface("tap5")
	e.v.AddTable(10, false)
	require.Zero(t, e.v.SetInterfaceTable("tap5", 10, false))
	require.Zero(t, e.v.AddAddress("tap5", pfx("10.10.0.1/24")))
	require.True(t, e.v.AddRouteToTable(10, pfx("0.0.0.0/0"), 0))
	return e
}

func TestSetInterfaceTableRetvals(t *testing.T) {
	e := newEnv(t)
	v := e.v
	v.AddInterface("tap5")
	v.AddInterface("tap6")
	require.True(t, v.SetUnnumbered("tap6", "eth0"))
	for _, c := range []struct {
		name string
		id   uint32
		ip6  bool
		want api.VPPApiError
	}{
		{"tap5", 10, false, api.NO_SUCH_FIB},
		{"nope", 0, false, api.INVALID_SW_IF_INDEX},
		// ip_table_bind checks the addresses before it looks at the table.
		{"eth0", 0, false, api.ADDRESS_FOUND_FOR_INTERFACE},
	} {
		require.Equal(t, int32(c.want), v.SetInterfaceTable(c.name, c.id, c.ip6), "%s into %d", c.name, c.id)
	}
	v.AddTable(10, false)
	v.AddTable(10, true)
	require.Zero(t, v.SetInterfaceTable("tap5", 10, false))
	require.Equal(t, int32(api.ADDRESS_FOUND_FOR_INTERFACE), v.SetInterfaceTable("eth0", 10, false), "an address of the family")
	require.Equal(t, int32(api.ADDRESS_FOUND_FOR_INTERFACE), v.SetInterfaceTable("tap6", 10, false), "the donor's address")
	require.Zero(t, v.SetInterfaceTable("tap6", 10, true), "the donor has no IPv6 address")
	// The API's lock goes, tap5's keeps the table; moving tap5 out drops it.
	v.mu.Lock()
	v.delTable(10, false)
	v.mu.Unlock()
	require.Zero(t, v.SetInterfaceTable("tap5", 0, false))
	require.Equal(t, int32(api.NO_SUCH_FIB), v.SetInterfaceTable("tap5", 10, false))
}

func TestLookupPerTable(t *testing.T) {
	e := vrfNode(t)
	v := e.v
	v.AddRoute(pfx("10.1.1.2/32"), "tap0")
	requireForward(t, v.Trace(tcpSyn("tap5", "10.10.0.5:1000", "8.8.8.8:443")), "eth0", "10.10.0.5:1000", "8.8.8.8:443")
	// tap0's subnet is in table 0; the pod VRF reaches it through its
	// default route into table 0.
	requireForward(t, v.Trace(tcpSyn("tap5", "10.10.0.5:1001", "10.1.1.7:80")), "tap0", "10.10.0.5:1001", "10.1.1.7:80")
	// Table 0 does not know the pod subnet: its default route sends it
	// back out of eth0.
	requireForward(t, v.Trace(tcpSyn("eth0", "8.8.8.8:443", "10.10.0.5:1002")), "eth0", "8.8.8.8:443", "10.10.0.5:1002")
	if tr := v.Trace(tcpSyn("eth0", "8.8.8.8:443", "10.10.0.1:22")); tr.Verdict != Forward || tr.Egress != "eth0" {
		t.Errorf("tap5's address is not in table 0: %s via %s\n%s", tr.Verdict, tr.Egress, steps(tr))
	}
	require.True(t, v.AddRouteToTable(0, pfx("10.10.0.0/24"), 10))
	requireForward(t, v.Trace(tcpSyn("eth0", "8.8.8.8:443", "10.10.0.5:1003")), "tap5", "8.8.8.8:443", "10.10.0.5:1003")
	require.Equal(t, Local, v.Trace(tcpSyn("eth0", "8.8.8.8:443", "10.10.0.1:22")).Verdict)
	// A loop of tables ends in a drop.
	v.AddTable(11, false)
	require.True(t, v.AddRouteToTable(10, pfx("172.16.0.0/16"), 11))
	require.True(t, v.AddRouteToTable(11, pfx("172.16.0.0/16"), 10))
	requireDrop(t, v.Trace(tcpSyn("tap5", "10.10.0.5:1004", "172.16.1.1:80")), "no route")
	require.False(t, v.AddRouteToTable(10, pfx("0.0.0.0/0"), 99), "unknown next table")
	require.False(t, v.AddRouteIn(99, pfx("0.0.0.0/0"), "eth0"), "unknown table")
}

func TestAddressRetvals(t *testing.T) {
	v := newEnv(t).v
	v.AddTable(7, false)
	v.AddInterface("vrf7")
	require.Equal(t, int32(0), v.SetInterfaceTable("vrf7", 7, false))
	// An address overlapping any address in the same table is refused,
	// the same one again included (interfaces/loopback-delete-takes-with-it
	// records -105 from VPP); another address of the same subnet and
	// length on the same interface is not.
	for _, c := range []struct {
		ifName string
		add    bool
		p      string
		want   api.VPPApiError
	}{
		{"eth0", true, "203.0.113.1/24", 0},
		{"eth0", true, "203.0.113.1/24", api.ADDRESS_IN_USE},
		{"eth0", true, "203.0.113.1/25", api.ADDRESS_IN_USE},
		{"eth0", true, "203.0.113.2/24", 0},
		{"eth0", true, "203.0.113.3/25", api.ADDRESS_IN_USE},
		{"tap0", true, "203.0.113.4/24", api.ADDRESS_IN_USE},
		{"tap0", true, "203.0.0.1/16", api.ADDRESS_IN_USE},
		{"vrf7", true, "203.0.113.1/24", 0},
		{"eth0", true, "2001:db8::1/64", 0},
		{"eth0", true, "2001:db8::1/64", api.DUPLICATE_IF_ADDRESS},
		{"tap0", true, "2001:db8::2/64", api.DUPLICATE_IF_ADDRESS},
		{"eth0", false, "203.0.113.9/24", api.ADDRESS_NOT_FOUND_FOR_INTERFACE},
		{"eth0", false, "203.0.113.1/24", 0},
	} {
		var got int32
		if c.add {
			got = v.AddAddress(c.ifName, pfx(c.p))
		} else {
			got = v.DelAddress(c.ifName, pfx(c.p))
		}
		require.Equal(t, int32(c.want), got, "%s add %t %s", c.ifName, c.add, c.p)
	}
	require.Equal(t, int32(api.INVALID_SW_IF_INDEX), v.AddAddress("nope", pfx("1.2.3.4/32")))
}

// The pool follows the interface's first address; with a normal and a
// twice-NAT record on one interface only the normal one follows.
func TestNATPoolFollowsInterface(t *testing.T) {
	e := newEnv(t)
	e.standardNAT()
	e.v.AddInterface("eth1")
	pool := func() []string {
		var out []string
		n := e.v.nat()
		for _, a := range n.addrs {
			out = append(out, "n "+a.addr.String())
		}
		for _, a := range n.twiceAddrs {
			out = append(out, "t "+a.addr.String())
		}
		return out
	}
	ifAddr := func(add bool, flags nat_types.NatConfigFlags) error {
		_, err := e.nat.Nat44AddDelInterfaceAddr(e.ctx, &nat44_ed.Nat44AddDelInterfaceAddr{IsAdd: add, SwIfIndex: e.sw("eth1"), Flags: flags})
		return err
	}
	e.ok(ifAddr(true, nat_types.NAT_IS_TWICE_NAT))
	e.ok(ifAddr(true, 0))
	e.expect(api.VALUE_EXIST, ifAddr(true, 0))
	require.Equal(t, []string{"n 1.1.1.1"}, pool())
	require.Zero(t, e.v.AddAddress("eth1", pfx("203.0.113.1/24")))
	require.Equal(t, []string{"n 1.1.1.1", "n 203.0.113.1"}, pool())
	require.Zero(t, e.v.AddAddress("eth1", pfx("203.0.114.1/24")))
	require.Zero(t, e.v.DelAddress("eth1", pfx("203.0.113.1/24")))
	require.Equal(t, []string{"n 1.1.1.1"}, pool(), "the second address is not taken on a removal")
	// The record goes, but VPP then deletes the interface's first address
	// from the pool, which is not there: -6 (nat44_ed_del_interface_address).
	e.expect(api.NO_SUCH_ENTRY, ifAddr(false, 0))
	require.Equal(t, []string{"n 1.1.1.1"}, pool())
	e.expect(api.NO_SUCH_ENTRY, ifAddr(false, 0))
	require.Zero(t, e.v.AddAddress("eth1", pfx("203.0.113.1/24")))
	require.Equal(t, []string{"n 1.1.1.1", "t 203.0.113.1"}, pool(), "the twice-NAT record alone now")
}

func TestBihashBuckets(t *testing.T) {
	for sessions, want := range map[uint32]uint32{20000: 8192, 63 * 1024: 32768, 100: 32, 1: 2, 0: 2} {
		require.Equal(t, want, bihashBuckets(sessions), "%d sessions", sessions)
	}
}

// Deleting an interface deletes its addresses first: the pool address taken
// from it and the mapping resolved from it go, their records stay.
func TestNATInterfaceDeletedDropsItsAddresses(t *testing.T) {
	e := newEnv(t)
	e.standardNAT()
	e.v.AddInterface("eth1", pfx("203.0.113.1/24"))
	_, err := e.nat.Nat44AddDelInterfaceAddr(e.ctx, &nat44_ed.Nat44AddDelInterfaceAddr{IsAdd: true, SwIfIndex: e.sw("eth1")})
	e.ok(err)
	_, err = e.nat.Nat44AddDelStaticMappingV2(e.ctx, &nat44_ed.Nat44AddDelStaticMappingV2{IsAdd: true, Flags: nat_types.NAT_IS_OUT2IN_ONLY,
		LocalIPAddress: a4("10.1.1.2"), Protocol: tcp, LocalPort: 80, ExternalPort: 8080, ExternalSwIfIndex: e.sw("eth1")})
	e.ok(err)
	n := e.v.nat()
	require.Len(t, n.addrs, 2)
	require.NotNil(t, n.matchExternal(addr("203.0.113.1"), 8080, tcp))
	require.True(t, e.v.DeleteInterface("eth1"))
	require.Len(t, n.addrs, 1, "the pool address taken from eth1 is gone")
	require.Nil(t, n.matchExternal(addr("203.0.113.1"), 8080, tcp), "the mapping resolved from eth1 is gone")
	require.Len(t, n.addrResolve, 1, "the record stays")
	require.False(t, n.addrResolve[0].resolved)
}
