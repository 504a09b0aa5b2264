package fakevpp

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.fd.io/govpp/binapi/cnat"
)

// Update in place (fakevpp/internal/cnat/README.md#translations-and-clients) through the tracer: an update in place keeps the ID and the
// running flows, new flows use the new paths, LbType stays, delete works
// once, other ports of an exclusive VIP are dropped.
func TestCnatUpdateInPlace(t *testing.T) {
	e := newCnatEnv(t)
	id := e.mustUpdate(cnatTCP(cnatVIP, cnatPath("", backendA), cnatPath("", backendB)))

	// A client whose flow the hash puts on A.
	var pinned Packet
	for port := 40000; ; port++ {
		require.Less(t, port, 40100, "no flow reached backend A")
		p := tcpSyn("eth0", fmt.Sprintf("8.8.8.8:%d", port), cnatVIP)
		tr := e.v.Trace(p)
		require.Equal(t, []netip.AddrPort{ap(backendA), ap(backendB)}, tr.Endpoints, "steps:\n%s", steps(tr))
		if tr.Out.Dst == ap(backendA) {
			requireCnatForward(t, tr, "tap0", p.Src.String(), backendA)
			pinned = p
			break
		}
	}

	upd := cnatTCP(cnatVIP, cnatPath("", backendB), cnatPath("", backendC))
	upd.LbType = cnat.CNAT_LB_TYPE_MAGLEV
	require.Equal(t, id, e.mustUpdate(upd), "an update in place keeps the ID")
	d := e.translations()
	require.Len(t, d, 1)
	assert.Equal(t, []netip.AddrPort{ap(backendB), ap(backendC)}, backends(d[0]))
	assert.Equal(t, cnat.CNAT_LB_TYPE_DEFAULT, d[0].Translation.LbType, "LbType keeps its creation value")

	// The open flow keeps A: A answered from tap0's subnet, so VPP learned
	// it as a neighbour, whose host entry outlives the translation's path
	// tracker (neighbours.go); without it the flow is blackholed
	// (TestCnatFlowOfARemoteBackendAcrossUpdate).
	requireCnatForward(t, e.v.Trace(ack(pinned)), "tap0", pinned.Src.String(), backendA)
	seen := map[netip.AddrPort]bool{}
	for port := 50000; port < 50020; port++ {
		tr := e.v.Trace(tcpSyn("eth0", fmt.Sprintf("8.8.8.8:%d", port), cnatVIP))
		require.Equal(t, Forward, tr.Verdict, "steps:\n%s", steps(tr))
		require.Equal(t, []netip.AddrPort{ap(backendB), ap(backendC)}, tr.Endpoints)
		seen[tr.Out.Dst] = true
	}
	assert.Equal(t, map[netip.AddrPort]bool{ap(backendB): true, ap(backendC): true}, seen, "new flows go to B or C only")

	requireDrop(t, e.v.Trace(tcpSyn("eth0", "8.8.8.8:1000", "10.96.0.20:443")),
		"ip4-cnat-tx: exclusive VIP 10.96.0.20, no translation for port 443/TCP")

	e.ok(e.del(id))
	e.expect(-6, e.del(id))
	// The sessions keep the exclusive VIP's FIB entry (and drop new flows)
	// until the scanner deletes them: SYN+ACK gave them 3600 s.
	requireDrop(t, e.v.Trace(tcpSyn("eth0", "8.8.8.8:2000", cnatVIP)), "exclusive VIP 10.96.0.20")
	e.v.Advance(3601 * time.Second)
	assert.Empty(t, e.cnatSessions())
	tr := e.v.Trace(tcpSyn("eth0", "8.8.8.8:2000", cnatVIP))
	requireForward(t, tr, "eth0", "8.8.8.8:2000", cnatVIP)
	assert.NotContains(t, steps(tr), "cnat", "without sessions the VIP is no cnat entry any more")
}

// cnat source NAT (fakevpp/internal/cnat/README.md#the-vip-path) through the tracer.
func TestCnatSourceNAT(t *testing.T) {
	t.Run("alloc port", func(t *testing.T) {
		e := newCnatEnv(t)
		tr := cnatTCP(cnatVIP, cnatPath(snatAddr4, backendA))
		tr.Flags = uint8(cnat.CNAT_TRANSLATION_ALLOC_PORT)
		e.mustUpdate(tr)
		for i, port := range []string{"49152", "49153"} {
			p := tcpSyn("eth0", fmt.Sprintf("8.8.8.8:%d", 5555+i), cnatVIP)
			out := e.v.Trace(p)
			requireCnatForward(t, out, "tap0", snatAddr4+":"+port, backendA)
			assert.True(t, out.SNAT)
			assert.Equal(t, []netip.AddrPort{ap(backendA)}, out.Endpoints)
			back := e.v.TraceReply(out)
			requireForward(t, back, "eth0", cnatVIP, p.Src.String())
			assert.Contains(t, steps(back), "ip4-lookup: 8.8.8.8 via eth0", "the return entry of a source-NATed flow is looked up again")
		}
	})
	t.Run("fixed source port without alloc", func(t *testing.T) {
		e := newCnatEnv(t)
		e.mustUpdate(cnatTCP(cnatVIP, cnatPath(snatAddr4, backendA)))
		out := e.v.Trace(tcpSyn("eth0", "8.8.8.8:5555", cnatVIP))
		requireCnatForward(t, out, "tap0", snatAddr4+":5555", backendA)
		assert.True(t, out.SNAT)
	})
	t.Run("no snat", func(t *testing.T) {
		e := newCnatEnv(t)
		e.mustUpdate(cnatTCP(cnatVIP, cnatPath("", backendA)))
		out := e.v.Trace(tcpSyn("eth0", "8.8.8.8:5555", cnatVIP))
		requireCnatForward(t, out, "tap0", "8.8.8.8:5555", backendA)
		assert.False(t, out.SNAT)
		requireForward(t, e.v.TraceReply(out), "eth0", cnatVIP, "8.8.8.8:5555")
	})
	t.Run("no return session", func(t *testing.T) {
		e := newCnatEnv(t)
		tr := cnatTCP(cnatVIP, cnatPath("", backendA))
		tr.Flags = uint8(cnat.CNAT_TRANSLATION_NO_RETURN_SESSION)
		e.mustUpdate(tr)
		out := e.v.Trace(tcpSyn("eth0", "8.8.8.8:5555", cnatVIP))
		requireForward(t, out, "tap0", "8.8.8.8:5555", backendA)
		assert.False(t, out.ReplyOK, "steps:\n%s", steps(out))
		requireForward(t, e.v.TraceReply(out), "eth0", backendA, "8.8.8.8:5555")
		assert.Len(t, e.cnatSessions(), 1, "the forward entry only")
	})
}

// A ClusterIP-like IPv6 service: every backend is a candidate, a flow sticks
// to its backend, NAT44 leaves IPv6 alone.
func TestCnatClusterIPv6(t *testing.T) {
	e := newCnatEnv(t)
	e.standardNAT()
	vip := "[fd00:96::20]:80"
	pods := []netip.AddrPort{ap("[fd00::2]:8080"), ap("[fd00::3]:8080"), ap("[fd00::4]:8080")}
	var paths []cnat.CnatEndpointTuple
	for _, p := range pods {
		paths = append(paths, cnatPath("", p.String()))
	}
	e.mustUpdate(cnatTCP(vip, paths...))

	seen := map[netip.AddrPort]bool{}
	for port := 40000; port < 40030; port++ {
		p := tcpSyn("eth0", fmt.Sprintf("[2001:db8::7]:%d", port), vip)
		tr := e.v.Trace(p)
		require.Equal(t, pods, tr.Endpoints, "steps:\n%s", steps(tr))
		requireCnatForward(t, tr, "tap0", p.Src.String(), tr.Out.Dst.String())
		assert.Contains(t, pods, tr.Out.Dst)
		assert.NotContains(t, steps(tr), "nat44")
		again := e.v.Trace(ack(p))
		requireForward(t, again, "tap0", p.Src.String(), tr.Out.Dst.String())
		assert.Equal(t, []netip.AddrPort{tr.Out.Dst}, again.Endpoints, "a session hit has one destination")
		seen[tr.Out.Dst] = true
	}
	assert.Len(t, seen, 3, "30 flows spread over the three backends")
	ping := e.v.Trace(Packet{Ingress: "eth0", Protocol: protoICMP6, Src: ap("[2001:db8::7]:9"), Dst: ap("[fd00:96::20]:0")})
	requireDrop(t, ping, "ip6-cnat-tx: exclusive VIP fd00:96::20, ICMP6 type 128 does not match translations")
}

// A real IP (IsRealIP=1) is interposed: ports without a translation follow
// the FIB (local delivery, or forwarding); an exclusive VIP drops them.
// ICMP never matches a translation (finding 8).
func TestCnatRealIPAndExclusiveVIP(t *testing.T) {
	e := newCnatEnv(t)
	node := cnatTCP("192.168.0.1:30080", cnatPath("", backendA))
	node.IsRealIP = 1
	e.mustUpdate(node)
	routed := cnatTCP("10.1.1.50:80", cnatPath("", backendB))
	routed.IsRealIP = 1
	e.mustUpdate(routed)
	e.mustUpdate(cnatTCP(cnatVIP, cnatPath("", backendC)))

	requireCnatForward(t, e.v.Trace(tcpSyn("eth0", "8.8.8.8:1000", "192.168.0.1:30080")), "tap0", "8.8.8.8:1000", backendA)
	tr := e.v.Trace(tcpSyn("eth0", "8.8.8.8:1000", "192.168.0.1:22"))
	require.Equal(t, Local, tr.Verdict, "steps:\n%s", steps(tr))
	assert.Contains(t, steps(tr), "not exclusive: not translated")
	requireForward(t, e.v.Trace(tcpSyn("eth0", "8.8.8.8:1000", "10.1.1.50:443")), "tap0", "8.8.8.8:1000", "10.1.1.50:443")

	requireDrop(t, e.v.Trace(tcpSyn("eth0", "8.8.8.8:1000", "10.96.0.20:443")), "ip4-cnat-tx: exclusive VIP 10.96.0.20")
	ping := func(dst string) Trace {
		return e.v.Trace(Packet{Ingress: "eth0", Protocol: protoICMP, Src: ap("8.8.8.8:7"), Dst: ap(dst + ":0")})
	}
	requireDrop(t, ping("10.96.0.20"), "ICMP type 8 does not match translations")
	assert.Equal(t, Local, ping("192.168.0.1").Verdict)
}

// cnat-snat-ip6 with the K8S policy and a pod reaching itself through a VIP.
// The node runs on ip6-unicast of the pod's interface, before the FIB lookup
// that translates the VIP, so the policy sees pod → VIP: rule 4 (src == dst)
// cannot fire for that packet in VPP 25.10 (only cnat-output sees the
// translated destination: TestCnatOutputK8sHairpinIPv6). Rule 4 fires for a
// packet that arrives
// with src == dst; rule 3 SNATs the hairpin when the pod's interface is not
// in the POD table.
func TestCnatSnatK8sHairpinIPv6(t *testing.T) {
	const vip, pod = "[fd00:96::20]:80", "[fd00::2]:8080"
	for _, c := range []struct {
		name     string
		podTable bool   // tap0 in the K8S POD table
		dst      string // where the pod sends to
		src      string // the source the pod's server sees
		step     string
	}{
		{"pod interface in the POD table: no rule matches", true, vip, "[fd00::2]:40000", "cnat-snat: policy k8s"},
		{"rule 4: source equals destination on arrival", true, pod, "[fd00:ff::1]:49152", "cnat-snat: source"},
		{"rule 3: pod interface not in the POD table", false, vip, "[fd00:ff::1]:49152", "cnat-snat: source"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newCnatEnv(t)
			e.mustUpdate(cnatTCP(vip, cnatPath("", pod)))
			e.setSnat(snatAddr4, snatAddr6, cnat.CNAT_POLICY_K8S)
			if c.podTable {
				e.snatPolicyIf("tap0", cnat.CNAT_POLICY_POD)
			}
			e.ok(e.setFeature("tap0", "ip6-unicast", "cnat-snat-ip6", true))
			tr := e.v.Trace(tcpSyn("tap0", "[fd00::2]:40000", c.dst))
			requireCnatForward(t, tr, "tap0", c.src, pod)
			assert.Equal(t, c.src != "[fd00::2]:40000", tr.SNAT)
			assert.Equal(t, []netip.AddrPort{ap(pod)}, tr.Endpoints)
			assert.Contains(t, steps(tr), c.step)
		})
	}
}

// cnat-input-ip6 and cnat-output-ip6 on the pods' interface with the K8S
// policy: cnat-output sees the translated packet, so rule 4 (src == dst)
// source-NATs exactly the pod that reached itself through a VIP; a pod
// reaching another pod, and a client from the uplink, keep their sources.
// Every reply comes back from the VIP (dataplane case cnat/k8s-policy-hairpin
// on a real VPP).
func TestCnatOutputK8sHairpinIPv6(t *testing.T) {
	const self, other = "[fd00:96::20]:80", "[fd00:96::21]:80"
	e := newCnatEnv(t)
	e.mustUpdate(cnatTCP(self, cnatPath("", "[fd00::2]:8080")))
	e.mustUpdate(cnatTCP(other, cnatPath("", "[fd00::3]:8080")))
	e.setSnat(snatAddr4, snatAddr6, cnat.CNAT_POLICY_K8S)
	e.snatPolicyIf("tap0", cnat.CNAT_POLICY_POD)
	e.ok(e.setFeature("tap0", "ip6-unicast", "cnat-input-ip6", true))
	e.ok(e.setFeature("tap0", "ip6-output", "cnat-output-ip6", true))

	tr := e.v.Trace(tcpSyn("tap0", "[fd00::2]:40000", self))
	requireCnatForward(t, tr, "tap0", "[fd00:ff::1]:49152", "[fd00::2]:8080")
	assert.True(t, tr.SNAT)
	assert.Contains(t, steps(tr), "cnat-output: policy k8s: source [fd00::2]:40000 → [fd00:ff::1]:49152")
	requireCnatForward(t, e.v.Trace(tcpSyn("tap0", "[fd00::2]:40001", other)), "tap0", "[fd00::2]:40001", "[fd00::3]:8080")
	requireCnatForward(t, e.v.Trace(tcpSyn("eth0", "[2001:db8::7]:40002", self)), "tap0", "[2001:db8::7]:40002", "[fd00::2]:8080")
	assert.Empty(t, e.v.Violations())
}

// docs/fakevpp.md#acl: the input ACL of the ingress interface sees the VIP (before cnat),
// the output ACL of the egress interface the backend (after cnat), for IPv4
// and IPv6 alike.
func TestCnatACLOrder(t *testing.T) {
	e := newCnatEnv(t)
	e.mustUpdate(cnatTCP(cnatVIP, cnatPath("", backendA)))
	e.mustUpdate(cnatTCP("[fd00:96::20]:80", cnatPath("", "[fd00::2]:8080")))
	syn4 := tcpSyn("eth0", "8.8.8.8:1000", cnatVIP)
	syn6 := tcpSyn("eth0", "[2001:db8::7]:1000", "[fd00:96::20]:80")

	toVIP := e.addACL("to-vip", rule(permit, "0.0.0.0/0", "10.96.0.20/32", tcp, 80), rule(permit, "::/0", "fd00:96::20/128", tcp, 80))
	toPod := e.addACL("to-pod", rule(permit, "0.0.0.0/0", "10.1.1.2/32", tcp, 8080), rule(permit, "::/0", "fd00::2/128", tcp, 8080))

	e.ok(e.setACLs("eth0", []uint32{toVIP}, nil))
	e.ok(e.setACLs("tap0", nil, []uint32{toPod}))
	for _, p := range []Packet{syn4, syn6} {
		tr := e.v.Trace(p)
		require.Equal(t, Forward, tr.Verdict, "steps:\n%s", steps(tr))
		assert.True(t, tr.ReplyOK, "steps:\n%s", steps(tr))
		assert.Contains(t, steps(tr), "acl-in eth0: permit (acl to-vip")
		assert.Contains(t, steps(tr), "acl-out tap0: permit (acl to-pod")
	}

	e.ok(e.setACLs("eth0", []uint32{toPod}, nil))
	e.ok(e.setACLs("tap0", nil, nil))
	requireDrop(t, e.v.Trace(tcpSyn("eth0", "8.8.8.8:1001", cnatVIP)), "acl-in eth0: deny (no rule matched)")
	requireDrop(t, e.v.Trace(tcpSyn("eth0", "[2001:db8::7]:1001", "[fd00:96::20]:80")), "acl-in eth0: deny (no rule matched)")

	e.ok(e.setACLs("eth0", nil, nil))
	e.ok(e.setACLs("tap0", nil, []uint32{toVIP}))
	requireDrop(t, e.v.Trace(tcpSyn("eth0", "8.8.8.8:1002", cnatVIP)), "acl-out tap0: deny (no rule matched)")
	requireDrop(t, e.v.Trace(tcpSyn("eth0", "[2001:db8::7]:1002", "[fd00:96::20]:80")), "acl-out tap0: deny (no rule matched)")
}

// UDP sessions live 30 s; the scanner that Advance runs frees them and their
// ports, which are handed out again lowest first.
func TestCnatSessionExpiry(t *testing.T) {
	e := newCnatEnv(t)
	tr := cnatTCP(cnatVIP, cnatPath(snatAddr4, backendA))
	tr.IPProto = udp
	tr.Flags = uint8(cnat.CNAT_TRANSLATION_ALLOC_PORT)
	e.mustUpdate(tr)
	out := e.v.Trace(udpPkt("eth0", "8.8.8.8:53000", cnatVIP))
	requireCnatForward(t, out, "tap0", snatAddr4+":49152", backendA)
	require.Len(t, e.cnatSessions(), 2, "forward and return entry")
	e.v.Advance(30 * time.Second)
	assert.Len(t, e.cnatSessions(), 2, "deleted only once last_seen + 30 s has passed")
	e.v.Advance(time.Second)
	assert.Empty(t, e.cnatSessions())
	// The expired session's port is never handed out again (sessions/cnat-port-reuse).
	requireCnatForward(t, e.v.Trace(udpPkt("eth0", "8.8.8.8:53001", cnatVIP)), "tap0", snatAddr4+":49153", backendA)
}

// docs/fakevpp.md#neighbours-and-nat44-ed-receive-entries: an update that
// drops a flow's backend blackholes the flow when only the translation's
// tracker held the backend's host entry (a backend behind a route, never a
// neighbour), and keeps it when the backend is a neighbour.
func TestCnatFlowOfARemoteBackendAcrossUpdate(t *testing.T) {
	for _, c := range []struct {
		name, backend string
		neighbour     bool
		want          Verdict
	}{
		{"remote backend", "172.16.5.5:8080", false, Drop},
		{"static neighbour", "192.168.0.7:8080", true, Forward},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newCnatEnv(t)
			if c.neighbour {
				require.True(t, e.v.AddNeighbour("eth0", ap(c.backend).Addr()))
			}
			id := e.mustUpdate(cnatTCP(cnatVIP, cnatPath("", c.backend)))
			p := tcpSyn("eth0", "8.8.8.8:40000", cnatVIP)
			tr := e.v.Trace(p)
			require.True(t, tr.ReplyOK, steps(tr))
			require.Equal(t, id, e.mustUpdate(cnatTCP(cnatVIP, cnatPath("", backendB))))
			tr = e.v.Trace(ack(p))
			assert.Equal(t, c.want, tr.Verdict, steps(tr))
			if c.want == Drop {
				assert.Contains(t, tr.Reason, "blackholed")
			} else {
				assert.Equal(t, ap(c.backend), tr.Out.Dst)
			}
		})
	}
}
