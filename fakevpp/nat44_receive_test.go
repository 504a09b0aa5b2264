package fakevpp

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip_types"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/binapi/nat_types"
)

// An LB mapping's leaked receive entry survives the plugin's disable; a
// static mapping's goes with it.
func TestNATReceiveEntriesSurviveDisableOnlyWhenLeaked(t *testing.T) {
	e := newEnv(t)
	_, err := e.nat.Nat44EdPluginEnableDisable(e.ctx, &nat44_ed.Nat44EdPluginEnableDisable{Enable: true})
	assert.Equal(t, 0, int(rv(t, err)))
	lb := &nat44_ed.Nat44AddDelLbStaticMapping{IsAdd: true, Flags: nat_types.NAT_IS_OUT2IN_ONLY,
		ExternalAddr: ip_types.IP4Address{10, 96, 0, 50}, ExternalPort: 80, Protocol: 6, LocalNum: 2, Locals: []nat44_ed.Nat44LbAddrPort{
			{Addr: ip_types.IP4Address{10, 1, 1, 2}, Port: 8080, Probability: 1}, {Addr: ip_types.IP4Address{10, 1, 1, 3}, Port: 8080, Probability: 1}}}
	_, err = e.nat.Nat44AddDelLbStaticMapping(e.ctx, lb)
	assert.Equal(t, 0, int(rv(t, err)))
	_, err = e.nat.Nat44AddDelStaticMappingV2(e.ctx, &nat44_ed.Nat44AddDelStaticMappingV2{IsAdd: true, Flags: nat_types.NAT_IS_OUT2IN_ONLY,
		LocalIPAddress: ip_types.IP4Address{10, 1, 1, 4}, ExternalIPAddress: ip_types.IP4Address{10, 96, 0, 51},
		Protocol: 6, LocalPort: 8080, ExternalPort: 80, ExternalSwIfIndex: ^interface_types.InterfaceIndex(0)})
	assert.Equal(t, 0, int(rv(t, err)))
	_, err = e.nat.Nat44InterfaceAddDelFeature(e.ctx, &nat44_ed.Nat44InterfaceAddDelFeature{IsAdd: true, SwIfIndex: e.sw("eth0")})
	assert.Equal(t, 0, int(rv(t, err)))
	local := func(a string) bool { return e.v.natReceive(0, netip.MustParseAddr(a)) != nil }
	assert.True(t, local("10.96.0.50"), "eth0 made outside after the LB mapping registers it")
	assert.True(t, local("10.96.0.51"))

	lb.IsAdd = false
	_, err = e.nat.Nat44AddDelLbStaticMapping(e.ctx, lb)
	assert.Equal(t, 0, int(rv(t, err)))
	_, err = e.nat.Nat44EdPluginEnableDisable(e.ctx, &nat44_ed.Nat44EdPluginEnableDisable{})
	assert.Equal(t, 0, int(rv(t, err)))
	assert.True(t, local("10.96.0.50"), "the LB mapping's registration leaks through disable")
	assert.False(t, local("10.96.0.51"), "the static mapping's goes with it")
}
