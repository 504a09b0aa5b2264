package cnat

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.fd.io/govpp/binapi/cnat"

	"github.com/vppsvc/vppsvc/fakevpp/internal/apiaddr"
)

// README.md#endpoints: interface endpoints resolve when the interface gets an address and
// un-resolve (or move to the next address) when it loses it.
func TestInterfaceEndpointResolution(t *testing.T) {
	ifs := newIfs(5, 6)
	p := New(ifs)
	id := mustUpdate(t, p, trans(vip20, tcpProto,
		cnat.CnatEndpointTuple{SrcEp: lit("0.0.0.0"), DstEp: ifEp(5, false, 8080)},
		cnat.CnatEndpointTuple{SrcEp: ifEp(6, false, 0), DstEp: lit(backendB)},
	))
	flows := func() map[string]int {
		out := map[string]int{}
		for port := 40000; port < 40060; port++ {
			f := tcpFlow(fmt.Sprintf("%s:%d", clientIP, port), vip20, TCPSyn)
			r := p.VIP(f, at(0))
			out[fmt.Sprintf("%s %s %s", r.Verdict, r.Flow.Src.Addr(), r.Flow.Dst)]++
		}
		p.Expire(at(100))
		return out
	}
	assert.Equal(t, map[string]int{"drop 10.1.1.9 10.96.0.20:80": 60}, flows(), "no active path")

	a5 := ifs.add(5, "10.1.1.50")
	p.InterfaceAddressChanged(5, a5, true)
	assert.Equal(t, map[string]int{"forward 10.1.1.9 10.1.1.50:8080": 60}, flows())

	a6 := ifs.add(6, "10.0.0.6")
	p.InterfaceAddressChanged(6, a6, true)
	got := flows()
	assert.Len(t, got, 2)
	assert.Contains(t, got, "forward 10.0.0.6 10.1.1.3:8080", "source NAT to the interface address")

	// A second address does not move a resolved endpoint; losing the first
	// moves it to the remaining one.
	b5 := ifs.add(5, "10.1.1.51")
	p.InterfaceAddressChanged(5, b5, true)
	assert.Equal(t, apiaddr.To(a5), p.TranslationDump()[0].Translation.Paths[0].DstEp.Addr)
	ifs.del(5, a5)
	p.InterfaceAddressChanged(5, a5, false)
	assert.Equal(t, apiaddr.To(b5), p.TranslationDump()[0].Translation.Paths[0].DstEp.Addr)
	ifs.del(5, b5)
	p.InterfaceAddressChanged(5, b5, false)
	path := p.TranslationDump()[0].Translation.Paths[0]
	assert.Equal(t, uint8(0), path.Flags)
	require.Equal(t, []int{1}, p.translations[id].active)
	// An address of the other family changes nothing.
	p.InterfaceAddressChanged(6, ifs.add(6, "fd00::6"), true)
	assert.Equal(t, []int{1}, p.translations[id].active)
}

func TestDecodeEndpointPitfalls(t *testing.T) {
	tests := []struct {
		name      string
		ep        cnat.CnatEndpoint
		violation string
		resolved  bool
	}{
		{"literal", lit("10.1.1.5:80"), "", true},
		{"literal with SwIfIndex 0", func() cnat.CnatEndpoint { e := lit("10.1.1.5:80"); e.SwIfIndex = 0; return e }(), "cnat endpoint uses SwIfIndex 0 (local0)", false},
		{"zero value", cnat.CnatEndpoint{}, "cnat endpoint uses SwIfIndex 0 (local0)", false},
		{"literal with bad Af", func() cnat.CnatEndpoint { e := lit("10.1.1.5:80"); e.Addr.Af = 9; return e }(), "cnat endpoint with an invalid address family", true},
		{"interface", ifEp(5, true, 80), "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := New(newIfs(5))
			ep, rv := p.decodeEndpoint(tc.ep, "ep")
			require.Equal(t, int32(0), rv)
			p.resolve(&ep)
			assert.Equal(t, tc.resolved, ep.resolved)
			if tc.violation == "" {
				assert.Empty(t, p.Violations())
			} else {
				assert.Equal(t, []string{tc.violation}, violationMessages(p))
			}
		})
	}
}

// A path whose endpoints are of the other family than the VIP: VPP copies
// the raw ip46 value.
func TestMixedFamilyPath(t *testing.T) {
	p := New(nil)
	mustUpdate(t, p, trans("[fd00::20]:80", tcpProto, cnat.CnatEndpointTuple{SrcEp: lit("::"), DstEp: lit(backendA)}))
	assert.Contains(t, violationMessages(p), "cnat path mixes address families")
	r := p.VIP(tcpFlow("[fd00:2::9]:40000", "[fd00::20]:80", TCPSyn), at(0))
	assert.Equal(t, ap("[::10.1.1.2]:8080"), r.Flow.Dst)
}
