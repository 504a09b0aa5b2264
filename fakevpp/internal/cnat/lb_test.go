package cnat

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.fd.io/govpp/binapi/cnat"
	"go.fd.io/govpp/binapi/ip"
)

// backendsAfterAdding sends n flows to a VIP with 4 backends, lets the
// sessions expire, adds a fifth backend with an update and replays the same
// flows. It returns the fraction of flows whose backend changed and the
// fraction that moved between two of the original backends.
func backendsAfterAdding(t *testing.T, lb cnat.CnatLbType, n int) (moved, shuffled float64) {
	t.Helper()
	p := New(nil)
	four := []cnat.CnatEndpointTuple{to("10.1.1.2:8080"), to("10.1.1.3:8080"), to("10.1.1.4:8080"), to("10.1.1.5:8080")}
	m := trans(vip20, udpProto, four...)
	m.Translation.LbType = lb
	mustUpdate(t, p, m)
	flows := make([]Flow, n)
	before := make([]string, n)
	for i := range flows {
		flows[i] = udpFlow(fmt.Sprintf("10.%d.%d.%d:%d", 2+i%7, i/7%250, 1+i%200, 1024+i), vip20)
		r := p.VIP(flows[i], at(0))
		require.Equal(t, Forward, r.Verdict)
		before[i] = r.Flow.Dst.String()
	}
	p.Expire(at(100))
	require.Empty(t, p.SessionDump())
	mustUpdate(t, p, trans(vip20, udpProto, append(four, to("10.1.1.6:8080"))...))
	var nMoved, nShuffled int
	for i, f := range flows {
		after := p.VIP(f, at(100)).Flow.Dst.String()
		if after != before[i] {
			nMoved++
			if after != "10.1.1.6:8080" {
				nShuffled++
			}
		}
	}
	return float64(nMoved) / float64(n), float64(nShuffled) / float64(n)
}

// README.md#backend-choice: adding a backend to a maglev translation remaps about 1/N of the
// flows (ideal 1/5 = 20 %); the default modulo LB remaps most of them.
func TestMaglevRemapsAboutOneNth(t *testing.T) {
	const n = 10000
	moved, shuffled := backendsAfterAdding(t, cnat.CNAT_LB_TYPE_MAGLEV, n)
	t.Logf("maglev: %.1f%% moved, %.1f%% between old backends", moved*100, shuffled*100)
	assert.InDelta(t, 0.20, moved, 0.08, "maglev moves about 1/5 of the flows")
	assert.Less(t, shuffled, 0.08, "few flows move between the original backends")

	moved, _ = backendsAfterAdding(t, cnat.CNAT_LB_TYPE_DEFAULT, n)
	t.Logf("default: %.1f%% moved", moved*100)
	assert.Greater(t, moved, 0.6, "modulo LB remaps most flows (expected 80%%)")
}

// The maglev table only depends on the set of backends, not on their order
// in the path list, and gives each backend about M/N slots.
func TestMaglevTable(t *testing.T) {
	p := New(nil)
	m := trans(vip20, tcpProto, to(backendA), to(backendB), to(backendC))
	m.Translation.LbType = cnat.CNAT_LB_TYPE_MAGLEV
	id := mustUpdate(t, p, m)
	slots := func() map[string]int {
		tr := p.translations[id]
		require.Len(t, tr.maglev, maglevLen)
		out := map[string]int{}
		for _, ai := range tr.maglev {
			out[tr.paths[tr.active[ai]].dst.String()]++
		}
		return out
	}
	first := slots()
	for _, c := range first {
		assert.InDelta(t, maglevLen/3, c, 2)
	}
	mustUpdate(t, p, trans(vip20, tcpProto, to(backendC), to(backendA), to(backendB)))
	assert.Equal(t, first, slots())
}

// README.md#backend-choice: which header fields feed the hash.
func TestFlowHashFields(t *testing.T) {
	base := tcpFlow("10.1.1.9:40000", "10.96.0.20:80", TCPSyn)
	srcPort := base
	srcPort.Src = ap("10.1.1.9:40001")
	swapped := Flow{Proto: protoTCP, Src: base.Dst, Dst: base.Src}
	icmpA := Flow{Proto: protoICMP, ICMPType: ICMP4EchoRequest, Src: ap("10.1.1.9:1"), Dst: ap("10.96.0.20:1")}
	icmpB := icmpA
	icmpB.Src, icmpB.Dst = ap("10.1.1.9:2"), ap("10.96.0.20:2")
	const (
		srcDst = uint32(ip.IP_API_V2_FLOW_HASH_SRC_IP | ip.IP_API_V2_FLOW_HASH_DST_IP)
		sym    = defaultFlowHash | uint32(ip.IP_API_V2_FLOW_HASH_SYMETRIC)
	)
	tests := []struct {
		name  string
		a, b  Flow
		fhc   uint32
		equal bool
	}{
		{"default: source port counts", base, srcPort, defaultFlowHash, false},
		{"SRC_IP|DST_IP: source port ignored", base, srcPort, srcDst, true},
		{"default: direction counts", base, swapped, defaultFlowHash, false},
		{"SYMMETRIC: direction ignored", base, swapped, sym, true},
		{"ICMP: no ports in the hash", icmpA, icmpB, defaultFlowHash, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ha, hb := flowHash(tc.a, tc.fhc), flowHash(tc.b, tc.fhc)
			assert.Equal(t, tc.equal, ha == hb)
		})
	}
}
