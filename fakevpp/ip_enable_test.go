package fakevpp

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.fd.io/govpp/api"
	interfaces "go.fd.io/govpp/binapi/interface"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip"
	"go.fd.io/govpp/binapi/nat_types"
)

// podEnv is newEnv plus an IPv6 uplink and an address-less pod tap, tap5,
// with the host routes a CNI installs (10.2.0.5 and fd00:2::5 via tap5).
func podEnv(t *testing.T) *env {
	t.Helper()
	v := New()
	v.AddInterface("eth0", pfx("192.168.0.1/24"), pfx("2001:db8::1/64"))
	v.AddInterface("tap0", pfx("10.1.1.1/24"))
	v.AddInterface("tap5")
	v.AddRoute(pfx("0.0.0.0/0"), "eth0")
	v.AddRoute(pfx("::/0"), "eth0")
	v.AddRoute(pfx("10.2.0.5/32"), "tap5")
	v.AddRoute(pfx("fd00:2::5/128"), "tap5")
	return connectEnv(t, v)
}

// A packet received on an interface without an address of its family is
// dropped by ip4-not-enabled / ip6-not-enabled, before the lookup.
func TestNotEnabledDrops(t *testing.T) {
	e := podEnv(t)
	tr := e.v.Trace(tcpSyn("tap5", "10.2.0.5:1000", "8.8.8.8:80"))
	requireDrop(t, tr, "ip4-not-enabled: IPv4 is not enabled on tap5")
	assert.Equal(t, []string{
		"ip4-input tap5: tcp 10.2.0.5:1000 → 8.8.8.8:80 [SYN]",
		"ip4-not-enabled: drop (IPv4 is not enabled on tap5: it has no IPv4 address and is not unnumbered)",
	}, tr.Steps)
	requireDrop(t, e.v.Trace(udpPkt("tap5", "[fd00:2::5]:1000", "[2001:db8::7]:53")), "ip6-not-enabled: IPv6 is not enabled on tap5")

	// tap0 has IPv4 only: IPv6 on it is dropped, IPv4 forwarded.
	requireDrop(t, e.v.Trace(udpPkt("tap0", "[fd00:1::2]:1000", "[2001:db8::7]:53")), "ip6-not-enabled: IPv6 is not enabled on tap0")
	requireForward(t, e.v.Trace(udpPkt("tap0", "10.1.1.2:1000", "8.8.8.8:53")), "eth0", "10.1.1.2:1000", "8.8.8.8:53")

	// Traffic towards the pod leaves through tap5 (the output side needs no
	// IP), but its reply is dropped on the way in.
	tr = e.v.Trace(tcpSyn("eth0", "8.8.8.8:1000", "10.2.0.5:80"))
	requireForward(t, tr, "tap5", "8.8.8.8:1000", "10.2.0.5:80")
	assert.False(t, tr.ReplyOK)
	assert.Contains(t, steps(tr), "(ip4-not-enabled: IPv4 is not enabled on tap5")
}

// Unnumbered to an interface with an address, the tap forwards both
// families, whatever families the donor has; removing it drops again.
func TestSetUnnumbered(t *testing.T) {
	e := podEnv(t)
	assert.False(t, e.v.SetUnnumbered("nope", "tap0"))
	assert.False(t, e.v.SetUnnumbered("tap5", "nope"))
	require.True(t, e.v.SetUnnumbered("tap5", "tap0"))

	tr := e.v.Trace(tcpSyn("tap5", "10.2.0.5:1000", "8.8.8.8:80"))
	requireForward(t, tr, "eth0", "10.2.0.5:1000", "8.8.8.8:80")
	assert.True(t, tr.ReplyOK)
	tr = e.v.Trace(udpPkt("tap5", "[fd00:2::5]:1000", "[2001:db8::7]:53"))
	requireForward(t, tr, "eth0", "[fd00:2::5]:1000", "[2001:db8::7]:53")
	assert.True(t, tr.ReplyOK, "IPv6 too, although tap0 has no IPv6 address")
	tr = e.v.Trace(tcpSyn("eth0", "8.8.8.8:1000", "10.2.0.5:80"))
	assert.True(t, tr.ReplyOK, steps(tr))
	assert.Contains(t, e.v.Dump(), "tap5 up unnumbered to tap0 startup\n")

	require.True(t, e.v.SetUnnumbered("tap5", ""))
	requireDrop(t, e.v.Trace(tcpSyn("tap5", "10.2.0.5:1000", "8.8.8.8:80")), "ip4-not-enabled")
	require.True(t, e.v.SetUnnumbered("tap5", ""), "removing twice is harmless")
	assert.NotContains(t, e.v.Dump(), "unnumbered")
}

// VPP orders ip4-not-enabled after the input ACL and NAT44-ED: the mapping
// translates the packet and creates its session, then the packet is dropped.
func TestNotEnabledAfterNAT(t *testing.T) {
	e := podEnv(t)
	e.v.AddInterface("eth1")
	e.enableNAT()
	e.ok(e.natRole("eth1", true, nat_types.NAT_IS_OUTSIDE))
	e.ok(e.natRole("tap0", true, nat_types.NAT_IS_INSIDE))
	e.pool("1.1.1.1", 0)
	e.ok(e.static(true, "10.1.1.5:8080", "1.1.1.1:80", tcp, 0))

	tr := e.v.Trace(tcpSyn("eth1", "8.8.8.8:1000", "1.1.1.1:80"))
	requireDrop(t, tr, "ip4-not-enabled: IPv4 is not enabled on eth1")
	assert.Equal(t, ap("10.1.1.5:8080"), tr.Out.Dst, "translated before the drop")
	s := steps(tr)
	assert.Less(t, strings.Index(s, "nat44-ed-out2in"), strings.Index(s, "ip4-not-enabled"), s)
	assert.Len(t, e.sessions("10.1.1.5"), 1, "the session exists although the packet was dropped")
}

// SwInterfaceSetUnnumbered: SwIfIndex is the donor, UnnumberedSwIfIndex the
// borrower; -2 for an unknown borrower, -10 for an unknown donor on add.
func TestSwInterfaceSetUnnumbered(t *testing.T) {
	e := podEnv(t)
	set := func(donor, borrower interface_types.InterfaceIndex, add bool) error {
		_, err := e.ifs.SwInterfaceSetUnnumbered(e.ctx, &interfaces.SwInterfaceSetUnnumbered{SwIfIndex: donor, UnnumberedSwIfIndex: borrower, IsAdd: add})
		return err
	}
	e.expect(api.INVALID_SW_IF_INDEX, set(e.sw("tap0"), 99, true))
	e.expect(api.INVALID_SW_IF_INDEX, set(99, 99, true)) // the borrower is checked first
	e.expect(api.INVALID_SW_IF_INDEX_2, set(99, e.sw("tap5"), true))
	requireDrop(t, e.v.Trace(tcpSyn("tap5", "10.2.0.5:1000", "8.8.8.8:80")), "ip4-not-enabled")

	e.ok(set(e.sw("tap0"), e.sw("tap5"), true))
	requireForward(t, e.v.Trace(tcpSyn("tap5", "10.2.0.5:1000", "8.8.8.8:80")), "eth0", "10.2.0.5:1000", "8.8.8.8:80")
	e.ok(set(e.sw("eth0"), e.sw("tap5"), true))
	assert.Contains(t, e.v.Dump(), "tap5 up unnumbered to eth0 startup\n", "setting it again changes the donor")

	e.ok(set(99, e.sw("tap5"), false)) // the donor is not checked on delete
	requireDrop(t, e.v.Trace(tcpSyn("tap5", "10.2.0.5:1000", "8.8.8.8:80")), "ip4-not-enabled")
	e.ok(set(99, e.sw("tap5"), false))
	assert.Equal(t, 7, e.v.Calls()["sw_interface_set_unnumbered"])
}

// SwInterfaceIP6EnableDisable enables IPv6 only, through the IPv6 link:
// -81 when the link exists (an address or an earlier enable) yet one more
// lock is taken, -62 when disabling without a link.
func TestSwInterfaceIP6EnableDisable(t *testing.T) {
	e := podEnv(t)
	ipc := ip.NewServiceClient(e.conn)
	en := func(name string, on bool) error {
		_, err := ipc.SwInterfaceIP6EnableDisable(e.ctx, &ip.SwInterfaceIP6EnableDisable{SwIfIndex: e.sw(name), Enable: on})
		return err
	}
	v6 := func() Trace { return e.v.Trace(udpPkt("tap5", "[fd00:2::5]:1000", "[2001:db8::7]:53")) }

	_, err := ipc.SwInterfaceIP6EnableDisable(e.ctx, &ip.SwInterfaceIP6EnableDisable{SwIfIndex: 99, Enable: true})
	e.expect(api.INVALID_SW_IF_INDEX, err)
	e.expect(api.IP6_NOT_ENABLED, en("tap5", false))

	e.ok(en("tap5", true))
	requireForward(t, v6(), "eth0", "[fd00:2::5]:1000", "[2001:db8::7]:53")
	requireDrop(t, e.v.Trace(tcpSyn("tap5", "10.2.0.5:1000", "8.8.8.8:80")), "ip4-not-enabled")
	assert.Contains(t, e.v.Dump(), "tap5 up ip6-enabled startup\n")
	e.expect(api.VALUE_EXIST, en("tap5", true))
	e.ok(en("tap5", false))
	requireForward(t, v6(), "eth0", "[fd00:2::5]:1000", "[2001:db8::7]:53")
	e.ok(en("tap5", false))
	requireDrop(t, v6(), "ip6-not-enabled")
	e.expect(api.IP6_NOT_ENABLED, en("tap5", false))

	// An IPv6 address holds the link: enabling answers -81; disabling drops
	// the address's lock, but the address itself keeps IPv6 enabled.
	e.expect(api.VALUE_EXIST, en("eth0", true))
	e.ok(en("eth0", false))
	e.ok(en("eth0", false))
	e.expect(api.IP6_NOT_ENABLED, en("eth0", false))
	tr := e.v.Trace(udpPkt("eth0", "[2001:db8::7]:53", "[fd00:2::5]:1000"))
	assert.Equal(t, Forward, tr.Verdict, steps(tr))
}

// Unnumbered settings made before the first connection are startup
// configuration and survive Restart; later changes do not.
func TestUnnumberedRestart(t *testing.T) {
	v := New()
	v.AddInterface("eth0", pfx("192.168.0.1/24"))
	v.AddInterface("tap0", pfx("10.1.1.1/24"))
	v.AddInterface("tap5")
	v.AddRoute(pfx("0.0.0.0/0"), "eth0")
	require.True(t, v.SetUnnumbered("tap5", "tap0"))
	e := connectEnv(t, v)
	v.AddInterface("tap6")
	require.True(t, v.SetStartup("tap6", true))
	require.True(t, v.SetUnnumbered("tap6", "tap0"))
	require.True(t, v.SetUnnumbered("tap5", "eth0"))
	_, err := ip.NewServiceClient(e.conn).SwInterfaceIP6EnableDisable(e.ctx, &ip.SwInterfaceIP6EnableDisable{SwIfIndex: e.sw("tap6"), Enable: true})
	e.ok(err)

	v.Restart()
	d := v.Dump()
	assert.Contains(t, d, "tap5 up unnumbered to tap0 startup\n", "the startup donor, not the later one")
	assert.Contains(t, d, "tap6 up startup\n", "set after the first connect: gone, as the API-enabled IPv6")
	requireForward(t, v.Trace(tcpSyn("tap5", "10.2.0.5:1", "8.8.8.8:80")), "eth0", "10.2.0.5:1", "8.8.8.8:80")
	requireDrop(t, v.Trace(tcpSyn("tap6", "10.2.0.6:1", "8.8.8.8:80")), "ip4-not-enabled")
	v.Restart()
	assert.Contains(t, v.Dump(), "tap5 up unnumbered to tap0 startup\n", "and every later restart")
}

// VPP keeps an unnumbered interface's donor index when the donor is deleted:
// IP stays enabled, and the next interface at that index becomes the donor.
func TestUnnumberedDonorDeleted(t *testing.T) {
	e := podEnv(t)
	e.v.AddInterface("host0", pfx("172.30.255.1/24"))
	require.True(t, e.v.SetUnnumbered("tap5", "host0"))
	require.True(t, e.v.DeleteInterface("host0"))
	assert.True(t, hasViolation(e.v, "unnumbered donor deleted"))
	requireForward(t, e.v.Trace(tcpSyn("tap5", "10.2.0.5:1", "8.8.8.8:80")), "eth0", "10.2.0.5:1", "8.8.8.8:80")
	e.v.AddInterface("other")
	assert.Contains(t, e.v.Dump(), "tap5 up unnumbered to other startup\n")
}
