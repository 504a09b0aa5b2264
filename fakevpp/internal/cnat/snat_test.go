package cnat

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.fd.io/govpp/binapi/cnat"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip_types"
)

const (
	podIf    = 1
	upIf     = 2
	hostIf   = 3
	nodeSnat = "192.168.0.1"
)

func prefix(s string) ip_types.Prefix {
	pfx, err := ip_types.ParsePrefix(s)
	if err != nil {
		panic(err)
	}
	return pfx
}

func TestSnatHandlerRetvals(t *testing.T) {
	p := New(newIfs(podIf, upIf))
	ifReq := func(sw uint32, add uint8, table cnat.CnatSnatPolicyTable) int32 {
		return p.SnatPolicyAddDelIf(&cnat.CnatSnatPolicyAddDelIf{SwIfIndex: interface_types.InterfaceIndex(sw), IsAdd: add, Table: table}).Retval
	}
	pfxReq := func(add uint8, s string) int32 {
		return p.SnatPolicyAddDelExcludePfx(&cnat.CnatSnatPolicyAddDelExcludePfx{IsAdd: add, Prefix: prefix(s)}).Retval
	}
	polReq := func(pol cnat.CnatSnatPolicies) int32 {
		return p.SetSnatPolicy(&cnat.CnatSetSnatPolicy{Policy: pol}).Retval
	}
	tests := []struct {
		name string
		got  func() int32
		want int32
	}{
		{"if: unknown interface", func() int32 { return ifReq(999, 1, cnat.CNAT_POLICY_POD) }, -2},
		{"if: unknown interface checked before the table", func() int32 { return ifReq(999, 1, 4) }, -2},
		{"if: table 4", func() int32 { return ifReq(podIf, 1, 4) }, -7},
		{"if: add", func() int32 { return ifReq(podIf, 1, cnat.CNAT_POLICY_POD) }, 0},
		{"if: add again", func() int32 { return ifReq(podIf, 1, cnat.CNAT_POLICY_POD) }, 0},
		{"if: local0 exists", func() int32 { return ifReq(0, 1, cnat.CNAT_POLICY_HOST) }, 0},
		{"if: delete", func() int32 { return ifReq(podIf, 0, cnat.CNAT_POLICY_POD) }, 0},
		{"if: delete again", func() int32 { return ifReq(podIf, 0, cnat.CNAT_POLICY_POD) }, 0},
		{"pfx: add", func() int32 { return pfxReq(1, "10.0.0.0/8") }, 0},
		{"pfx: add again", func() int32 { return pfxReq(1, "10.0.0.0/8") }, 0},
		{"pfx: delete, host bits masked", func() int32 { return pfxReq(0, "10.1.2.3/8") }, 0},
		{"pfx: delete absent", func() int32 { return pfxReq(0, "10.0.0.0/8") }, 1},
		{"pfx: delete other length", func() int32 { pfxReq(1, "10.0.0.0/8"); return pfxReq(0, "10.0.0.0/16") }, 1},
		{"pfx: IPv6", func() int32 { return pfxReq(1, "fd00::/64") }, 0},
		{"policy NONE", func() int32 { return polReq(cnat.CNAT_POLICY_NONE) }, 0},
		{"policy IF_PFX", func() int32 { return polReq(cnat.CNAT_POLICY_IF_PFX) }, 0},
		{"policy K8S", func() int32 { return polReq(cnat.CNAT_POLICY_K8S) }, 0},
		{"policy 3", func() int32 { return polReq(3) }, 1},
		{"policy 255", func() int32 { return polReq(255) }, 1},
		{"set addresses", func() int32 {
			return p.SetSnatAddresses(&cnat.CnatSetSnatAddresses{SnatIP4: [4]byte{1, 2, 3, 4}, SwIfIndex: anyIfIdx}).Retval
		}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, tc.got()) })
	}
	assert.Equal(t, cnat.CNAT_POLICY_K8S, p.snat.policy, "an unknown policy leaves it unchanged")
}

func TestGetSnatAddresses(t *testing.T) {
	ifs := newIfs(upIf)
	p := New(ifs)
	assert.Equal(t, &cnat.CnatGetSnatAddressesReply{}, p.GetSnatAddresses(nil), "VPP starts with SwIfIndex 0")

	p.SetSnatAddresses(&cnat.CnatSetSnatAddresses{SnatIP4: [4]byte{192, 168, 0, 1}, SnatIP6: ip_types.IP6Address{0: 0xfd, 15: 1}, SwIfIndex: anyIfIdx})
	assert.Equal(t, &cnat.CnatGetSnatAddressesReply{
		SnatIP4: [4]byte{192, 168, 0, 1}, SnatIP6: ip_types.IP6Address{0: 0xfd, 15: 1}, SwIfIndex: anyIfIdx,
	}, p.GetSnatAddresses(nil))

	ifs.add(upIf, "192.168.0.7")
	p.SetSnatAddresses(&cnat.CnatSetSnatAddresses{SnatIP4: [4]byte{9, 9, 9, 9}, SwIfIndex: upIf})
	got := p.GetSnatAddresses(nil)
	assert.Equal(t, ip_types.IP4Address{192, 168, 0, 7}, got.SnatIP4, "taken from the interface")
	assert.Equal(t, ip_types.IP6Address{}, got.SnatIP6, "the literal is kept when the interface has no address of the family")
	assert.Equal(t, interface_types.InterfaceIndex(upIf), got.SwIfIndex)
}

// snatSetup: pod interface 1 and uplink 2 with cnat-snat-ip4, SNAT address
// 192.168.0.1.
func snatSetup(t *testing.T, policy cnat.CnatSnatPolicies) *Plugin {
	t.Helper()
	p := New(newIfs(podIf, upIf, hostIf))
	require.Equal(t, int32(0), p.SetSnatAddresses(&cnat.CnatSetSnatAddresses{SnatIP4: [4]byte{192, 168, 0, 1}, SwIfIndex: anyIfIdx}).Retval)
	require.Equal(t, int32(0), p.SetSnatPolicy(&cnat.CnatSetSnatPolicy{Policy: policy}).Retval)
	p.EnableSnatFeature(podIf, false, true)
	p.EnableSnatFeature(upIf, false, true)
	return p
}

// README.md#snat-policies: the policies decide which new flows are source-NATed.
func TestSnatPolicies(t *testing.T) {
	type setup func(p *Plugin)
	inTable := func(table cnat.CnatSnatPolicyTable, sws ...uint32) setup {
		return func(p *Plugin) {
			for _, sw := range sws {
				p.SnatPolicyAddDelIf(&cnat.CnatSnatPolicyAddDelIf{SwIfIndex: interface_types.InterfaceIndex(sw), IsAdd: 1, Table: table})
			}
		}
	}
	exclude := func(s string) setup {
		return func(p *Plugin) {
			p.SnatPolicyAddDelExcludePfx(&cnat.CnatSnatPolicyAddDelExcludePfx{IsAdd: 1, Prefix: prefix(s)})
		}
	}
	tests := []struct {
		name   string
		policy cnat.CnatSnatPolicies
		setup  []setup
		flow   Flow
		inIf   uint32
		snat   bool
	}{
		{"NONE: everything", cnat.CNAT_POLICY_NONE, nil, udpFlow("10.1.1.2:40000", "8.8.8.8:53"), podIf, true},
		{"NONE: even traffic to a VIP", cnat.CNAT_POLICY_NONE, nil, udpFlow("10.1.1.2:40000", "10.96.0.10:53"), podIf, true},
		{"IF_PFX: included interface", cnat.CNAT_POLICY_IF_PFX, []setup{inTable(cnat.CNAT_POLICY_INCLUDE_V4, podIf), exclude("10.0.0.0/8")}, udpFlow("10.1.1.2:40000", "8.8.8.8:53"), podIf, true},
		{"IF_PFX: excluded destination", cnat.CNAT_POLICY_IF_PFX, []setup{inTable(cnat.CNAT_POLICY_INCLUDE_V4, podIf), exclude("10.0.0.0/8")}, udpFlow("10.1.1.2:40000", "10.96.0.10:53"), podIf, false},
		{"IF_PFX: interface not included", cnat.CNAT_POLICY_IF_PFX, []setup{inTable(cnat.CNAT_POLICY_INCLUDE_V4, podIf)}, udpFlow("192.168.0.9:40000", "8.8.8.8:53"), upIf, false},
		{"IF_PFX: INCLUDE_V6 does not count for IPv4", cnat.CNAT_POLICY_IF_PFX, []setup{inTable(cnat.CNAT_POLICY_INCLUDE_V6, podIf)}, udpFlow("10.1.1.2:40000", "8.8.8.8:53"), podIf, false},
		{"K8S: included pod interface", cnat.CNAT_POLICY_K8S, []setup{inTable(cnat.CNAT_POLICY_POD, podIf), inTable(cnat.CNAT_POLICY_INCLUDE_V4, podIf)}, udpFlow("10.1.1.2:40000", "8.8.8.8:53"), podIf, true},
		{"K8S: pod interface, not included", cnat.CNAT_POLICY_K8S, []setup{inTable(cnat.CNAT_POLICY_POD, podIf)}, udpFlow("10.1.1.2:40000", "8.8.8.8:53"), podIf, false},
		{"K8S: pod reaching itself", cnat.CNAT_POLICY_K8S, []setup{inTable(cnat.CNAT_POLICY_POD, podIf)}, udpFlow("10.1.1.2:40000", "10.1.1.2:53"), podIf, true},
		{"K8S: from outside to a pod", cnat.CNAT_POLICY_K8S, []setup{inTable(cnat.CNAT_POLICY_POD, podIf)}, udpFlow("8.8.8.8:5353", "10.1.1.2:53"), upIf, true},
		{"K8S: from outside with the SNAT address as source", cnat.CNAT_POLICY_K8S, []setup{inTable(cnat.CNAT_POLICY_POD, podIf)}, udpFlow(nodeSnat+":5353", "10.1.1.2:53"), upIf, false},
		{"K8S: HOST table is about out_if, unknown on ip4-unicast", cnat.CNAT_POLICY_K8S, []setup{inTable(cnat.CNAT_POLICY_HOST, upIf, podIf, hostIf)}, udpFlow("8.8.8.8:5353", "10.1.1.2:53"), upIf, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := snatSetup(t, tc.policy)
			for _, s := range tc.setup {
				s(p)
			}
			r := p.Snat(tc.flow, tc.inIf, at(0))
			assert.Equal(t, tc.snat, r.SNAT, r.Steps)
			if !tc.snat {
				assert.Equal(t, Pass, r.Verdict)
				assert.Equal(t, tc.flow, r.Flow)
				return
			}
			assert.Equal(t, Forward, r.Verdict)
			assert.Equal(t, ap(nodeSnat+":49152"), r.Flow.Src)
			assert.Equal(t, tc.flow.Dst, r.Flow.Dst, "the destination is kept")
		})
	}
}

// README.md#snat-policies: the return traffic of a cnat-snat flow reaches VIP through the SNAT
// address, now a learned client, and is restored with a new lookup.
func TestSnatReturnTraffic(t *testing.T) {
	p := snatSetup(t, cnat.CNAT_POLICY_NONE)
	f := udpFlow("10.1.1.2:40000", "8.8.8.8:53")
	r := p.Snat(f, podIf, at(0))
	require.True(t, r.NewSession)
	assert.Equal(t, "cnat-snat: source 10.1.1.2:40000 → 192.168.0.1:49152 (new session)", r.Steps[0])
	rep := reply(r.Flow, 0)
	require.True(t, p.Routes(addr(nodeSnat)))
	back := p.VIP(rep, at(1))
	require.Equal(t, Forward, back.Verdict)
	assert.Equal(t, f.Dst, back.Flow.Src)
	assert.Equal(t, f.Src, back.Flow.Dst)
	assert.True(t, back.Relookup)

	// Next packet of the flow hits the session on the feature.
	again := p.Snat(f, podIf, at(2))
	assert.False(t, again.NewSession)
	assert.Equal(t, ap(nodeSnat+":49152"), again.Flow.Src)

	// Not enabled on the interface: untouched.
	r = p.Snat(udpFlow("10.1.1.3:40000", "8.8.8.8:53"), hostIf, at(0))
	assert.Equal(t, Pass, r.Verdict)
	assert.Empty(t, r.Steps)
}

func TestSnatICMPEchoAndSCTP(t *testing.T) {
	p := snatSetup(t, cnat.CNAT_POLICY_NONE)
	echo := Flow{Proto: protoICMP, ICMPType: ICMP4EchoRequest, Src: ap("10.1.1.2:77"), Dst: ap("8.8.8.8:77")}
	r := p.Snat(echo, podIf, at(0))
	require.Equal(t, Forward, r.Verdict)
	assert.Equal(t, ap(nodeSnat+":49152"), r.Flow.Src, "echo identifier allocated from the ICMP bitmap")
	assert.Equal(t, ap("8.8.8.8:49152"), r.Flow.Dst)
	pong := Flow{Proto: protoICMP, ICMPType: ICMP4EchoReply, Src: r.Flow.Dst, Dst: r.Flow.Src}
	back := p.VIP(pong, at(1))
	assert.Equal(t, ap("8.8.8.8:77"), back.Flow.Src)
	assert.Equal(t, ap("10.1.1.2:77"), back.Flow.Dst)

	r = p.Snat(Flow{Proto: protoSCTP, Src: ap("10.1.1.2:5000"), Dst: ap("8.8.8.8:5000")}, podIf, at(0))
	assert.Equal(t, Drop, r.Verdict)
	assert.Equal(t, "cnat: no more free ports", r.DropReason)
}

func TestSnatAddressPitfalls(t *testing.T) {
	t.Run("SwIfIndex 0 never resolves", func(t *testing.T) {
		p := New(newIfs(podIf))
		p.SetSnatAddresses(&cnat.CnatSetSnatAddresses{SnatIP4: [4]byte{192, 168, 0, 1}})
		p.EnableSnatFeature(podIf, false, true)
		r := p.Snat(udpFlow("10.1.1.2:40000", "8.8.8.8:53"), podIf, at(0))
		assert.Equal(t, Pass, r.Verdict)
		assert.Contains(t, violationMessages(p), "cnat SNAT addresses use SwIfIndex 0 (local0)")
	})
	t.Run("resolved stays resolved", func(t *testing.T) {
		p := snatSetup(t, cnat.CNAT_POLICY_NONE)
		p.SetSnatAddresses(&cnat.CnatSetSnatAddresses{SnatIP4: [4]byte{192, 168, 0, 2}})
		r := p.Snat(udpFlow("10.1.1.2:40000", "8.8.8.8:53"), podIf, at(0))
		assert.Equal(t, ap("192.168.0.2:49152"), r.Flow.Src, "VPP never clears the resolved flag")
	})
	t.Run("zero IPv6 address with SwIfIndex ~0 is used", func(t *testing.T) {
		p := snatSetup(t, cnat.CNAT_POLICY_NONE)
		p.EnableSnatFeature(podIf, true, true)
		r := p.Snat(udpFlow("[fd00::2]:40000", "[2001:db8::8]:53"), podIf, at(0))
		assert.Equal(t, ap("[::]:49152"), r.Flow.Src)
		assert.Contains(t, violationMessages(p), "cnat-snat translates sources to the unspecified address")
	})
	t.Run("interface address appears later", func(t *testing.T) {
		ifs := newIfs(podIf, upIf)
		p := New(ifs)
		p.SetSnatAddresses(&cnat.CnatSetSnatAddresses{SwIfIndex: upIf})
		p.EnableSnatFeature(podIf, false, true)
		f := udpFlow("10.1.1.2:40000", "8.8.8.8:53")
		assert.Equal(t, Pass, p.Snat(f, podIf, at(0)).Verdict)
		a := ifs.add(upIf, "192.168.0.9")
		p.InterfaceAddressChanged(upIf, a, true)
		assert.Equal(t, ap("192.168.0.9:49152"), p.Snat(f, podIf, at(0)).Flow.Src)
	})
}

// An ICMP error about a source-NATed echo is restored through the return
// entry: outer destination, and the embedded echo.
func TestSnatICMPErrorAboutEcho(t *testing.T) {
	p := snatSetup(t, cnat.CNAT_POLICY_NONE)
	echo := Flow{Proto: protoICMP, ICMPType: ICMP4EchoRequest, Src: ap("10.1.1.2:77"), Dst: ap("8.8.8.8:77")}
	sent := p.Snat(echo, podIf, at(0)).Flow
	ttl := Flow{Proto: protoICMP, ICMPType: ICMP4TimeExceeded, Src: ap("10.0.0.254:0"), Dst: netipAddrPort(sent.Src.Addr(), 0), Inner: &sent}
	r := p.VIP(ttl, at(1))
	require.Equal(t, Forward, r.Verdict, r.Steps)
	assert.Equal(t, addr("10.0.0.254"), r.Flow.Src.Addr())
	assert.Equal(t, addr("10.1.1.2"), r.Flow.Dst.Addr())
	assert.Equal(t, echo.Src, r.Flow.Inner.Src)
	assert.Equal(t, echo.Dst, r.Flow.Inner.Dst)
}

func TestExcludePrefixEdgeCases(t *testing.T) {
	p := New(nil)
	bad := prefix("10.0.0.0/8")
	bad.Address.Af = 5
	assert.Equal(t, int32(0), p.SnatPolicyAddDelExcludePfx(&cnat.CnatSnatPolicyAddDelExcludePfx{IsAdd: 1, Prefix: bad}).Retval)
	long := prefix("10.1.2.3/32")
	long.Len = 40
	assert.Equal(t, int32(0), p.SnatPolicyAddDelExcludePfx(&cnat.CnatSnatPolicyAddDelExcludePfx{IsAdd: 1, Prefix: long}).Retval)
	assert.True(t, p.excluded(addr("10.1.2.3")), "an IPv4 length above 32 matches like /32")
	assert.False(t, p.excluded(addr("10.1.2.4")))
	assert.Equal(t, []string{"cnat excluded prefix with an invalid address family", "cnat excluded prefix length out of range"}, violationMessages(p))
}
