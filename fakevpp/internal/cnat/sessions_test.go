package cnat

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.fd.io/govpp/binapi/cnat"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip_types"
)

// README.md#session-lifetimes: 30 s for a new session, 3600 s once a SYN+ACK is translated (either
// direction), 5 s after FIN or RST; every translated packet refreshes
// last_seen; the scanner deletes entries once last_seen + lifetime < now.
func TestSessionLifetimes(t *testing.T) {
	type pkt struct {
		at    float64
		reply bool
		flags uint8
	}
	tests := []struct {
		name       string
		proto      uint8
		pkts       []pkt
		aliveUntil float64 // still there when the scanner runs at this time
	}{
		{name: "new session lives 30 s", proto: protoTCP, pkts: []pkt{{0, false, TCPSyn}}, aliveUntil: 30},
		{name: "UDP refreshed by traffic", proto: protoUDP, pkts: []pkt{{0, false, 0}, {20, true, 0}}, aliveUntil: 50},
		{name: "SYN+ACK raises to 3600 s", proto: protoTCP, pkts: []pkt{{0, false, TCPSyn}, {1, true, TCPSyn | TCPAck}, {2, false, TCPAck}}, aliveUntil: 3602},
		{name: "FIN lowers to 5 s", proto: protoTCP, pkts: []pkt{{0, false, TCPSyn}, {1, true, TCPSyn | TCPAck}, {100, false, TCPFin | TCPAck}}, aliveUntil: 105},
		{name: "RST lowers to 5 s", proto: protoTCP, pkts: []pkt{{0, false, TCPSyn}, {1, true, TCPSyn | TCPAck}, {100, true, TCPRst}}, aliveUntil: 105},
		{name: "SYN+ACK on the first packet", proto: protoTCP, pkts: []pkt{{0, false, TCPSyn | TCPAck}}, aliveUntil: 3600},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := New(nil)
			m := trans(vip20, ip_types.IPProto(tc.proto), via(snatSrcIP, backendA))
			m.Translation.Flags = uint8(cnat.CNAT_TRANSLATION_ALLOC_PORT)
			mustUpdate(t, p, m)
			fwd := Flow{Proto: tc.proto, Src: ap(clientIP + ":40000"), Dst: ap(vip20)}
			var translated Flow
			for i, k := range tc.pkts {
				f := fwd
				if k.reply {
					f = reply(translated, 0)
				}
				f.TCPFlags = k.flags
				r := p.VIP(f, at(k.at))
				require.Equal(t, Forward, r.Verdict, "packet %d: %v", i, r.Steps)
				if i == 0 {
					translated = r.Flow
				}
			}
			p.Expire(at(tc.aliveUntil))
			assert.Len(t, p.SessionDump(), 2, "forward and return entries alive at %v s", tc.aliveUntil)
			p.Expire(at(tc.aliveUntil + 0.5))
			assert.Empty(t, p.SessionDump(), "both entries gone after %v s", tc.aliveUntil+0.5)
			assert.Equal(t, 1, p.ports.inUse(tc.proto), "the allocated port stays taken (VPP frees its byte-swapped number)")
			assert.False(t, p.Routes(addr(snatSrcIP)), "the learned client is gone")
			// The port is not handed out again: the next flow gets the next one.
			r := p.VIP(fwd, at(tc.aliveUntil+1))
			assert.Equal(t, ap(snatSrcIP+":49153"), r.Flow.Src)
		})
	}
}

// The data path does not check expiry: a session past its lifetime keeps
// translating (and is refreshed) until the scanner has run.
func TestExpiryOnlyByScanner(t *testing.T) {
	p := New(nil)
	mustUpdate(t, p, trans(vip20, udpProto, to(backendA)))
	f := udpFlow(clientIP+":5353", vip20)
	p.VIP(f, at(0))
	r := p.VIP(f, at(100))
	assert.Equal(t, Forward, r.Verdict)
	assert.Equal(t, ap(backendA), r.Flow.Dst)
	assert.False(t, r.NewSession, "the expired session still translates")
	p.Expire(at(110))
	assert.Len(t, p.SessionDump(), 2)
}

// README.md#dumps, CnatSessionDump: one record per entry; New is the new destination;
// Location 255; endpoints with SwIfIndex ~0; Timestamp 0.
func TestSessionDump(t *testing.T) {
	p := New(nil)
	m := trans(vip20, tcpProto, via(snatSrcIP, backendA))
	m.Translation.Flags = uint8(cnat.CNAT_TRANSLATION_ALLOC_PORT)
	mustUpdate(t, p, m)
	p.VIP(tcpFlow(clientIP+":40000", vip20, TCPSyn), at(0))

	ep := func(s string) cnat.CnatEndpoint {
		e := lit(s)
		e.SwIfIndex = interface_types.InterfaceIndex(^uint32(0))
		e.IfAf = ip_types.ADDRESS_IP4
		return e
	}
	want := []cnat.CnatSession{
		{Src: ep(clientIP + ":40000"), Dst: ep(vip20), New: ep(backendA), IPProto: tcpProto, Location: 255},
		{Src: ep(backendA), Dst: ep(snatSrcIP + ":49152"), New: ep(clientIP + ":40000"), IPProto: tcpProto, Location: 255},
	}
	var got []cnat.CnatSession
	for _, d := range p.SessionDump() {
		got = append(got, d.Session)
	}
	assert.Equal(t, want, got)
}

// A restart forgets everything (docs/fakevpp.md#restart).
func TestReset(t *testing.T) {
	ifs := newIfs(1)
	p := New(ifs)
	mustUpdate(t, p, trans(vip20, tcpProto, via(snatSrcIP, backendA)))
	require.Equal(t, int32(-7), p.TranslationUpdate(trans(vip20, tcpProto)).Retval) // records a violation
	p.SetSnatAddresses(&cnat.CnatSetSnatAddresses{SnatIP4: [4]byte{192, 168, 0, 1}, SwIfIndex: anyIfIdx})
	p.SetSnatPolicy(&cnat.CnatSetSnatPolicy{Policy: cnat.CNAT_POLICY_K8S})
	p.SnatPolicyAddDelIf(&cnat.CnatSnatPolicyAddDelIf{SwIfIndex: 1, IsAdd: 1})
	p.EnableSnatFeature(1, false, true)
	p.VIP(tcpFlow(clientIP+":40000", vip20, TCPSyn), at(0))

	p.Reset()
	assert.Empty(t, p.TranslationDump())
	assert.Empty(t, p.SessionDump())
	assert.False(t, p.Routes(addr("10.96.0.20")))
	assert.False(t, p.SnatFeatureEnabled(1, false))
	assert.Equal(t, &cnat.CnatGetSnatAddressesReply{}, p.GetSnatAddresses(nil))
	assert.Equal(t, New(ifs).Dump(), p.Dump())
	assert.Len(t, p.Violations(), 1, "violations are kept across a restart")
	assert.Equal(t, uint32(0), mustUpdate(t, p, trans(vip20, tcpProto, to(backendA))))
}

// cnat_session_make_key: which packets cnat keys, and how.
func TestSessionKeyOf(t *testing.T) {
	inner := udpFlow("10.1.1.9:5353", "10.1.1.2:8080")
	innerEcho := Flow{Proto: protoICMP, ICMPType: ICMP4EchoRequest, Src: ap("10.1.1.9:77"), Dst: ap("8.8.8.8:77")}
	innerOther := Flow{Proto: protoICMP, ICMPType: ICMP4TimeExceeded, Src: ap("10.1.1.9:0"), Dst: ap("8.8.8.8:0")}
	tests := []struct {
		name     string
		f        Flow
		ok       bool
		src, dst string
		proto    uint8
	}{
		{"TCP", tcpFlow("10.1.1.9:1", "10.96.0.20:80", TCPSyn), true, "10.1.1.9:1", "10.96.0.20:80", protoTCP},
		{"SCTP over IPv4", Flow{Proto: protoSCTP, Src: ap("10.1.1.9:1"), Dst: ap("10.96.0.20:80")}, true, "10.1.1.9:1", "10.96.0.20:80", protoSCTP},
		{"SCTP over IPv6", Flow{Proto: protoSCTP, Src: ap("[fd00::9]:1"), Dst: ap("[fd00::20]:80")}, false, "", "", 0},
		{"GRE", Flow{Proto: 47, Src: ap("10.1.1.9:0"), Dst: ap("10.96.0.20:0")}, false, "", "", 0},
		{"echo: identifier as both ports", innerEcho, true, "10.1.1.9:77", "8.8.8.8:77", protoICMP},
		{"ICMP other type", Flow{Proto: protoICMP, ICMPType: 13, Src: ap("10.1.1.9:0"), Dst: ap("8.8.8.8:0")}, false, "", "", 0},
		{"ICMPv4 type on an IPv6 packet", Flow{Proto: protoICMP, ICMPType: ICMP4EchoRequest, Src: ap("[fd00::9]:1"), Dst: ap("[fd00::20]:1")}, false, "", "", 0},
		{"error: inner reversed", Flow{Proto: protoICMP, ICMPType: ICMP4DestUnreach, Src: ap("10.1.1.2:0"), Dst: ap("10.1.1.9:0"), Inner: &inner}, true, "10.1.1.2:8080", "10.1.1.9:5353", protoUDP},
		{"error about an echo", Flow{Proto: protoICMP, ICMPType: ICMP4TimeExceeded, Src: ap("10.0.0.254:0"), Dst: ap("10.1.1.9:0"), Inner: &innerEcho}, true, "8.8.8.8:77", "10.1.1.9:77", protoICMP},
		{"error about another ICMP error", Flow{Proto: protoICMP, ICMPType: ICMP4DestUnreach, Src: ap("10.0.0.254:0"), Dst: ap("10.1.1.9:0"), Inner: &innerOther}, false, "", "", 0},
		{"error without inner packet", Flow{Proto: protoICMP, ICMPType: ICMP4DestUnreach, Src: ap("10.0.0.254:0"), Dst: ap("10.1.1.9:0")}, false, "", "", 0},
		{"ICMPv6 packet too big is not an error for cnat", Flow{Proto: protoICMP6, ICMPType: 2, Src: ap("[fd00::1]:0"), Dst: ap("[fd00::9]:0"), Inner: &Flow{Proto: protoUDP, Src: ap("[fd00::9]:1"), Dst: ap("[fd00::1]:2")}}, false, "", "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k, ok := sessionKeyOf(tc.f)
			require.Equal(t, tc.ok, ok)
			if !ok {
				return
			}
			assert.Equal(t, sessionKey{src: ap(tc.src), dst: ap(tc.dst), proto: tc.proto, loc: locFIB}, k)
		})
	}
}
