package cnat

import "time"

// outputSnat is the second half of cnat_output_feature_fn: the source NAT
// of a new flow (no OUTPUT entry matched) by the SNAT policy, on the packet
// as it leaves, after every rewrite before it (cnat-input's DNAT, the VIP
// path). VPP asks cnat_snat_policy_main.snat_policy, the function the
// configured policy installed (cnat_set_snat_policy; cnat_snat_policy_none at
// start, which source-NATs everything), with the session key of the
// outgoing packet, the buffer's RX interface (inIf, where the packet came
// in) and its TX interface (outIf, where it leaves). So K8S's rule
// "src == dst" (cnat_snat_policy_k8s) sees a pod that reached itself
// through a VIP, which cnat-snat on ip6-unicast never does.
//
// A flow the policy picks is source-NATed only when the family's SNAT
// address is not zero (VPP tests the address, not its resolved flag):
// source snat_ip:port with a port from the allocator (the ICMP echo
// identifier too), destination kept. Its return entry sits at INPUT, where
// cnat-input on the interface the replies arrive on turns them back, and
// learns no client (CNAT_SESSION_FLAG_NO_CLIENT | CNAT_SESSION_RETRY_SNAT).
// No free port drops the packet.
func (p *Plugin) outputSnat(f Flow, key sessionKey, inIf, outIf uint32, now time.Time, r Result) Result {
	ip6 := f.is6()
	snatIP := p.snat.ip4.addr
	if ip6 {
		snatIP = p.snat.ip6.addr
	}
	if !p.snatPolicy(key, ip6, inIf, outIf) {
		if !snatIP.IsUnspecified() {
			r.step("cnat-output: policy %s: %s not source-NATed", policyName(p.snat.policy), f)
		}
		return r
	}
	if snatIP.IsUnspecified() {
		return r // no SNAT address of the family: nothing to do, silently
	}
	return p.newSnatSession(f, key, snatIP, sessNoClient, now, r, "cnat-output",
		"policy "+policyName(p.snat.policy)+": ", " (new session; replies turned back by cnat-input)")
}
