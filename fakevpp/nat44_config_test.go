package fakevpp

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/binapi/nat_types"
)

// Before enable (docs/fakevpp.md#nat44-ed-state-and-messages).
func TestNATBeforeEnable(t *testing.T) {
	e := newEnv(t)
	e.expect(api.UNSUPPORTED, e.natRole("tap0", true, nat_types.NAT_IS_INSIDE))
	_, err := e.nat.Nat44InterfaceAddDelFeature(e.ctx, &nat44_ed.Nat44InterfaceAddDelFeature{IsAdd: true, SwIfIndex: 999})
	e.expect(api.INVALID_SW_IF_INDEX, err)

	rng := &nat44_ed.Nat44AddDelAddressRange{FirstIPAddress: a4("1.1.1.1"), LastIPAddress: a4("1.1.1.1"), VrfID: ^uint32(0), IsAdd: true}
	_, err = e.nat.Nat44AddDelAddressRange(e.ctx, rng)
	e.expect(api.UNSUPPORTED, err)
	rng.IsAdd = false
	_, err = e.nat.Nat44AddDelAddressRange(e.ctx, rng)
	e.expect(api.NO_SUCH_ENTRY, err)

	_, err = e.nat.Nat44EdPluginEnableDisable(e.ctx, &nat44_ed.Nat44EdPluginEnableDisable{})
	e.expect(api.FEATURE_ALREADY_DISABLED, err)
	_, err = e.nat.Nat44EdPluginEnableDisable(e.ctx, &nat44_ed.Nat44EdPluginEnableDisable{Enable: true, Flags: nat44_ed.NAT44_IS_STATIC_MAPPING_ONLY})
	e.expect(api.UNSUPPORTED, err)

	_, err = e.nat.NatSetTimeouts(e.ctx, &nat44_ed.NatSetTimeouts{UDP: 10})
	e.ok(err)
	cfg, err := e.nat.Nat44ShowRunningConfig(e.ctx, &nat44_ed.Nat44ShowRunningConfig{})
	e.ok(err)
	assert.Zero(t, cfg.Sessions, "Sessions is 0 while disabled")
	assert.Equal(t, uint32(10), cfg.Timeouts.UDP)

	e.enableNAT()
	_, err = e.nat.Nat44EdPluginEnableDisable(e.ctx, &nat44_ed.Nat44EdPluginEnableDisable{Enable: true})
	e.expect(api.FEATURE_ALREADY_ENABLED, err)
	cfg, err = e.nat.Nat44ShowRunningConfig(e.ctx, &nat44_ed.Nat44ShowRunningConfig{})
	e.ok(err)
	assert.Equal(t, uint32(300), cfg.Timeouts.UDP, "enable resets the timeouts")
	assert.Equal(t, uint32(63*1024), cfg.Sessions)
	assert.Equal(t, nat44_ed.NAT44_IS_ENDPOINT_DEPENDENT, cfg.Flags)
}

func (e *env) natInterfaces() map[string]nat_types.NatConfigFlags {
	e.t.Helper()
	s, err := e.nat.Nat44InterfaceDump(e.ctx, &nat44_ed.Nat44InterfaceDump{})
	e.ok(err)
	out := map[string]nat_types.NatConfigFlags{}
	for _, d := range recvAll(e.t, s.Recv) {
		out[e.v.ifName(uint32(d.SwIfIndex))] = d.Flags
	}
	return out
}

// Interface roles (docs/fakevpp.md#nat44-ed-state-and-messages).
func TestNATInterfaceRoles(t *testing.T) {
	e := newEnv(t)
	e.enableNAT()
	e.ok(e.natRole("tap0", true, nat_types.NAT_IS_INSIDE))
	e.ok(e.natRole("tap0", true, nat_types.NAT_IS_INSIDE))
	e.ok(e.natRole("tap0", true, nat_types.NAT_IS_OUTSIDE))
	assert.Equal(t, map[string]nat_types.NatConfigFlags{"tap0": nat_types.NAT_IS_INSIDE | nat_types.NAT_IS_OUTSIDE}, e.natInterfaces())

	_, err := e.nat.Nat44EdAddDelOutputInterface(e.ctx, &nat44_ed.Nat44EdAddDelOutputInterface{IsAdd: true, SwIfIndex: e.sw("tap0")})
	e.expect(api.VALUE_EXIST, err)

	e.ok(e.natRole("tap0", false, 0))
	assert.Equal(t, map[string]nat_types.NatConfigFlags{"tap0": nat_types.NAT_IS_INSIDE}, e.natInterfaces())
	e.ok(e.natRole("tap0", false, nat_types.NAT_IS_INSIDE))
	assert.Empty(t, e.natInterfaces())
	e.expect(api.NO_SUCH_ENTRY, e.natRole("tap0", false, nat_types.NAT_IS_INSIDE))

	// INSIDE|OUTSIDE means inside; deleting the other role of a one-role
	// interface removes it anyway (flagged).
	e.ok(e.natRole("tap0", true, nat_types.NAT_IS_INSIDE|nat_types.NAT_IS_OUTSIDE))
	assert.Equal(t, map[string]nat_types.NatConfigFlags{"tap0": nat_types.NAT_IS_INSIDE}, e.natInterfaces())
	e.ok(e.natRole("tap0", false, nat_types.NAT_IS_OUTSIDE))
	assert.Empty(t, e.natInterfaces())
	assert.True(t, hasViolation(e.v, "NAT interface role delete mismatch"))
}

func TestNATOutputInterfaces(t *testing.T) {
	e := newEnv(t)
	e.enableNAT()
	get := func() ([]interface_types.InterfaceIndex, uint32) {
		s, err := e.nat.Nat44EdOutputInterfaceGet(e.ctx, &nat44_ed.Nat44EdOutputInterfaceGet{})
		e.ok(err)
		var out []interface_types.InterfaceIndex
		for {
			d, r, err := s.Recv()
			if r != nil {
				require.ErrorContains(t, err, "EOF")
				return out, r.Cursor
			}
			e.ok(err)
			out = append(out, d.SwIfIndex)
		}
	}
	list, cursor := get()
	assert.Empty(t, list)
	assert.Zero(t, cursor)

	add := &nat44_ed.Nat44EdAddDelOutputInterface{IsAdd: true, SwIfIndex: e.sw("eth0")}
	_, err := e.nat.Nat44EdAddDelOutputInterface(e.ctx, add)
	e.ok(err)
	_, err = e.nat.Nat44EdAddDelOutputInterface(e.ctx, add)
	e.expect(api.VALUE_EXIST, err)
	e.expect(api.VALUE_EXIST, e.natRole("eth0", true, nat_types.NAT_IS_OUTSIDE))
	list, cursor = get()
	assert.Equal(t, []interface_types.InterfaceIndex{e.sw("eth0")}, list)
	assert.Equal(t, ^uint32(0), cursor)
	assert.Empty(t, e.natInterfaces(), "output interfaces are not in the interface dump")

	// Deleting the interface drops its NAT records.
	require.True(t, e.v.DeleteInterface("eth0"))
	list, _ = get()
	assert.Empty(t, list)
	_, err = e.nat.Nat44EdAddDelOutputInterface(e.ctx, &nat44_ed.Nat44EdAddDelOutputInterface{SwIfIndex: add.SwIfIndex})
	e.expect(api.INVALID_SW_IF_INDEX, err)
}

func (e *env) addresses() []string {
	e.t.Helper()
	s, err := e.nat.Nat44AddressDump(e.ctx, &nat44_ed.Nat44AddressDump{})
	e.ok(err)
	var out []string
	for _, d := range recvAll(e.t, s.Recv) {
		x := ip4(d.IPAddress).String()
		if d.Flags&nat_types.NAT_IS_TWICE_NAT != 0 {
			x += " twice"
		}
		out = append(out, x)
	}
	return out
}

func TestNATAddressPools(t *testing.T) {
	e := newEnv(t)
	e.enableNAT()
	rng := func(first, last string, isAdd bool, flags nat_types.NatConfigFlags) error {
		_, err := e.nat.Nat44AddDelAddressRange(e.ctx, &nat44_ed.Nat44AddDelAddressRange{
			FirstIPAddress: a4(first), LastIPAddress: a4(last), VrfID: ^uint32(0), IsAdd: isAdd, Flags: flags})
		return err
	}
	e.ok(rng("1.1.1.1", "1.1.1.3", true, 0))
	e.ok(rng("1.1.1.1", "1.1.1.1", true, nat_types.NAT_IS_TWICE_NAT))
	e.expect(api.VALUE_EXIST, rng("1.1.1.3", "1.1.1.4", true, 0))
	assert.Equal(t, []string{"1.1.1.1", "1.1.1.2", "1.1.1.3", "1.1.1.1 twice"}, e.addresses(), "no rollback, stops at the duplicate")
	e.ok(rng("1.1.1.9", "1.1.1.8", true, 0))
	e.ok(rng("1.1.1.1", "1.1.1.1", false, 0))
	assert.Equal(t, []string{"1.1.1.3", "1.1.1.2", "1.1.1.1 twice"}, e.addresses(), "the last address moves into the freed slot")
	e.expect(api.NO_SUCH_ENTRY, rng("1.1.1.1", "1.1.1.1", false, 0))
}

func (e *env) staticDump() []*nat44_ed.Nat44StaticMappingDetails {
	e.t.Helper()
	s, err := e.nat.Nat44StaticMappingDump(e.ctx, &nat44_ed.Nat44StaticMappingDump{})
	e.ok(err)
	return recvAll(e.t, s.Recv)
}

// Duplicate and conflicting static mappings (docs/fakevpp.md#nat44-ed-state-and-messages).
func TestNATStaticMappingConflicts(t *testing.T) {
	e := newEnv(t)
	e.standardNAT()
	e.ok(e.static(true, "10.1.1.5:8080", "1.1.1.1:80", tcp, 0))
	e.expect(api.VALUE_EXIST, e.static(true, "10.1.1.6:8080", "1.1.1.1:80", tcp, 0))
	e.expect(api.VALUE_EXIST, e.static(true, "10.1.1.5:8080", "1.1.1.1:81", tcp, 0))
	e.ok(e.static(true, "10.1.1.5:8080", "1.1.1.1:81", tcp, nat_types.NAT_IS_OUT2IN_ONLY))
	e.expect(api.NO_SUCH_ENTRY, e.static(false, "10.1.1.5:8080", "1.1.1.1:99", tcp, 0))
	e.expect(api.UNSUPPORTED, e.static(true, "10.1.1.7:0", "1.1.1.7:0", 0, nat_types.NAT_IS_ADDR_ONLY|nat_types.NAT_IS_TWICE_NAT))
	assert.True(t, hasViolation(e.v, "ADDR_ONLY with TWICE_NAT"))

	// An LB mapping's key is taken too.
	e.ok(e.lb(true, "10.96.0.10:80", nat_types.NAT_IS_OUT2IN_ONLY, 0, local("10.1.1.2:8080", 50), local("10.1.1.3:8080", 50)))
	e.expect(api.VALUE_EXIST, e.static(true, "10.1.1.9:80", "10.96.0.10:80", tcp, 0))

	// ExternalSwIfIndex left 0 binds to local0: 0, pending forever, flagged.
	_, err := e.nat.Nat44AddDelStaticMappingV2(e.ctx, &nat44_ed.Nat44AddDelStaticMappingV2{IsAdd: true,
		LocalIPAddress: a4("10.1.1.8"), ExternalIPAddress: a4("1.1.1.8"), Protocol: tcp, LocalPort: 22, ExternalPort: 22})
	e.ok(err)
	assert.True(t, hasViolation(e.v, "mapping bound to local0"))
	dump := e.staticDump()
	require.Len(t, dump, 3)
	assert.Equal(t, interface_types.InterfaceIndex(0), dump[2].ExternalSwIfIndex)
	assert.Equal(t, "0.0.0.0", ip4(dump[2].ExternalIPAddress).String())
	requireDrop(t, e.v.Trace(tcpSyn("eth0", "8.8.8.8:1000", "1.1.1.8:22")), "no translation")
}

func TestNATStaticMappingDumpAndDelete(t *testing.T) {
	e := newEnv(t)
	e.standardNAT()
	e.ok(e.static(true, "10.1.1.5:8080", "1.1.1.1:80", tcp, nat_types.NAT_IS_TWICE_NAT))
	e.ok(e.static(true, "10.1.1.6:0", "1.1.1.6:0", 0, nat_types.NAT_IS_ADDR_ONLY))
	d := e.staticDump()
	require.Len(t, d, 2)
	assert.Equal(t, &nat44_ed.Nat44StaticMappingDetails{Flags: nat_types.NAT_IS_TWICE_NAT, LocalIPAddress: a4("10.1.1.5"),
		ExternalIPAddress: a4("1.1.1.1"), Protocol: tcp, LocalPort: 8080, ExternalPort: 80,
		ExternalSwIfIndex: ^interface_types.InterfaceIndex(0)}, d[0])
	assert.Equal(t, nat_types.NAT_IS_ADDR_ONLY, d[1].Flags)
	assert.Zero(t, d[1].Protocol)

	// Delete with other flags: found by external key, flagged.
	e.ok(e.static(false, "10.1.1.5:8080", "1.1.1.1:80", tcp, 0))
	assert.True(t, hasViolation(e.v, "mapping deleted with different flags"))
	e.ok(e.static(false, "10.1.1.6:0", "1.1.1.6:0", 0, nat_types.NAT_IS_ADDR_ONLY))
	assert.Empty(t, e.staticDump())
}

// Interface-bound mappings wait for the interface's address and are listed
// twice once resolved.
func TestNATInterfaceBoundMapping(t *testing.T) {
	e := newEnv(t)
	e.standardNAT()
	add := &nat44_ed.Nat44AddDelStaticMappingV2{IsAdd: true, LocalIPAddress: a4("10.1.1.5"), Protocol: tcp,
		LocalPort: 22, ExternalPort: 2222, ExternalSwIfIndex: 42, VrfID: ^uint32(0)}
	_, err := e.nat.Nat44AddDelStaticMappingV2(e.ctx, add)
	e.ok(err)
	_, err = e.nat.Nat44AddDelStaticMappingV2(e.ctx, add)
	e.expect(api.VALUE_EXIST, err)
	require.Len(t, e.staticDump(), 1, "pending record only")

	// Interfaces up to index 42 appear; the last one has an address.
	for i := 3; i < 42; i++ {
		e.v.AddInterface("dummy" + string(rune('a'+i)))
	}
	e.v.AddInterface("uplink2", pfx("203.0.113.5/24"))
	e.ok(e.natRole("uplink2", true, nat_types.NAT_IS_OUTSIDE))
	d := e.staticDump()
	require.Len(t, d, 2, "resolved: concrete mapping and record")
	assert.Equal(t, "203.0.113.5", ip4(d[0].ExternalIPAddress).String())
	assert.Equal(t, ^interface_types.InterfaceIndex(0), d[0].ExternalSwIfIndex)
	assert.Equal(t, interface_types.InterfaceIndex(42), d[1].ExternalSwIfIndex)

	e.v.AddRoute(pfx("198.51.100.0/24"), "uplink2")
	tr := e.v.Trace(tcpSyn("uplink2", "198.51.100.9:5000", "203.0.113.5:2222"))
	requireForward(t, tr, "tap0", "198.51.100.9:5000", "10.1.1.5:22")

	add.IsAdd = false
	_, err = e.nat.Nat44AddDelStaticMappingV2(e.ctx, add)
	e.ok(err)
	assert.Empty(t, e.staticDump())
}

func TestNATIdentityMapping(t *testing.T) {
	e := newEnv(t)
	e.standardNAT()
	id := func(isAdd bool, vrf uint32) error {
		_, err := e.nat.Nat44AddDelIdentityMapping(e.ctx, &nat44_ed.Nat44AddDelIdentityMapping{IsAdd: isAdd,
			IPAddress: a4("192.168.0.1"), Protocol: tcp, Port: 22, SwIfIndex: ^interface_types.InterfaceIndex(0), VrfID: vrf})
		return err
	}
	e.ok(id(true, 0))
	e.expect(api.VALUE_EXIST, id(true, 0))
	e.ok(id(true, 5))
	s, err := e.nat.Nat44IdentityMappingDump(e.ctx, &nat44_ed.Nat44IdentityMappingDump{})
	e.ok(err)
	d := recvAll(t, s.Recv)
	require.Len(t, d, 2, "one entry per VRF")
	assert.Equal(t, []uint32{0, 5}, []uint32{d[0].VrfID, d[1].VrfID})

	// A static mapping on the same key: -81 only if the VRF is taken; with
	// another VRF VPP silently merges it (flagged).
	e.expect(api.VALUE_EXIST, e.static(true, "10.1.1.5:22", "192.168.0.1:22", tcp, 0))
	_, err = e.nat.Nat44AddDelStaticMappingV2(e.ctx, &nat44_ed.Nat44AddDelStaticMappingV2{IsAdd: true,
		LocalIPAddress: a4("10.1.1.5"), ExternalIPAddress: a4("192.168.0.1"), Protocol: tcp, LocalPort: 22, ExternalPort: 22,
		ExternalSwIfIndex: ^interface_types.InterfaceIndex(0), VrfID: 7})
	e.ok(err)
	assert.True(t, hasViolation(e.v, "static mapping merged into identity mapping"))

	e.ok(id(false, 0))
	e.expect(api.NO_SUCH_ENTRY, id(false, 0))
}

func (e *env) lbDump() []*nat44_ed.Nat44LbStaticMappingDetails {
	e.t.Helper()
	s, err := e.nat.Nat44LbStaticMappingDump(e.ctx, &nat44_ed.Nat44LbStaticMappingDump{})
	e.ok(err)
	return recvAll(e.t, s.Recv)
}

// LB validation (docs/fakevpp.md#nat44-ed-state-and-messages).
func TestNATLBValidation(t *testing.T) {
	e := newEnv(t)
	e.standardNAT()
	const vip = "10.96.0.10:80"
	a, b, c := local("10.1.1.2:8080", 50), local("10.1.1.3:8080", 50), local("10.1.1.4:8080", 50)
	e.expect(api.INVALID_VALUE, e.lb(true, vip, nat_types.NAT_IS_OUT2IN_ONLY, 0, a))
	e.expect(api.NO_SUCH_ENTRY, e.lb(true, vip, 0, 0, a, b))
	e.ok(e.lb(true, vip, nat_types.NAT_IS_OUT2IN_ONLY, 10, a, b))
	e.expect(api.VALUE_EXIST, e.lb(true, vip, nat_types.NAT_IS_OUT2IN_ONLY, 0, a, b))
	e.ok(e.lb(true, "1.1.1.1:443", 0, 0, a, b))

	e.expect(api.UNSPECIFIED, e.lbLocal(false, vip, a))
	e.expect(api.NO_SUCH_ENTRY, e.lbLocal(false, vip, c))
	e.expect(api.VALUE_EXIST, e.lbLocal(true, vip, a))
	e.ok(e.static(true, "10.1.1.9:8080", "1.1.1.1:80", tcp, 0))
	e.expect(api.INVALID_VALUE, e.lbLocal(true, "1.1.1.1:80", c))
	e.expect(api.INVALID_VALUE, e.lb(false, "1.1.1.1:80", 0, 0))

	d := e.lbDump()
	require.Len(t, d, 2)
	assert.Equal(t, nat_types.NAT_IS_OUT2IN_ONLY, d[0].Flags)
	assert.Zero(t, d[0].Affinity, "VPP 25.10 never fills Affinity in the details")
	require.Len(t, d[0].Locals, 2)

	// A new local takes the most recently freed slot.
	e.ok(e.lbLocal(true, vip, c))
	e.ok(e.lbLocal(false, vip, a))
	e.ok(e.lbLocal(true, vip, local("10.1.1.5:8080", 50)))
	d = e.lbDump()
	var eps []string
	for _, l := range d[0].Locals {
		eps = append(eps, ip4(l.Addr).String())
	}
	assert.Equal(t, []string{"10.1.1.5", "10.1.1.3", "10.1.1.4"}, eps)

	e.ok(e.lb(false, vip, nat_types.NAT_IS_OUT2IN_ONLY, 0))
	e.expect(api.NO_SUCH_ENTRY, e.lb(false, vip, nat_types.NAT_IS_OUT2IN_ONLY, 0))
	assert.Len(t, e.lbDump(), 1)
}

// Disable deletes every object; timeouts stay until the next enable.
func TestNATDisableClearsEverything(t *testing.T) {
	e := newEnv(t)
	e.standardNAT()
	e.ok(e.static(true, "10.1.1.5:8080", "1.1.1.1:80", tcp, 0))
	requireForward(t, e.v.Trace(tcpSyn("eth0", "8.8.8.8:1000", "1.1.1.1:80")), "tap0", "8.8.8.8:1000", "10.1.1.5:8080")
	_, err := e.nat.Nat44ForwardingEnableDisable(e.ctx, &nat44_ed.Nat44ForwardingEnableDisable{Enable: true})
	e.ok(err)
	_, err = e.nat.Nat44EdPluginEnableDisable(e.ctx, &nat44_ed.Nat44EdPluginEnableDisable{})
	e.ok(err)
	e.enableNAT()
	assert.Empty(t, e.staticDump())
	assert.Empty(t, e.addresses())
	assert.Empty(t, e.natInterfaces())
	assert.Empty(t, e.sessions("10.1.1.5"))
	cfg, err := e.nat.Nat44ShowRunningConfig(e.ctx, &nat44_ed.Nat44ShowRunningConfig{})
	e.ok(err)
	assert.False(t, cfg.ForwardingEnabled)
}
