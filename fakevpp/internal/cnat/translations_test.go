package cnat

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.fd.io/govpp/binapi/cnat"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip"
	"go.fd.io/govpp/binapi/ip_types"

	"github.com/vppsvc/vppsvc/fakevpp/internal/apiaddr"
)

func TestTranslationUpdateRetvals(t *testing.T) {
	badAf := func(ep cnat.CnatEndpoint) cnat.CnatEndpoint { ep.IfAf = 7; return ep }
	tests := []struct {
		name      string
		msg       *cnat.CnatTranslationUpdate
		retval    int32
		violation string
	}{
		{name: "valid", msg: trans(vip20, tcpProto, to(backendA))},
		{name: "protocol 0 (HOPOPT) is a known protocol", msg: trans(vip20, 0, to(backendA))},
		{name: "protocol 255 (RESERVED) is a known protocol", msg: trans(vip20, 255, to(backendA))},
		{name: "protocol 99 unknown", msg: trans(vip20, 99, to(backendA)), retval: -153},
		{name: "protocol 61 unknown", msg: trans(vip20, 61, to(backendA)), retval: -153},
		{name: "protocol 200 unknown", msg: trans(vip20, 200, to(backendA)), retval: -153},
		{name: "protocol checked before the empty path list", msg: trans(vip20, 99), retval: -153},
		{name: "empty path list", msg: trans(vip20, tcpProto), retval: -7, violation: "cnat translation with no paths"},
		{name: "path SrcEp bad IfAf", msg: trans(vip20, tcpProto, cnat.CnatEndpointTuple{SrcEp: badAf(ifEp(1, false, 0)), DstEp: lit(backendA)}), retval: -97},
		{name: "path DstEp bad IfAf", msg: trans(vip20, tcpProto, cnat.CnatEndpointTuple{SrcEp: lit("0.0.0.0"), DstEp: badAf(ifEp(1, false, 80))}), retval: -97},
		{name: "IfAf ignored for literal endpoints", msg: trans(vip20, tcpProto, cnat.CnatEndpointTuple{SrcEp: badAf(lit("0.0.0.0")), DstEp: badAf(lit(backendA))})},
		{name: "VIP bad IfAf", msg: func() *cnat.CnatTranslationUpdate {
			m := trans(vip20, tcpProto, to(backendA))
			m.Translation.Vip = badAf(ifEp(1, false, 80))
			return m
		}(), retval: -97},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := New(newIfs(1))
			r := p.TranslationUpdate(tc.msg)
			assert.Equal(t, tc.retval, r.Retval)
			if tc.retval != 0 {
				assert.Equal(t, noSuchID, r.ID)
				assert.Empty(t, p.TranslationDump(), "nothing is created on error")
			} else {
				assert.Equal(t, uint32(0), r.ID)
			}
			if tc.violation != "" {
				assert.Contains(t, violationMessages(p), tc.violation)
			} else {
				assert.Empty(t, p.Violations())
			}
		})
	}
}

func TestTranslationDelRetvals(t *testing.T) {
	p := New(nil)
	assert.Equal(t, int32(-6), p.TranslationDel(&cnat.CnatTranslationDel{ID: 0}).Retval)
	id := mustUpdate(t, p, trans(vip20, tcpProto, to(backendA)))
	assert.Equal(t, int32(-6), p.TranslationDel(&cnat.CnatTranslationDel{ID: id + 1}).Retval)
	assert.Equal(t, int32(-6), p.TranslationDel(&cnat.CnatTranslationDel{ID: noSuchID}).Retval)
	assert.Equal(t, int32(0), p.TranslationDel(&cnat.CnatTranslationDel{ID: id}).Retval)
	assert.Equal(t, int32(-6), p.TranslationDel(&cnat.CnatTranslationDel{ID: id}).Retval)
}

// README.md#translations-and-clients: IDs are reused LIFO; a purge frees them in ascending order, so
// the next IDs come out highest first; a restart starts again at 0.
func TestTranslationIDsLIFO(t *testing.T) {
	p := New(nil)
	vip := func(i int) string { return fmt.Sprintf("10.96.0.%d:80", i+1) }
	for i := 0; i < 3; i++ {
		assert.Equal(t, uint32(i), mustUpdate(t, p, trans(vip(i), tcpProto, to(backendA))))
	}
	require.Equal(t, int32(0), p.TranslationDel(&cnat.CnatTranslationDel{ID: 1}).Retval)
	require.Equal(t, int32(0), p.TranslationDel(&cnat.CnatTranslationDel{ID: 0}).Retval)
	assert.Equal(t, uint32(0), mustUpdate(t, p, trans(vip(10), tcpProto, to(backendA))))
	assert.Equal(t, uint32(1), mustUpdate(t, p, trans(vip(11), tcpProto, to(backendA))))
	assert.Equal(t, uint32(3), mustUpdate(t, p, trans(vip(12), tcpProto, to(backendA))))

	require.Equal(t, int32(0), p.SessionPurge(nil).Retval)
	var got []uint32
	for i := 0; i < 5; i++ {
		got = append(got, mustUpdate(t, p, trans(vip(20+i), tcpProto, to(backendA))))
	}
	assert.Equal(t, []uint32{3, 2, 1, 0, 4}, got)

	p.Reset()
	assert.Equal(t, uint32(0), mustUpdate(t, p, trans(vip(30), tcpProto, to(backendA))))
}

// Update in place (README.md#translations-and-clients).
func TestScenario14UpdateInPlace(t *testing.T) {
	p := New(nil)
	id := mustUpdate(t, p, trans(vip20, tcpProto, to(backendA), to(backendB)))

	// Open flows until one is pinned to A.
	var pinned Flow
	for port := 40000; port < 40100 && !pinned.Src.IsValid(); port++ {
		f := tcpFlow(fmt.Sprintf("%s:%d", clientIP, port), vip20, TCPSyn)
		r := p.VIP(f, at(0))
		require.Equal(t, Forward, r.Verdict)
		assert.ElementsMatch(t, []any{ap(backendA), ap(backendB)}, toAny(r.Candidates))
		if r.Flow.Dst == ap(backendA) {
			pinned = f
		}
	}
	require.True(t, pinned.Src.IsValid(), "no flow chose backend A")

	// Same VIP with B and C: same ID, the dump lists B and C.
	upd := trans(vip20, tcpProto, to(backendB), to(backendC))
	upd.Translation.LbType = cnat.CNAT_LB_TYPE_MAGLEV
	assert.Equal(t, id, mustUpdate(t, p, upd))
	dump := p.TranslationDump()
	require.Len(t, dump, 1)
	assert.Equal(t, id, dump[0].Translation.ID)
	require.Len(t, dump[0].Translation.Paths, 2)
	assert.Equal(t, lit(backendB).Addr, dump[0].Translation.Paths[0].DstEp.Addr)
	assert.Equal(t, lit(backendC).Addr, dump[0].Translation.Paths[1].DstEp.Addr)
	assert.Equal(t, cnat.CNAT_LB_TYPE_DEFAULT, dump[0].Translation.LbType, "LbType is kept from creation")

	// The open flow's session is found, but the route it stored was
	// released with the old paths: blackholed (seen on VPP 25.10).
	pinned.TCPFlags = TCPAck
	r := p.VIP(pinned, at(1))
	assert.Equal(t, Drop, r.Verdict)
	assert.Contains(t, r.DropReason, "blackholed")
	assert.True(t, r.Matched)
	assert.False(t, r.NewSession)

	// New 5-tuples go only to B or C.
	for port := 50000; port < 50100; port++ {
		r := p.VIP(tcpFlow(fmt.Sprintf("%s:%d", clientIP, port), vip20, TCPSyn), at(1))
		require.Equal(t, Forward, r.Verdict)
		assert.Contains(t, []any{ap(backendB), ap(backendC)}, any(r.Flow.Dst))
	}

	// No translation for :443 on an exclusive VIP: dropped.
	r = p.VIP(tcpFlow(clientIP+":40000", "10.96.0.20:443", TCPSyn), at(1))
	assert.Equal(t, Drop, r.Verdict)
	assert.Contains(t, r.DropReason, "no translation for port 443/TCP")

	assert.Equal(t, int32(0), p.TranslationDel(&cnat.CnatTranslationDel{ID: id}).Retval)
	assert.Equal(t, int32(-6), p.TranslationDel(&cnat.CnatTranslationDel{ID: id}).Retval)
}

func toAny[T any](l []T) []any {
	out := make([]any, len(l))
	for i, v := range l {
		out[i] = v
	}
	return out
}

// README.md#translations-and-clients, an existing key: Flags and paths are replaced, LbType and FlowHashConfig
// are not.
func TestUpdateKeepsLbTypeAndFlowHashConfig(t *testing.T) {
	p := New(nil)
	m := trans(vip20, tcpProto, via(snatSrcIP, backendA), via(snatSrcIP, backendB), via(snatSrcIP, backendC))
	m.Translation.LbType = cnat.CNAT_LB_TYPE_MAGLEV
	m.Translation.FlowHashConfig = ip.IP_API_V2_FLOW_HASH_SRC_IP | ip.IP_API_V2_FLOW_HASH_DST_IP
	m.Translation.Flags = uint8(cnat.CNAT_TRANSLATION_ALLOC_PORT)
	id := mustUpdate(t, p, m)

	r := p.VIP(tcpFlow(clientIP+":40000", vip20, TCPSyn), at(0))
	assert.Equal(t, ap(snatSrcIP+":49152"), r.Flow.Src, "ALLOC_PORT at creation")

	u := trans(vip20, tcpProto, via(snatSrcIP, backendA), via(snatSrcIP, backendB), via(snatSrcIP, backendC))
	u.Translation.LbType = cnat.CNAT_LB_TYPE_DEFAULT
	u.Translation.FlowHashConfig = 0
	u.Translation.Flags = 0
	assert.Equal(t, id, mustUpdate(t, p, u))

	tr := p.translations[id]
	assert.Equal(t, cnat.CNAT_LB_TYPE_MAGLEV, tr.lbType)
	assert.Equal(t, uint32(ip.IP_API_V2_FLOW_HASH_SRC_IP|ip.IP_API_V2_FLOW_HASH_DST_IP), tr.fhc)
	assert.Equal(t, cnat.CNAT_LB_TYPE_MAGLEV, p.TranslationDump()[0].Translation.LbType)

	// Flags were replaced: no port allocation any more.
	r = p.VIP(tcpFlow(clientIP+":40001", vip20, TCPSyn), at(0))
	assert.Equal(t, ap(snatSrcIP+":40001"), r.Flow.Src)
	// The flow-hash config still pins the client (SRC_IP|DST_IP).
	first := r.Flow.Dst
	for port := 40002; port < 40050; port++ {
		r := p.VIP(tcpFlow(fmt.Sprintf("%s:%d", clientIP, port), vip20, TCPSyn), at(0))
		assert.Equal(t, first, r.Flow.Dst)
	}
}

// CnatTranslationDump fields (README.md#dumps).
func TestTranslationDumpFields(t *testing.T) {
	ifs := newIfs(5)
	p := New(ifs)
	m := trans(vip20, udpProto,
		via(snatSrcIP, backendA),
		cnat.CnatEndpointTuple{SrcEp: lit("0.0.0.0"), DstEp: ifEp(5, false, 53), Flags: 2},
		cnat.CnatEndpointTuple{SrcEp: lit("0.0.0.0"), DstEp: lit(backendB), Flags: uint8(cnat.CNAT_EPT_NO_NAT)},
	)
	m.Translation.IsRealIP = 1
	m.Translation.Flags = uint8(cnat.CNAT_TRANSLATION_ALLOC_PORT)
	m.Translation.FlowHashConfig = ip.IP_API_V2_FLOW_HASH_SRC_IP
	m.Translation.LbType = cnat.CNAT_LB_TYPE_MAGLEV
	id := mustUpdate(t, p, m)

	want := cnat.CnatTranslation{
		Vip:     cnat.CnatEndpoint{Addr: lit(vip20).Addr, SwIfIndex: anyIfIdx, IfAf: ip_types.ADDRESS_IP4, Port: 80},
		ID:      id,
		IPProto: udpProto,
		LbType:  cnat.CNAT_LB_TYPE_MAGLEV,
		NPaths:  3,
		Paths: []cnat.CnatEndpointTuple{
			{DstEp: lit(backendA), SrcEp: lit(snatSrcIP), Flags: 1},
			// unresolved interface endpoint: zero address, internal flags (2 kept, not active)
			{DstEp: cnat.CnatEndpoint{SwIfIndex: 5, IfAf: ip_types.ADDRESS_IP4, Port: 53}, SrcEp: lit("0.0.0.0"), Flags: 2},
			// API NO_NAT (1) is the internal active bit: recomputed
			{DstEp: lit(backendB), SrcEp: lit("0.0.0.0"), Flags: 1},
		},
	}
	dump := p.TranslationDump()
	require.Len(t, dump, 1)
	assert.Equal(t, want, dump[0].Translation, "IsRealIP, Flags and FlowHashConfig are always 0 in the dump")

	// The address appears: the path becomes active (flags 2|1) and the dump shows it.
	a := ifs.add(5, "10.1.1.50")
	p.InterfaceAddressChanged(5, a, true)
	got := p.TranslationDump()[0].Translation.Paths[1]
	assert.Equal(t, uint8(3), got.Flags)
	assert.Equal(t, apiaddr.To(a), got.DstEp.Addr)
	assert.Equal(t, interface_types.InterfaceIndex(5), got.DstEp.SwIfIndex)
}

// README.md#translations-and-clients, IsRealIP=1: packets to the IP that match no translation follow normal
// forwarding; exclusivity is fixed when the IP is first seen.
func TestIsRealIPForwarding(t *testing.T) {
	p := New(nil)
	m := trans("192.168.0.1:80", tcpProto, to(backendA))
	m.Translation.IsRealIP = 1
	mustUpdate(t, p, m)
	// IsRealIP=0 later on another port does not make the IP exclusive.
	mustUpdate(t, p, trans("192.168.0.1:81", tcpProto, to(backendB)))

	tests := []struct {
		name    string
		flow    Flow
		verdict Verdict
		dst     string
	}{
		{"translated port 80", tcpFlow("8.8.8.8:5555", "192.168.0.1:80", TCPSyn), Forward, backendA},
		{"translated port 81", tcpFlow("8.8.8.8:5555", "192.168.0.1:81", TCPSyn), Forward, backendB},
		{"other port follows the FIB", tcpFlow("8.8.8.8:5555", "192.168.0.1:22", TCPSyn), Pass, "192.168.0.1:22"},
		{"other protocol follows the FIB", Flow{Proto: 47, Src: ap("8.8.8.8:0"), Dst: ap("192.168.0.1:0")}, Pass, "192.168.0.1:0"},
		{"ICMP echo follows the FIB", Flow{Proto: protoICMP, ICMPType: ICMP4EchoRequest, Src: ap("8.8.8.8:7"), Dst: ap("192.168.0.1:7")}, Pass, "192.168.0.1:7"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := p.VIP(tc.flow, at(0))
			assert.Equal(t, tc.verdict, r.Verdict, r.Steps)
			assert.Equal(t, ap(tc.dst), r.Flow.Dst)
		})
	}
	assert.True(t, p.IsVIP(addr("192.168.0.1")))

	// The other way round: exclusive first, IsRealIP=1 later keeps it exclusive.
	mustUpdate(t, p, trans("10.96.0.30:80", tcpProto, to(backendA)))
	m = trans("10.96.0.30:81", tcpProto, to(backendA))
	m.Translation.IsRealIP = 1
	mustUpdate(t, p, m)
	r := p.VIP(tcpFlow("8.8.8.8:5555", "10.96.0.30:22", TCPSyn), at(0))
	assert.Equal(t, Drop, r.Verdict)
}

// A VIP naming an interface that has no address yet cannot be found again by
// VPP's lookup: every update creates another translation.
func TestUnresolvedInterfaceVIPDuplicates(t *testing.T) {
	ifs := newIfs(7)
	p := New(ifs)
	m := trans(vip20, tcpProto, to(backendA))
	m.Translation.Vip = ifEp(7, false, 80)
	assert.Equal(t, uint32(0), mustUpdate(t, p, m))
	assert.Equal(t, uint32(1), mustUpdate(t, p, m))
	assert.Contains(t, violationMessages(p), "cnat translation update of an unresolved interface VIP creates a duplicate")
	d := p.TranslationDump()
	require.Len(t, d, 2)
	assert.Equal(t, ip_types.Address{}, d[0].Translation.Vip.Addr, "unresolved VIP address is zero")

	// The address appears: the VIP resolves and traffic is translated.
	a := ifs.add(7, "192.168.0.7")
	p.InterfaceAddressChanged(7, a, true)
	assert.Equal(t, apiaddr.To(a), p.TranslationDump()[0].Translation.Vip.Addr)
	r := p.VIP(tcpFlow("8.8.8.8:5555", "192.168.0.7:80", TCPSyn), at(0))
	assert.Equal(t, ap(backendA), r.Flow.Dst)

	// Once resolved, an update finds it again (same ID as the db entry).
	id := mustUpdate(t, p, m)
	assert.Contains(t, []uint32{0, 1}, id)

	// Losing the address leaks the old FIB entry in VPP 25.10.
	ifs.del(7, a)
	p.InterfaceAddressChanged(7, a, false)
	assert.True(t, p.Routes(a))
	assert.Contains(t, violationMessages(p), "cnat interface VIP lost its address")
}
