package cnat

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.fd.io/govpp/binapi/cnat"
	"go.fd.io/govpp/binapi/ip"
	"go.fd.io/govpp/binapi/ip_types"
)

// cnat source NAT on the VIP path (README.md#the-vip-path, README.md#source-ports).
func TestScenario15SourceNAT(t *testing.T) {
	tests := []struct {
		name        string
		path        cnat.CnatEndpointTuple
		flags       cnat.CnatTranslationFlags
		wantSrc     []string // first and second flow, after translation
		snat        bool
		replyRoutes bool // replies reach cnat (a return session and client exist)
	}{
		{
			name: "SrcEp with ALLOC_PORT", path: via(snatSrcIP, backendA), flags: cnat.CNAT_TRANSLATION_ALLOC_PORT,
			wantSrc: []string{snatSrcIP + ":49152", snatSrcIP + ":49153"}, snat: true, replyRoutes: true,
		},
		{
			name: "SrcEp without ALLOC_PORT keeps the port", path: via(snatSrcIP, backendA),
			wantSrc: []string{snatSrcIP + ":40000", snatSrcIP + ":40001"}, snat: true, replyRoutes: true,
		},
		{
			name: "fixed SrcEp port wins over ALLOC_PORT", path: via(snatSrcIP+":7000", backendA), flags: cnat.CNAT_TRANSLATION_ALLOC_PORT,
			wantSrc: []string{snatSrcIP + ":7000", snatSrcIP + ":7000"}, snat: true, replyRoutes: true,
		},
		{
			name: "SrcEp 0.0.0.0: no SNAT, ALLOC_PORT ignored", path: to(backendA), flags: cnat.CNAT_TRANSLATION_ALLOC_PORT,
			wantSrc: []string{clientIP + ":40000", clientIP + ":40001"}, replyRoutes: true,
		},
		{
			name: "NO_RETURN_SESSION with SNAT", path: via(snatSrcIP, backendA),
			flags:   cnat.CNAT_TRANSLATION_ALLOC_PORT | cnat.CNAT_TRANSLATION_NO_RETURN_SESSION,
			wantSrc: []string{snatSrcIP + ":49152", snatSrcIP + ":49153"}, snat: true,
		},
		{
			name: "NO_RETURN_SESSION without SNAT", path: to(backendA), flags: cnat.CNAT_TRANSLATION_NO_RETURN_SESSION,
			wantSrc: []string{clientIP + ":40000", clientIP + ":40001"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := New(nil)
			m := trans(vip20, tcpProto, tc.path)
			m.Translation.Flags = uint8(tc.flags)
			mustUpdate(t, p, m)
			var out []Flow
			for i, want := range tc.wantSrc {
				f := tcpFlow(fmt.Sprintf("%s:%d", clientIP, 40000+i), vip20, TCPSyn)
				r := p.VIP(f, at(0))
				require.Equal(t, Forward, r.Verdict, r.Steps)
				assert.True(t, r.NewSession)
				assert.Equal(t, tc.snat, r.SNAT)
				assert.Equal(t, ap(want), r.Flow.Src)
				assert.Equal(t, ap(backendA), r.Flow.Dst)
				assert.Equal(t, fmt.Sprintf("cnat-vip: %s → %s (new session)", vip20, backendA), r.Steps[0])
				out = append(out, r.Flow)
			}
			if tc.wantSrc[0] == tc.wantSrc[1] {
				// Same return key: VPP keeps the first flow's entry.
				r := p.VIP(reply(out[1], TCPSyn|TCPAck), at(1))
				assert.Equal(t, ap(fmt.Sprintf("%s:%d", clientIP, 40000)), r.Flow.Dst, "replies follow the flow owning the return entry")
				return
			}
			for i, o := range out {
				rep := reply(o, TCPSyn|TCPAck)
				assert.Equal(t, tc.replyRoutes, p.Routes(rep.Dst.Addr()))
				r := p.VIP(rep, at(1))
				if !tc.replyRoutes {
					assert.Equal(t, Pass, r.Verdict)
					assert.Equal(t, rep, r.Flow, "replies are not translated")
					continue
				}
				require.Equal(t, Forward, r.Verdict)
				assert.True(t, r.Matched)
				assert.Equal(t, ap(vip20), r.Flow.Src)
				assert.Equal(t, ap(fmt.Sprintf("%s:%d", clientIP, 40000+i)), r.Flow.Dst)
				assert.Equal(t, tc.snat, r.Relookup, "return of a SNATed flow is looked up again")
			}
		})
	}
}

// cnat pitfalls: a zero SwIfIndex and a purge (README.md#endpoints, README.md#translations-and-clients).
func TestScenario16Pitfalls(t *testing.T) {
	local0 := cnat.CnatEndpointTuple{SrcEp: lit("0.0.0.0"), DstEp: lit("10.1.1.5:8080")}
	local0.DstEp.SwIfIndex = 0

	t.Run("SwIfIndex 0 endpoint is unresolved and never used", func(t *testing.T) {
		p := New(newIfs())
		mustUpdate(t, p, trans(vip20, tcpProto, local0, to(backendB)))
		d := p.TranslationDump()[0].Translation.Paths[0]
		assert.Equal(t, uint8(0), d.Flags)
		assert.Equal(t, ip_types.Address{}, d.DstEp.Addr)
		assert.Contains(t, violationMessages(p), "cnat endpoint uses SwIfIndex 0 (local0)")
		for port := 40000; port < 40100; port++ {
			r := p.VIP(tcpFlow(fmt.Sprintf("%s:%d", clientIP, port), vip20, TCPSyn), at(0))
			require.Equal(t, ap(backendB), r.Flow.Dst)
			assert.Equal(t, []netip.AddrPort{ap(backendB)}, r.Candidates)
		}
	})
	t.Run("zero-value SrcEp makes the path inactive", func(t *testing.T) {
		p := New(newIfs())
		mustUpdate(t, p, trans(vip20, tcpProto, cnat.CnatEndpointTuple{DstEp: lit(backendA)}))
		assert.Equal(t, uint8(0), p.TranslationDump()[0].Translation.Paths[0].Flags)
		r := p.VIP(tcpFlow(clientIP+":40000", vip20, TCPSyn), at(0))
		assert.Equal(t, Drop, r.Verdict)
		assert.Contains(t, r.DropReason, "has no active path")
		assert.True(t, r.Matched)
	})
	t.Run("SessionPurge empties the translations", func(t *testing.T) {
		p := New(nil)
		mustUpdate(t, p, trans(vip20, tcpProto, to(backendA)))
		mustUpdate(t, p, trans("10.96.0.21:80", tcpProto, via(snatSrcIP, backendA)))
		p.VIP(tcpFlow(clientIP+":40000", vip20, TCPSyn), at(0))
		p.VIP(tcpFlow(clientIP+":40000", "10.96.0.21:80", TCPSyn), at(0))
		require.Len(t, p.SessionDump(), 4)
		assert.Equal(t, int32(0), p.SessionPurge(&cnat.CnatSessionPurge{}).Retval)
		assert.Empty(t, p.TranslationDump())
		assert.Empty(t, p.SessionDump())
		for _, a := range []string{"10.96.0.20", "10.96.0.21", clientIP, snatSrcIP} {
			assert.False(t, p.Routes(addr(a)), a)
		}
	})
}

// README.md#translations-and-clients: sessions outlive a deleted translation until they expire, and while
// they exist the exclusive VIP keeps dropping new flows. Their forward
// direction is blackholed: the route they stored went with the
// translation's paths (seen on VPP 25.10); replies still translate.
func TestSessionsAfterDelete(t *testing.T) {
	p := New(nil)
	id := mustUpdate(t, p, trans(vip20, tcpProto, to(backendA)))
	f := tcpFlow(clientIP+":40000", vip20, TCPSyn)
	first := p.VIP(f, at(0))
	require.Equal(t, ap(backendA), first.Flow.Dst)
	require.Equal(t, int32(0), p.TranslationDel(&cnat.CnatTranslationDel{ID: id}).Retval)

	f.TCPFlags = TCPAck
	r := p.VIP(f, at(10))
	assert.Equal(t, Drop, r.Verdict)
	assert.Contains(t, r.DropReason, "blackholed")
	r = p.VIP(reply(first.Flow, TCPAck), at(10))
	assert.Equal(t, ap(vip20), r.Flow.Src)

	r = p.VIP(tcpFlow(clientIP+":40001", vip20, TCPSyn), at(10))
	assert.Equal(t, Drop, r.Verdict)
	assert.True(t, p.IsVIP(addr("10.96.0.20")))
	assert.True(t, p.Routes(addr("10.96.0.20")))

	p.Expire(at(40)) // last seen at 10, 30 s lifetime: still there at 40
	assert.Len(t, p.SessionDump(), 2)
	p.Expire(at(41))
	assert.Empty(t, p.SessionDump())
	assert.False(t, p.IsVIP(addr("10.96.0.20")))
	assert.False(t, p.Routes(addr("10.96.0.20")), "the VIP's FIB entry goes with the last session")
	assert.False(t, p.Routes(addr(clientIP)), "the learned client goes too")
	r = p.VIP(tcpFlow(clientIP+":40001", vip20, TCPSyn), at(41))
	assert.Equal(t, Pass, r.Verdict)
}

// README.md#backend-choice: the same 5-tuple always reaches the same backend, also after its
// session expired (the hash is stable for a given active set).
func TestStickinessPer5Tuple(t *testing.T) {
	for _, lb := range []cnat.CnatLbType{cnat.CNAT_LB_TYPE_DEFAULT, cnat.CNAT_LB_TYPE_MAGLEV} {
		t.Run(lbName(lb), func(t *testing.T) {
			p := New(nil)
			m := trans(vip20, tcpProto, to(backendA), to(backendB), to(backendC))
			m.Translation.LbType = lb
			mustUpdate(t, p, m)
			seen := map[string]bool{}
			for port := 40000; port < 40200; port++ {
				f := tcpFlow(fmt.Sprintf("%s:%d", clientIP, port), vip20, TCPSyn)
				first := p.VIP(f, at(0)).Flow.Dst
				seen[first.String()] = true
				f.TCPFlags = TCPAck
				assert.Equal(t, first, p.VIP(f, at(1)).Flow.Dst)
				p.Expire(at(100))
				assert.Equal(t, first, p.VIP(f, at(100)).Flow.Dst, "re-chosen after expiry: same hash")
				p.Expire(at(200))
			}
			assert.Len(t, seen, 3, "all backends get flows")
		})
	}
}

// README.md#backend-choice (as VPP's own tests check): FlowHashConfig SRC_IP|DST_IP keeps a client on one backend
// whatever its source port.
func TestFlowHashConfigPinsClient(t *testing.T) {
	p := New(nil)
	m := trans(vip20, tcpProto, to(backendA), to(backendB), to(backendC), to("10.1.1.5:8080"))
	m.Translation.FlowHashConfig = ip.IP_API_V2_FLOW_HASH_SRC_IP | ip.IP_API_V2_FLOW_HASH_DST_IP
	mustUpdate(t, p, m)
	perClient := map[string]string{}
	for c := 1; c <= 40; c++ {
		for port := 40000; port < 40025; port++ {
			src := fmt.Sprintf("10.2.0.%d:%d", c, port)
			got := p.VIP(tcpFlow(src, vip20, TCPSyn), at(0)).Flow.Dst.String()
			if prev, ok := perClient[fmt.Sprint(c)]; ok {
				require.Equal(t, prev, got, "client 10.2.0.%d moved", c)
			}
			perClient[fmt.Sprint(c)] = got
		}
	}
	backends := map[string]bool{}
	for _, b := range perClient {
		backends[b] = true
	}
	assert.Greater(t, len(backends), 1, "different clients spread over backends")
}

// IPv6 on the VIP path (README.md#the-vip-path): same algorithm, ICMPv6 echo is
// not translated.
func TestIPv6(t *testing.T) {
	p := New(nil)
	vip := "[fd00::20]:80"
	b1, b2 := "[fd00:1::2]:8080", "[fd00:1::3]:8080"
	m := trans(vip, tcpProto, via("fd00::1", b1), via("fd00::1", b2))
	m.Translation.Flags = uint8(cnat.CNAT_TRANSLATION_ALLOC_PORT)
	require.Equal(t, ip_types.ADDRESS_IP6, m.Translation.Vip.Addr.Af)
	mustUpdate(t, p, m)

	f := tcpFlow("[fd00:2::9]:40000", vip, TCPSyn)
	r := p.VIP(f, at(0))
	require.Equal(t, Forward, r.Verdict, r.Steps)
	assert.Equal(t, ap("[fd00::1]:49152"), r.Flow.Src)
	assert.Contains(t, []any{ap(b1), ap(b2)}, any(r.Flow.Dst))
	assert.ElementsMatch(t, []any{ap(b1), ap(b2)}, toAny(r.Candidates))

	rep := p.VIP(reply(r.Flow, TCPSyn|TCPAck), at(1))
	assert.Equal(t, ap(vip), rep.Flow.Src)
	assert.Equal(t, ap("[fd00:2::9]:40000"), rep.Flow.Dst)

	// The port bitmap is per protocol, shared with IPv4.
	mustUpdate(t, p, func() *cnat.CnatTranslationUpdate {
		m := trans(vip20, tcpProto, via(snatSrcIP, backendA))
		m.Translation.Flags = uint8(cnat.CNAT_TRANSLATION_ALLOC_PORT)
		return m
	}())
	r4 := p.VIP(tcpFlow(clientIP+":40000", vip20, TCPSyn), at(0))
	assert.Equal(t, ap(snatSrcIP+":49153"), r4.Flow.Src)

	echo := Flow{Proto: protoICMP6, ICMPType: ICMP6EchoRequest, Src: ap("[fd00:2::9]:77"), Dst: ap("[fd00::20]:77")}
	r = p.VIP(echo, at(0))
	assert.Equal(t, Drop, r.Verdict, "ICMPv6 echo to an exclusive VIP matches no translation")
	assert.Contains(t, r.DropReason, "ICMP6 type 128 does not match translations")

	udp := Flow{Proto: protoUDP, Src: ap("[fd00:2::9]:5353"), Dst: ap("[fd00::20]:53")}
	assert.Equal(t, Drop, p.VIP(udp, at(0)).Verdict)
	sctp := Flow{Proto: protoSCTP, Src: ap("[fd00:2::9]:5000"), Dst: ap("[fd00::20]:80")}
	r = p.VIP(sctp, at(0))
	assert.Equal(t, Drop, r.Verdict)
	assert.Contains(t, r.DropReason, "SCTP over IPv6 is not handled by cnat")
}

// README.md#snat-policies (as VPP's own tests check): an ICMP error about a translated flow is matched through the
// embedded packet and both headers are rewritten.
func TestICMPErrorTranslated(t *testing.T) {
	p := New(nil)
	mustUpdate(t, p, trans(vip20, udpProto, to(backendA)))
	f := udpFlow(clientIP+":5353", vip20)
	r := p.VIP(f, at(0))
	require.Equal(t, ap(backendA), r.Flow.Dst)
	sent := r.Flow // 10.1.1.9:5353 → 10.1.1.2:8080

	t.Run("from the backend itself", func(t *testing.T) {
		icmp := Flow{Proto: protoICMP, ICMPType: ICMP4DestUnreach, Src: ap(backendA), Dst: ap(clientIP + ":0"), Inner: &sent}
		r := p.VIP(icmp, at(1))
		require.Equal(t, Forward, r.Verdict, r.Steps)
		assert.Equal(t, addr("10.96.0.20"), r.Flow.Src.Addr(), "outer source rewritten (it is the inner destination)")
		assert.Equal(t, addr(clientIP), r.Flow.Dst.Addr())
		assert.Equal(t, f, *r.Flow.Inner, "the embedded packet is what the client sent")
		assert.Equal(t, ap(backendA), sent.Dst, "input not modified")
	})
	t.Run("from a router on the way", func(t *testing.T) {
		icmp := Flow{Proto: protoICMP, ICMPType: ICMP4TimeExceeded, Src: ap("10.1.1.254:0"), Dst: ap(clientIP + ":0"), Inner: &sent}
		r := p.VIP(icmp, at(1))
		require.Equal(t, Forward, r.Verdict)
		assert.Equal(t, addr("10.1.1.254"), r.Flow.Src.Addr(), "outer source kept")
		assert.Equal(t, f, *r.Flow.Inner)
	})
}

func TestPortExhaustionDrops(t *testing.T) {
	p := New(nil)
	m := trans(vip20, tcpProto, via(snatSrcIP, backendA))
	m.Translation.Flags = uint8(cnat.CNAT_TRANSLATION_ALLOC_PORT)
	mustUpdate(t, p, m)
	for i := 0; i < maxSrcPort-minSrcPort+1; i++ {
		_, ok := p.ports.alloc(protoTCP)
		require.True(t, ok)
	}
	r := p.VIP(tcpFlow(clientIP+":40000", vip20, TCPSyn), at(0))
	assert.Equal(t, Drop, r.Verdict)
	assert.Equal(t, "cnat: no more free ports", r.DropReason)
	assert.Empty(t, p.SessionDump())

	// SCTP has no port allocator: every ALLOC_PORT flow is dropped.
	m = trans("10.96.0.21:80", protoSCTP, via(snatSrcIP, backendA))
	m.Translation.Flags = uint8(cnat.CNAT_TRANSLATION_ALLOC_PORT)
	mustUpdate(t, p, m)
	r = p.VIP(Flow{Proto: protoSCTP, Src: ap(clientIP + ":5000"), Dst: ap("10.96.0.21:80")}, at(0))
	assert.Equal(t, Drop, r.Verdict)
}

func TestNotACnatAddress(t *testing.T) {
	p := New(nil)
	f := tcpFlow(clientIP+":40000", "10.96.0.99:80", TCPSyn)
	assert.False(t, p.Routes(f.Dst.Addr()))
	r := p.VIP(f, at(0))
	assert.Equal(t, Pass, r.Verdict)
	assert.False(t, r.Matched)
	assert.Equal(t, f, r.Flow)
}

// DstEp port 0 is written into the packet (README.md#the-vip-path).
func TestDstPortZeroIsWritten(t *testing.T) {
	p := New(nil)
	mustUpdate(t, p, trans(vip20, tcpProto, to("10.1.1.2")))
	r := p.VIP(tcpFlow(clientIP+":40000", vip20, TCPSyn), at(0))
	assert.Equal(t, ap("10.1.1.2:0"), r.Flow.Dst)
}
