package fakevpp

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func icmpPkt(ingress, src, dst string, typ, code uint8) Packet {
	p := Packet{Ingress: ingress, Protocol: protoICMP, Src: ap(src), Dst: ap(dst)}
	if p.Dst.Addr().Is6() {
		p.Protocol = protoICMP6
	}
	p.SetICMP(typ, code)
	return p
}

// docs/fakevpp.md#icmp-messages: an echo with code 0 is EchoReply alone,
// anything else keeps ICMP; the identifier is in both ports; an error type
// without Error is malformed.
func TestICMPMessageForms(t *testing.T) {
	p := Packet{Protocol: protoICMP, Src: ap("10.1.1.2:7"), Dst: ap("8.8.8.8:0"), ICMP: &ICMPMessage{Type: 0}}
	n := p.Normalized()
	assert.True(t, n.EchoReply)
	assert.Nil(t, n.ICMP, "an echo reply with code 0 is EchoReply alone")
	assert.Equal(t, uint16(7), n.Dst.Port(), "the identifier in both ports")

	p.ICMP = &ICMPMessage{Type: 0, Code: 7}
	n = p.Normalized()
	require.NotNil(t, n.ICMP)
	assert.True(t, n.EchoReply)
	assert.Equal(t, "icmp 10.1.1.2:7 → 8.8.8.8:7 [echo-reply/7]", n.String())
	p.ICMP.Code = 1
	assert.Equal(t, uint8(7), n.ICMP.Code, "Normalized copies ICMP")

	ts := icmpPkt("", "10.1.1.2:7", "8.8.8.8:7", 13, 0).Normalized()
	assert.False(t, ts.EchoReply)
	assert.Equal(t, ICMPMessage{Type: 13}, ts.Message())
	assert.Equal(t, ICMPMessage{Type: 8}, Packet{Protocol: protoICMP}.Message())
	assert.Equal(t, ICMPMessage{Type: 129}, Packet{Protocol: protoICMP6, EchoReply: true}.Message())

	assert.Contains(t, icmpPkt("", "10.1.1.2:7", "8.8.8.8:7", 3, 1).Normalized().Malformed(), "ICMP type 3 is an error")
	assert.Contains(t, icmpPkt("", "[fd00::2]:7", "[2001:db8::8]:7", 2, 0).Normalized().Malformed(), "ICMP type 2 is an error")
	assert.Empty(t, icmpPkt("", "[fd00::2]:7", "[2001:db8::8]:7", 133, 0).Normalized().Malformed())
}

// The reply Trace sends: the request's reply type with its code; a reply
// is answered by its request; a type without a counterpart gets none.
func TestICMPReplyTypes(t *testing.T) {
	e := dualStackEnv(t)
	for _, c := range []struct {
		typ, code, reply uint8
		src, dst         string
	}{
		{8, 3, 0, "10.1.1.2:7", "8.8.8.8:7"},
		{13, 0, 14, "10.1.1.2:7", "8.8.8.8:7"},
		{18, 1, 17, "10.1.1.2:7", "8.8.8.8:7"},
		{128, 5, 129, "[fd00::2]:7", "[2001:db8::8]:7"},
		{139, 0, 140, "[fd00::2]:7", "[2001:db8::8]:7"},
	} {
		tr := e.v.Trace(icmpPkt("tap0", c.src, c.dst, c.typ, c.code))
		require.Equal(t, Forward, tr.Verdict, steps(tr))
		assert.True(t, tr.ReplyOK, steps(tr))
		assert.Equal(t, ICMPMessage{Type: c.reply, Code: c.code}, tr.Reply().Message())
	}
	tr := e.v.Trace(icmpPkt("tap0", "[fd00::2]:7", "[2001:db8::8]:7", 133, 0))
	assert.False(t, tr.HasReply())
	assert.Equal(t, Drop, e.v.TraceReply(tr).Verdict)
	tr = e.v.Trace(icmpPkt("tap0", "10.1.1.2:7", "8.8.8.8:7", 3, 1))
	requireDrop(t, tr, "trace: malformed packet: ICMP type 3 is an error")
}

// docs/fakevpp.md#icmp-messages (ACL): type and code ranges on any
// message; a reflect session lets back the reply of the request's code of
// the request types with a reply, nothing for other types.
func TestACLICMPTypesAndReflect(t *testing.T) {
	e := dualStackEnv(t)
	in := e.addACL("egress", rule(permitReflect, "0.0.0.0/0", "0.0.0.0/0", 0, 0), rule(permitReflect, "::/0", "::/0", 0, 0))
	out := e.addACL("ingress", rule(deny, "0.0.0.0/0", "0.0.0.0/0", 0, 0), rule(deny, "::/0", "::/0", 0, 0))
	e.ok(e.setACLs("tap0", []uint32{in}, []uint32{out}))
	for _, c := range []struct {
		typ, code uint8
		src, dst  string
		back      bool
	}{
		{8, 3, "10.1.1.2:7", "8.8.8.8:7", true},
		{15, 0, "10.1.1.2:7", "8.8.8.8:7", true},
		{17, 2, "10.1.1.2:7", "8.8.8.8:7", true},
		{0, 0, "10.1.1.2:8", "8.8.8.8:8", false},
		{14, 0, "10.1.1.2:8", "8.8.8.8:8", false},
		{42, 0, "10.1.1.2:7", "8.8.8.8:7", false},
		{139, 1, "[fd00::2]:7", "[2001:db8::8]:7", true},
		{133, 0, "[fd00::2]:7", "[2001:db8::8]:7", false},
	} {
		tr := e.v.Trace(icmpPkt("tap0", c.src, c.dst, c.typ, c.code))
		require.Equal(t, Forward, tr.Verdict, steps(tr))
		if tr.HasReply() {
			assert.Equal(t, c.back, tr.ReplyOK, "%d/%d: %s", c.typ, c.code, steps(tr))
		} else {
			assert.False(t, c.back)
		}
	}
	// The reply of another code finds no session.
	requireDrop(t, e.v.Trace(icmpPkt("eth0", "8.8.8.8:7", "10.1.1.2:7", 0, 0)), "acl-out tap0: deny")
}

// docs/fakevpp.md#icmp-messages (NAT44-ED): echoes of any code are
// translated with their code, other types that are not errors dropped.
func TestNAT44ICMPTypes(t *testing.T) {
	e := newEnv(t)
	e.standardNAT()
	tr := e.v.Trace(icmpPkt("tap0", "10.1.1.2:7", "8.8.8.8:7", 8, 3))
	require.Equal(t, Forward, tr.Verdict, steps(tr))
	assert.True(t, tr.SNAT)
	assert.Equal(t, ICMPMessage{Type: 8, Code: 3}, tr.Out.Message())
	assert.True(t, tr.ReplyOK, steps(tr))
	requireDrop(t, e.v.Trace(icmpPkt("tap0", "10.1.1.2:7", "8.8.8.8:7", 13, 0)), "nat44-ed-in2out: bad ICMP type 13")
	requireDrop(t, e.v.Trace(icmpPkt("eth0", "8.8.8.8:7", "192.168.0.1:7", 17, 0)), "nat44-ed-out2in: bad ICMP type 17")
}
