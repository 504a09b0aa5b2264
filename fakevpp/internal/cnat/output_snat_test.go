package cnat

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.fd.io/govpp/binapi/cnat"
	"go.fd.io/govpp/binapi/interface_types"
)

// Interfaces of the cnat-output tests: two pod taps and an uplink.
const (
	podTap   = 1
	otherTap = 2
	uplinkIf = 3
)

// Addresses of the IPv6 hairpin tests (dataplane case cnat/k8s-policy-hairpin).
const (
	pod6   = "fd00:1:1::2"
	other6 = "fd00:1:1::3"
	snat6  = "fd00:16::1"
	vipPod = "[fd00:96::10]:80"
	vipOth = "[fd00:96::11]:80"
)

// k8sHairpinPlugin is cnat as the hairpin case programs it: policy K8S, both
// taps in the POD table, an IPv6 SNAT address, a VIP per pod with no source
// on its path.
func k8sHairpinPlugin(t *testing.T) *Plugin {
	t.Helper()
	p := New(newIfs(podTap, otherTap, uplinkIf))
	require.Equal(t, int32(0), p.SetSnatPolicy(&cnat.CnatSetSnatPolicy{Policy: cnat.CNAT_POLICY_K8S}).Retval)
	for _, sw := range []uint32{podTap, otherTap} {
		require.Equal(t, int32(0), p.SnatPolicyAddDelIf(&cnat.CnatSnatPolicyAddDelIf{SwIfIndex: interface_types.InterfaceIndex(sw), IsAdd: 1, Table: cnat.CNAT_POLICY_POD}).Retval)
	}
	require.Equal(t, int32(0), p.SetSnatAddresses(&cnat.CnatSetSnatAddresses{SnatIP6: addr(snat6).As16(), SwIfIndex: anyIfIdx}).Retval)
	mustUpdate(t, p, trans(vipPod, tcpProto, to6("["+pod6+"]:8080")))
	mustUpdate(t, p, trans(vipOth, tcpProto, to6("["+other6+"]:8080")))
	return p
}

// A pod that reaches itself through a VIP: cnat-input rewrites the VIP to
// the pod, and cnat-output sees pod → pod (K8S: src == dst) and source-NATs
// it. The reply comes back through cnat-input (the SNAT's return entry at
// INPUT) and cnat-output (cnat-input's return entry at OUTPUT) as VIP → pod.
func TestOutputSnatK8sHairpin(t *testing.T) {
	p := k8sHairpinPlugin(t)
	in := p.InputFeature(tcpFlow("["+pod6+"]:40001", vipPod, TCPSyn), at(0))
	require.Equal(t, Forward, in.Verdict)
	out := p.OutputFeature(in.Flow, podTap, podTap, at(0))
	require.Equal(t, Forward, out.Verdict, "steps: %v", out.Steps)
	assert.True(t, out.SNAT)
	assert.True(t, out.NewSession)
	assert.Equal(t, ap("["+snat6+"]:49152"), out.Flow.Src)
	assert.Equal(t, ap("["+pod6+"]:8080"), out.Flow.Dst)
	assert.Contains(t, out.Steps[0], "cnat-output: policy k8s: source")

	back := p.InputFeature(reply(out.Flow, TCPSyn|TCPAck), at(0))
	require.Equal(t, Forward, back.Verdict, "the SNAT's return entry is at INPUT")
	assert.Equal(t, ap("["+pod6+"]:8080"), back.Flow.Src)
	assert.Equal(t, ap("["+pod6+"]:40001"), back.Flow.Dst)
	final := p.OutputFeature(back.Flow, podTap, podTap, at(0))
	require.Equal(t, Forward, final.Verdict)
	assert.Equal(t, ap(vipPod), final.Flow.Src)
	assert.Equal(t, ap("["+pod6+"]:40001"), final.Flow.Dst)

	// The next packet of the flow hits both forward entries, same port.
	next := p.OutputFeature(p.InputFeature(tcpFlow("["+pod6+"]:40001", vipPod, TCPAck), at(1)).Flow, podTap, podTap, at(1))
	assert.Equal(t, ap("["+snat6+"]:49152"), next.Flow.Src)
	assert.False(t, next.NewSession)

	locs := map[uint8]int{}
	for _, d := range p.SessionDump() {
		locs[d.Session.Location]++
	}
	assert.Equal(t, map[uint8]int{locInput: 2, locOutput: 2}, locs, "cnat-input's pair and cnat-output's pair")
	assert.False(t, p.Routes(addr(snat6)), "the SNAT return learns no client")
	assert.Empty(t, p.Violations())
}

// Under K8S, a pod reaching another pod and a client from the uplink reaching
// a pod keep their sources: rule 1 (HOST) and 2 (INCLUDE) do not apply, one of
// the interfaces is in the POD table, and src != dst.
func TestOutputSnatK8sKeepsOtherClients(t *testing.T) {
	p := k8sHairpinPlugin(t)
	in := p.InputFeature(tcpFlow("["+pod6+"]:40002", vipOth, TCPSyn), at(0))
	out := p.OutputFeature(in.Flow, podTap, otherTap, at(0))
	assert.Equal(t, Pass, out.Verdict)
	assert.Equal(t, ap("["+pod6+"]:40002"), out.Flow.Src)
	assert.Contains(t, out.Steps, "cnat-output: policy k8s: TCP ["+pod6+"]:40002 → ["+other6+"]:8080 not source-NATed")

	vip := p.VIP(tcpFlow("[2001:db8::7]:40003", vipPod, TCPSyn), at(0))
	require.Equal(t, Forward, vip.Verdict)
	out = p.OutputFeature(vip.Flow, uplinkIf, podTap, at(0))
	assert.Equal(t, Pass, out.Verdict)
	assert.Equal(t, ap("[2001:db8::7]:40003"), out.Flow.Src)
	assert.Empty(t, p.Violations())
}

// cnat-output evaluates the same policy functions as cnat-snat, with the
// packet's RX and TX interfaces; policy NONE (the default) source-NATs every
// new flow. Without an SNAT address of the family nothing is translated.
func TestOutputSnatPolicies(t *testing.T) {
	flow := tcpFlow("[2001:db8::7]:40000", "["+pod6+"]:8080", TCPSyn)
	for _, c := range []struct {
		name     string
		policy   cnat.CnatSnatPolicies
		tables   map[uint32]cnat.CnatSnatPolicyTable
		snatIP   string
		src      string // the source the flow leaves with; "" = kept
		inIf, ox uint32
	}{
		{"none source-NATs everything", cnat.CNAT_POLICY_NONE, nil, snat6, snat6, uplinkIf, podTap},
		{"none without an IPv6 address", cnat.CNAT_POLICY_NONE, nil, "::", "", uplinkIf, podTap},
		{"if-pfx, RX interface included", cnat.CNAT_POLICY_IF_PFX, map[uint32]cnat.CnatSnatPolicyTable{uplinkIf: cnat.CNAT_POLICY_INCLUDE_V6}, snat6, snat6, uplinkIf, podTap},
		{"if-pfx, RX interface not included", cnat.CNAT_POLICY_IF_PFX, map[uint32]cnat.CnatSnatPolicyTable{podTap: cnat.CNAT_POLICY_INCLUDE_V6}, snat6, "", uplinkIf, podTap},
		{"k8s, neither interface a pod's", cnat.CNAT_POLICY_K8S, nil, snat6, snat6, uplinkIf, otherTap},
		{"k8s, TX interface in HOST", cnat.CNAT_POLICY_K8S, map[uint32]cnat.CnatSnatPolicyTable{podTap: cnat.CNAT_POLICY_HOST}, snat6, "", uplinkIf, podTap},
		{"k8s, TX interface a pod's", cnat.CNAT_POLICY_K8S, map[uint32]cnat.CnatSnatPolicyTable{podTap: cnat.CNAT_POLICY_POD}, snat6, "", uplinkIf, podTap},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := New(newIfs(podTap, otherTap, uplinkIf))
			require.Equal(t, int32(0), p.SetSnatPolicy(&cnat.CnatSetSnatPolicy{Policy: c.policy}).Retval)
			for sw, table := range c.tables {
				require.Equal(t, int32(0), p.SnatPolicyAddDelIf(&cnat.CnatSnatPolicyAddDelIf{SwIfIndex: interface_types.InterfaceIndex(sw), IsAdd: 1, Table: table}).Retval)
			}
			p.SetSnatAddresses(&cnat.CnatSetSnatAddresses{SnatIP6: addr(c.snatIP).As16(), SwIfIndex: anyIfIdx})
			r := p.OutputFeature(flow, c.inIf, c.ox, at(0))
			if c.src == "" {
				assert.Equal(t, Pass, r.Verdict)
				assert.Equal(t, flow.Src, r.Flow.Src)
				return
			}
			require.Equal(t, Forward, r.Verdict)
			assert.Equal(t, addr(c.src), r.Flow.Src.Addr())
			assert.Equal(t, flow.Dst, r.Flow.Dst)
		})
	}
}

// The K8S rule for traffic from outside the pods spares the SNAT address's
// own flows, so that cnat-output does not source-NAT a flow twice.
func TestOutputSnatK8sSparesTheSNATAddress(t *testing.T) {
	p := New(newIfs(podTap, otherTap, uplinkIf))
	require.Equal(t, int32(0), p.SetSnatPolicy(&cnat.CnatSetSnatPolicy{Policy: cnat.CNAT_POLICY_K8S}).Retval)
	p.SetSnatAddresses(&cnat.CnatSetSnatAddresses{SnatIP6: addr(snat6).As16(), SwIfIndex: anyIfIdx})
	r := p.OutputFeature(tcpFlow("["+snat6+"]:50000", "[2001:db8::9]:443", TCPSyn), uplinkIf, otherTap, at(0))
	assert.Equal(t, Pass, r.Verdict)
}

// With every source port taken, a flow the policy source-NATs is dropped.
func TestOutputSnatDropsWithoutPorts(t *testing.T) {
	p := New(newIfs(podTap, otherTap, uplinkIf))
	p.SetSnatAddresses(&cnat.CnatSetSnatAddresses{SnatIP6: addr(snat6).As16(), SwIfIndex: anyIfIdx})
	for {
		if _, ok := p.ports.alloc(protoTCP); !ok {
			break
		}
	}
	r := p.OutputFeature(tcpFlow("[2001:db8::7]:40000", "["+pod6+"]:8080", TCPSyn), uplinkIf, podTap, at(0))
	assert.Equal(t, Drop, r.Verdict)
	assert.Equal(t, "cnat: no more free ports", r.DropReason)
	assert.Empty(t, p.SessionDump())
}
