package cnat

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.fd.io/govpp/binapi/cnat"
)

// real makes a translation update interposed (IsRealIP), as for an address
// that also belongs to a node or a NAT44-ED mapping.
func real(m *cnat.CnatTranslationUpdate) *cnat.CnatTranslationUpdate {
	m.Translation.IsRealIP = 1
	return m
}

// The feature path rewrites the destination only, keys its entry at INPUT
// and the return entry at OUTPUT, learns no client, and the VIP path does
// not see its sessions.
func TestInputFeatureTranslatesAndOutputReturns(t *testing.T) {
	p := New(nil)
	mustUpdate(t, p, real(trans("198.51.100.10:80", tcpProto, via(snatSrcIP, "10.96.0.10:80"))))
	f := tcpFlow(clientIP+":40000", "198.51.100.10:80", TCPSyn)
	r := p.InputFeature(f, at(0))
	require.Equal(t, Forward, r.Verdict)
	assert.Equal(t, ap("10.96.0.10:80"), r.Flow.Dst)
	assert.Equal(t, ap(clientIP+":40000"), r.Flow.Src, "cnat-input never source-NATs, even with a path source")
	assert.False(t, r.SNAT)
	assert.True(t, r.NewSession)

	d := p.SessionDump()
	require.Len(t, d, 2)
	assert.Equal(t, uint8(locInput), d[0].Session.Location)
	assert.Equal(t, uint8(locOutput), d[1].Session.Location)
	assert.False(t, p.Routes(addr(clientIP)), "no client is learned: replies are found by cnat-output")

	// The next packet of the flow hits the INPUT entry.
	f.TCPFlags = TCPAck
	assert.Equal(t, ap("10.96.0.10:80"), p.InputFeature(f, at(1)).Flow.Dst)
	// The reply, as NAT44-ED sends it back from the ClusterIP, is turned
	// back into the frontend by cnat-output only.
	back := tcpFlow("10.96.0.10:80", clientIP+":40000", TCPSyn|TCPAck)
	assert.Equal(t, Pass, p.InputFeature(back, at(1)).Verdict, "cnat-input does not match OUTPUT entries")
	out := p.OutputFeature(back, podTap, podTap, at(1))
	require.Equal(t, Forward, out.Verdict)
	assert.Equal(t, ap("198.51.100.10:80"), out.Flow.Src)
	assert.Equal(t, ap(clientIP+":40000"), out.Flow.Dst)
	// The VIP path keys at the FIB location: the same packet there is new.
	v := p.VIP(tcpFlow(clientIP+":40000", "198.51.100.10:80", TCPAck), at(1))
	assert.True(t, v.NewSession, "the VIP path does not see the feature path's sessions")
}

func TestInputFeaturePassesWhatIsNotTranslated(t *testing.T) {
	p := New(nil)
	mustUpdate(t, p, real(trans("198.51.100.10:80", tcpProto, to("10.96.0.10:80"))))
	for name, f := range map[string]Flow{
		"not a cnat address":   tcpFlow(clientIP+":40000", "10.1.2.2:8080", TCPSyn),
		"another port":         tcpFlow(clientIP+":40000", "198.51.100.10:22", TCPSyn),
		"another protocol":     udpFlow(clientIP+":40000", "198.51.100.10:80"),
		"ICMP to the frontend": {Proto: protoICMP, Src: ap(clientIP + ":7"), Dst: ap("198.51.100.10:7"), ICMPType: ICMP4EchoRequest},
	} {
		r := p.InputFeature(f, at(0))
		assert.Equal(t, Pass, r.Verdict, name)
		assert.Equal(t, f.Dst, r.Flow.Dst, name)
	}
	assert.Empty(t, p.SessionDump())
	assert.Empty(t, p.OutputFeature(tcpFlow("10.1.2.2:8080", clientIP+":40000", TCPAck), uplinkIf, podTap, at(0)).Steps, "nothing to say about unrelated traffic")
}

func TestInputFeatureSessionsExpireTogether(t *testing.T) {
	p := New(nil)
	mustUpdate(t, p, real(trans("198.51.100.10:80", udpProto, to("10.96.0.10:80"))))
	require.Equal(t, Forward, p.InputFeature(udpFlow(clientIP+":5000", "198.51.100.10:80"), at(0)).Verdict)
	p.Expire(at(30))
	assert.Len(t, p.SessionDump(), 2)
	p.Expire(at(31))
	assert.Empty(t, p.SessionDump())
	assert.Equal(t, Pass, p.OutputFeature(udpFlow("10.96.0.10:80", clientIP+":5000"), podTap, podTap, at(31)).Verdict)
}

func TestInputFeatureNoReturnSession(t *testing.T) {
	p := New(nil)
	m := real(trans("198.51.100.10:80", tcpProto, to("10.96.0.10:80")))
	m.Translation.Flags = uint8(cnat.CNAT_TRANSLATION_NO_RETURN_SESSION)
	mustUpdate(t, p, m)
	r := p.InputFeature(tcpFlow(clientIP+":40000", "198.51.100.10:80", TCPSyn), at(0))
	require.Equal(t, Forward, r.Verdict)
	assert.Len(t, p.SessionDump(), 1)
	assert.Equal(t, Pass, p.OutputFeature(tcpFlow("10.96.0.10:80", clientIP+":40000", TCPAck), podTap, podTap, at(0)).Verdict)
}
