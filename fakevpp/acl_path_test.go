package fakevpp

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.fd.io/govpp/binapi/acl"
	"go.fd.io/govpp/binapi/acl_types"
	"go.fd.io/govpp/binapi/nat_types"
)

// dualStackEnv has IPv6 on both interfaces.
func dualStackEnv(t *testing.T) *env {
	v := New()
	v.AddInterface("eth0", pfx("192.168.0.1/24"), pfx("2001:db8::1/64"))
	v.AddInterface("tap0", pfx("10.1.1.1/24"), pfx("fd00::1/64"))
	v.AddRoute(pfx("0.0.0.0/0"), "eth0")
	v.AddRoute(pfx("::/0"), "eth0")
	return connectEnv(t, v)
}

// docs/fakevpp.md#acl (packets): first match wins, default deny, a v4-only list
// drops IPv6, an empty ACL denies everything.
func TestACLFirstMatchAndDefaultDeny(t *testing.T) {
	e := dualStackEnv(t)
	a0 := e.addACL("pod-ingress", rule(deny, "0.0.0.0/0", "10.1.1.2/32", tcp, 22), rule(permit, "0.0.0.0/0", "0.0.0.0/0", 0, 0))
	e.ok(e.setACLs("tap0", nil, []uint32{a0}))

	tr := e.v.Trace(tcpSyn("eth0", "8.8.8.8:1000", "10.1.1.2:22"))
	requireDrop(t, tr, "acl-out tap0: deny (acl pod-ingress rule 0)")
	tr = e.v.Trace(tcpSyn("eth0", "8.8.8.8:1000", "10.1.1.2:80"))
	requireForward(t, tr, "tap0", "8.8.8.8:1000", "10.1.1.2:80")
	assert.Contains(t, steps(tr), "acl-out tap0: permit (acl pod-ingress rule 1)")
	requireDrop(t, e.v.Trace(tcpSyn("eth0", "[2001:db8::7]:1000", "[fd00::2]:80")), "acl-out tap0: deny (no rule matched)")

	_, err := e.acl.ACLAddReplace(e.ctx, &acl.ACLAddReplace{ACLIndex: a0, Tag: "pod-ingress"})
	e.ok(err)
	requireDrop(t, e.v.Trace(tcpSyn("eth0", "8.8.8.8:1000", "10.1.1.2:80")), "no rule matched")
}

func TestACLRuleMatching(t *testing.T) {
	e := dualStackEnv(t)
	synOnly := rule(deny, "0.0.0.0/0", "0.0.0.0/0", tcp, 0)
	synOnly.TCPFlagsMask, synOnly.TCPFlagsValue = tcpSYN|tcpACK, tcpSYN
	echo := rule(permit, "0.0.0.0/0", "0.0.0.0/0", 1, 0)
	echo.SrcportOrIcmptypeFirst, echo.SrcportOrIcmptypeLast = 8, 8 // echo request only
	v6 := rule(permit, "::/0", "fd00::/64", udp, 53)
	a := e.addACL("m", synOnly, echo, v6, rule(permit, "0.0.0.0/0", "0.0.0.0/0", tcp, 0))
	e.ok(e.setACLs("tap0", nil, []uint32{a}))

	requireDrop(t, e.v.Trace(tcpSyn("eth0", "8.8.8.8:1", "10.1.1.2:80")), "rule 0")
	ack := tcpSyn("eth0", "8.8.8.8:1", "10.1.1.2:80")
	ack.TCPFlags = tcpACK
	assert.Equal(t, Forward, e.v.Trace(ack).Verdict, "TCP flags mask/value")
	ping := Packet{Ingress: "eth0", Protocol: 1, Src: ap("8.8.8.8:9"), Dst: ap("10.1.1.2:9")}
	assert.Equal(t, Forward, e.v.Trace(ping).Verdict, "ICMP type in the source range")
	ping.EchoReply = true
	requireDrop(t, e.v.Trace(ping), "no rule matched")
	assert.Equal(t, Forward, e.v.Trace(udpPkt("eth0", "[2001:db8::7]:1000", "[fd00::2]:53")).Verdict)
	requireDrop(t, e.v.Trace(udpPkt("eth0", "[2001:db8::7]:1000", "[fd00::2]:54")), "no rule matched")
}

// Reflect (docs/fakevpp.md#acl).
func TestACLReflect(t *testing.T) {
	e := newEnv(t)
	in := e.addACL("egress", rule(permitReflect, "0.0.0.0/0", "0.0.0.0/0", 0, 0))
	out := e.addACL("ingress", rule(deny, "0.0.0.0/0", "0.0.0.0/0", 0, 0))
	e.ok(e.setACLs("tap0", []uint32{in}, []uint32{out}))

	tr := e.v.Trace(tcpSyn("tap0", "10.1.1.2:40000", "8.8.8.8:443"))
	require.Equal(t, Forward, tr.Verdict, steps(tr))
	assert.Contains(t, steps(tr), "acl-in tap0: permit+reflect (acl egress rule 0, session created)")
	assert.True(t, tr.ReplyOK, "replies pass the deny-all output ACL: %s", steps(tr))
	requireDrop(t, e.v.Trace(tcpSyn("eth0", "8.8.8.8:5000", "10.1.1.2:22")), "acl-out tap0: deny (acl ingress rule 0)")

	// Replacing the output ACL's rules keeps the session.
	_, err := e.acl.ACLAddReplace(e.ctx, &acl.ACLAddReplace{ACLIndex: out, Tag: "ingress",
		R: []acl_types.ACLRule{rule(deny, "0.0.0.0/0", "10.1.1.0/24", 0, 0)}})
	e.ok(err)
	r := e.v.TraceReply(tr)
	require.Equal(t, Forward, r.Verdict, steps(r))
	assert.Contains(t, steps(r), "acl-out tap0: permit (reflect session)")

	// Changing the interface's ACL set flushes it.
	other := e.addACL("other", rule(deny, "0.0.0.0/0", "0.0.0.0/0", 0, 0))
	e.ok(e.setACLs("tap0", []uint32{in}, []uint32{other}))
	requireDrop(t, e.v.TraceReply(tr), "acl-out tap0: deny")
}

// The input ACL runs before NAT, the output ACL after it (docs/fakevpp.md#acl).
func TestACLAndNATOrder(t *testing.T) {
	e := newEnv(t)
	e.standardNAT()
	e.pool("10.1.1.253", nat_types.NAT_IS_TWICE_NAT)
	e.ok(e.static(true, "10.1.1.5:8080", "1.1.1.1:80", tcp, nat_types.NAT_IS_TWICE_NAT))
	e.ok(e.static(true, "10.1.1.6:8080", "1.1.1.1:81", tcp, 0))

	backendOnly := e.addACL("backend-only", rule(permit, "0.0.0.0/0", "10.1.1.5/32", 0, 0))
	e.ok(e.setACLs("eth0", []uint32{backendOnly}, nil))
	requireDrop(t, e.v.Trace(tcpSyn("eth0", "8.8.8.8:1", "1.1.1.1:80")), "acl-in eth0: deny")
	external := e.addACL("external", rule(permit, "0.0.0.0/0", "1.1.1.1/32", 0, 0))
	e.ok(e.setACLs("eth0", []uint32{external}, nil))
	tr := e.v.Trace(tcpSyn("eth0", "8.8.8.8:1", "1.1.1.1:80"))
	require.Equal(t, Forward, tr.Verdict, steps(tr))
	// The ACL step comes before the NAT step.
	assert.Less(t, indexOf(tr.Steps, "acl-in eth0"), indexOf(tr.Steps, "nat44-ed-out2in"))

	twiceOnly := e.addACL("twice-only", rule(permit, "10.1.1.253/32", "0.0.0.0/0", 0, 0))
	e.ok(e.setACLs("tap0", nil, []uint32{twiceOnly}))
	tr = e.v.Trace(tcpSyn("eth0", "8.8.8.8:2", "1.1.1.1:80"))
	require.Equal(t, Forward, tr.Verdict, steps(tr))
	assert.True(t, tr.ReplyOK)
	requireDrop(t, e.v.Trace(tcpSyn("eth0", "8.8.8.8:3", "1.1.1.1:81")), "acl-out tap0: deny (no rule matched)")
}

func indexOf(steps []string, prefix string) int {
	for i, s := range steps {
		if len(s) >= len(prefix) && s[:len(prefix)] == prefix {
			return i
		}
	}
	return -1
}

// Reflect sessions key ICMP on type and code: the echo reply passes
// whatever its identifier, an error about the flow does not, and the host
// that was pinged cannot ping back. A FIN makes an established TCP
// session transient (120 s instead of 24 h), as the acl plugin's
// fa_session_get_timeout_type decides.
func TestACLReflectKeysAndTimeouts(t *testing.T) {
	e := newEnv(t)
	refl := e.addACL("reflect", rule(acl_types.ACL_ACTION_API_PERMIT_REFLECT, "0.0.0.0/0", "0.0.0.0/0", 0, 0))
	deny := e.addACL("deny", rule(acl_types.ACL_ACTION_API_DENY, "0.0.0.0/0", "0.0.0.0/0", 0, 0))
	e.ok(e.setACLs("tap0", []uint32{refl}, []uint32{deny}))
	require.Equal(t, Forward, e.v.Trace(Packet{Ingress: "tap0", Protocol: 1, Src: ap("10.1.1.5:100"), Dst: ap("8.8.8.8:100")}).Verdict)
	assert.Equal(t, Forward, e.v.Trace(Packet{Ingress: "eth0", Protocol: 1, Src: ap("8.8.8.8:101"), Dst: ap("10.1.1.5:101"), EchoReply: true}).Verdict)
	assert.Equal(t, Drop, e.v.Trace(Packet{Ingress: "eth0", Protocol: 1, Src: ap("8.8.8.8:100"), Dst: ap("10.1.1.5:100")}).Verdict)

	tr := e.v.Trace(tcpSyn("tap0", "10.1.1.5:40000", "8.8.8.8:443"))
	require.True(t, tr.ReplyOK, steps(tr))
	assert.Equal(t, Drop, e.v.Trace(ICMPErrorAbout("eth0", addr("192.168.0.254"), ICMP4TimeExceeded, 0, tr.Out)).Verdict)
	ackPkt := func(in, src, dst string, flags uint8) Packet {
		p := tcpSyn(in, src, dst)
		p.TCPFlags = flags
		return p
	}
	require.True(t, e.v.Trace(ackPkt("tap0", "10.1.1.5:40000", "8.8.8.8:443", tcpACK)).ReplyOK)
	e.v.Advance(200 * time.Second)
	require.Equal(t, Forward, e.v.Trace(ackPkt("eth0", "8.8.8.8:443", "10.1.1.5:40000", tcpACK)).Verdict, "established: 24 h")
	require.Equal(t, Forward, e.v.Trace(ackPkt("tap0", "10.1.1.5:40000", "8.8.8.8:443", tcpFIN|tcpACK)).Verdict)
	e.v.Advance(121 * time.Second)
	assert.Equal(t, Drop, e.v.Trace(ackPkt("eth0", "8.8.8.8:443", "10.1.1.5:40000", tcpACK)).Verdict, "after a FIN: transient, 120 s")
}
