package cnat

import (
	"fmt"
	"net/netip"
	"time"

	"go.fd.io/govpp/binapi/cnat"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip_types"

	"github.com/vppsvc/vppsvc/fakevpp/internal/apiaddr"
)

// snatConfig is cnat_snat_policy_main_t plus the cnat-snat feature bindings
// (README.md#snat-policies).
type snatConfig struct {
	// ip4 and ip6 are the SNAT addresses. They share one SwIfIndex. VPP only
	// ever sets their resolved flag (CnatSetSnatAddresses never clears it;
	// only losing an interface address does).
	ip4, ip6 endpoint
	policy   cnat.CnatSnatPolicies
	// ifSets are the INCLUDE_V4, INCLUDE_V6, POD and HOST interface tables.
	ifSets [4]map[uint32]bool
	// exclude holds the destinations never source-NATed.
	exclude map[excludeKey]bool
	// features are the interfaces with cnat-snat-ip4 ([0]) and
	// cnat-snat-ip6 ([1]) enabled on the ip4-unicast / ip6-unicast arc.
	features [2]map[uint32]bool
}

// excludeKey is an excluded prefix as VPP keys it: the address masked to the
// length, and the length as sent (an IPv4 length above 32 masks like /32).
type excludeKey struct {
	addr netip.Addr
	len  uint8
}

// newSnatConfig is the state at VPP start: policy NONE, no address (both
// unresolved, SwIfIndex 0 as in VPP's zeroed global), empty tables.
func newSnatConfig() snatConfig {
	c := snatConfig{
		ip4:     endpoint{addr: netip.IPv4Unspecified()},
		ip6:     endpoint{addr: netip.IPv6Unspecified(), ip6: true},
		policy:  cnat.CNAT_POLICY_NONE,
		exclude: map[excludeKey]bool{},
	}
	for i := range c.ifSets {
		c.ifSets[i] = map[uint32]bool{}
	}
	for i := range c.features {
		c.features[i] = map[uint32]bool{}
	}
	return c
}

func famIndex(ip6 bool) int {
	if ip6 {
		return 1
	}
	return 0
}

// SetSnatAddresses handles CnatSetSnatAddresses (always 0). SwIfIndex ~0 uses
// the literal addresses, both of which then count as set — an IPv6 address
// left zero makes cnat-snat-ip6 translate sources to "::". Any other index
// takes the interface's first address of each family once it has one (0 is
// local0, which never has one).
func (p *Plugin) SetSnatAddresses(m *cnat.CnatSetSnatAddresses) *cnat.CnatSetSnatAddressesReply {
	p.mu.Lock()
	defer p.mu.Unlock()
	sw := uint32(m.SwIfIndex)
	if sw == 0 {
		p.violate("cnat SNAT addresses use SwIfIndex 0 (local0)",
			"CnatSetSnatAddresses: the addresses are taken from local0, which has none; set SwIfIndex to ^uint32(0) for literal addresses")
	}
	p.snat.ip4.addr, p.snat.ip4.sw = netip.AddrFrom4(m.SnatIP4), sw
	p.snat.ip6.addr, p.snat.ip6.sw = netip.AddrFrom16(m.SnatIP6), sw
	p.resolve(&p.snat.ip4)
	p.resolve(&p.snat.ip6)
	return &cnat.CnatSetSnatAddressesReply{Retval: rvOK}
}

// GetSnatAddresses handles CnatGetSnatAddresses: the stored addresses
// (resolved or not) and the SwIfIndex; ID is always 0.
func (p *Plugin) GetSnatAddresses(*cnat.CnatGetSnatAddresses) *cnat.CnatGetSnatAddressesReply {
	p.mu.Lock()
	defer p.mu.Unlock()
	return &cnat.CnatGetSnatAddressesReply{
		Retval:    rvOK,
		SnatIP4:   ip_types.IP4Address(p.snat.ip4.addr.As4()),
		SnatIP6:   ip_types.IP6Address(p.snat.ip6.addr.As16()),
		SwIfIndex: interface_types.InterfaceIndex(p.snat.ip6.sw),
	}
}

// SnatPolicyAddDelIf handles CnatSnatPolicyAddDelIf: -2 for an interface that
// does not exist (checked first), -7 for Table > 3, else 0 with set
// semantics. Entries outlive the interface.
func (p *Plugin) SnatPolicyAddDelIf(m *cnat.CnatSnatPolicyAddDelIf) *cnat.CnatSnatPolicyAddDelIfReply {
	p.mu.Lock()
	defer p.mu.Unlock()
	sw := uint32(m.SwIfIndex)
	if !p.ifExists(sw) {
		return &cnat.CnatSnatPolicyAddDelIfReply{Retval: rvInvalidSwIfIndex}
	}
	if int(m.Table) >= len(p.snat.ifSets) {
		return &cnat.CnatSnatPolicyAddDelIfReply{Retval: rvInvalidValue}
	}
	if m.IsAdd != 0 {
		p.snat.ifSets[m.Table][sw] = true
	} else {
		delete(p.snat.ifSets[m.Table], sw)
	}
	return &cnat.CnatSnatPolicyAddDelIfReply{Retval: rvOK}
}

// SnatPolicyAddDelExcludePfx handles CnatSnatPolicyAddDelExcludePfx: add is
// idempotent and returns 0; deleting a prefix that is not there returns +1.
// The address is masked to the length first, so 10.1.1.5/24 and 10.1.1.0/24
// are the same entry.
func (p *Plugin) SnatPolicyAddDelExcludePfx(m *cnat.CnatSnatPolicyAddDelExcludePfx) *cnat.CnatSnatPolicyAddDelExcludePfxReply {
	p.mu.Lock()
	defer p.mu.Unlock()
	a, ok := apiaddr.From(m.Prefix.Address)
	if !ok {
		p.violate("cnat excluded prefix with an invalid address family",
			fmt.Sprintf("CnatSnatPolicyAddDelExcludePfx %s: VPP uses an undefined prefix; the fake ignores it", m.Prefix))
		return &cnat.CnatSnatPolicyAddDelExcludePfxReply{Retval: rvOK}
	}
	if m.Prefix.Len > 128 || (a.Is4() && m.Prefix.Len > 32) {
		p.violate("cnat excluded prefix length out of range",
			fmt.Sprintf("CnatSnatPolicyAddDelExcludePfx %s/%d: VPP indexes its mask table with the raw length", a, m.Prefix.Len))
		if m.Prefix.Len > 128 {
			return &cnat.CnatSnatPolicyAddDelExcludePfxReply{Retval: rvOK}
		}
	}
	k := excludeKey{addr: maskAddr(a, m.Prefix.Len), len: m.Prefix.Len}
	if m.IsAdd != 0 {
		p.snat.exclude[k] = true
		return &cnat.CnatSnatPolicyAddDelExcludePfxReply{Retval: rvOK}
	}
	if !p.snat.exclude[k] {
		return &cnat.CnatSnatPolicyAddDelExcludePfxReply{Retval: 1}
	}
	delete(p.snat.exclude, k)
	return &cnat.CnatSnatPolicyAddDelExcludePfxReply{Retval: rvOK}
}

// SetSnatPolicy handles CnatSetSnatPolicy: 0 for NONE, IF_PFX and K8S, +1 for
// anything else (the policy is then unchanged).
func (p *Plugin) SetSnatPolicy(m *cnat.CnatSetSnatPolicy) *cnat.CnatSetSnatPolicyReply {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch m.Policy {
	case cnat.CNAT_POLICY_NONE, cnat.CNAT_POLICY_IF_PFX, cnat.CNAT_POLICY_K8S:
		p.snat.policy = m.Policy
		return &cnat.CnatSetSnatPolicyReply{Retval: rvOK}
	}
	return &cnat.CnatSetSnatPolicyReply{Retval: 1}
}

// EnableSnatFeature records a FeatureEnableDisable of cnat-snat-ip4 (ip6 =
// false, arc ip4-unicast) or cnat-snat-ip6 (arc ip6-unicast) on an interface.
// The core validates the message and answers it; no cnat message enables the
// feature (README.md#where-cnat-acts).
func (p *Plugin) EnableSnatFeature(swIfIndex uint32, ip6 bool, enable bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if enable {
		p.snat.features[famIndex(ip6)][swIfIndex] = true
	} else {
		delete(p.snat.features[famIndex(ip6)], swIfIndex)
	}
}

// SnatFeatureEnabled reports whether cnat-snat-ip4/ip6 is enabled on sw.
func (p *Plugin) SnatFeatureEnabled(swIfIndex uint32, ip6 bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.snat.features[famIndex(ip6)][swIfIndex]
}

// Snat is the cnat-snat-ip4 / cnat-snat-ip6 feature node (cnat_snat_node_fn,
// README.md#snat-policies) for a packet received on inIf. Call it for every packet on the
// ip4-unicast / ip6-unicast arc; it passes packets untouched when the feature
// is not enabled on inIf. The node's position among the other ingress
// features is not constrained by VPP (no runs_before/after).
//
//   - A packet matching any FIB-location session — including the VIP path's
//     sessions — is translated by it.
//   - Otherwise, if the policy says so and the SNAT address of the family is
//     set, the source becomes snat_ip:port with a newly allocated port (the
//     ICMP echo identifier too); the destination is kept. Port exhaustion,
//     and protocols without a port allocator (SCTP), drop the packet. A
//     return entry (flagged as source-NATed) is created and snat_ip becomes
//     a learned client, so replies reach VIP.
//
// The verdict is Forward when translated (continue with the next feature and
// the FIB lookup on the rewritten packet), else Pass or Drop. On this node the
// egress interface is not known yet (VPP reads the buffer's TX slot, ~0 on
// input), so the K8S policy's out_if tests never match.
func (p *Plugin) Snat(f Flow, inIf uint32, now time.Time) Result {
	p.mu.Lock()
	defer p.mu.Unlock()
	f = f.normalized()
	r := Result{Verdict: Pass, Flow: f, TranslationID: invalidIndex}
	ip6 := f.is6()
	if !p.snat.features[famIndex(ip6)][inIf] {
		return r
	}
	key, ok := sessionKeyOf(f)
	if !ok {
		r.step("cnat-snat: %s is not handled by cnat, not translated", describeProto(f))
		return r
	}
	if s := p.sessions[key]; s != nil {
		return hitResult(s, f, now, r, "cnat-snat")
	}
	if !p.snatPolicy(key, ip6, inIf, invalidIndex) {
		r.step("cnat-snat: policy %s: %s not source-NATed", policyName(p.snat.policy), f)
		return r
	}
	ep := p.snat.ip4
	if ip6 {
		ep = p.snat.ip6
	}
	if !ep.resolved {
		r.step("cnat-snat: no SNAT address for %s, not translated", familyName(ip6))
		return r
	}
	if ep.addr.IsUnspecified() {
		p.violate("cnat-snat translates sources to the unspecified address",
			fmt.Sprintf("the %s SNAT address is %s (set by CnatSetSnatAddresses with SwIfIndex ~0)", familyName(ip6), ep.addr))
	}
	return p.newSnatSession(f, key, ep.addr, sessHasSNAT, now, r, "cnat-snat", "", " (new session)")
}

// newSnatSession source-NATs a new flow to snatIP with a port from the
// allocator (the ICMP echo identifier too; destination kept), as
// cnat-snat and cnat-output both do, and creates its session pair; the
// return entry gets returnFlags. No free port drops the packet. node,
// prefix and suffix shape the trace step.
func (p *Plugin) newSnatSession(f Flow, key sessionKey, snatIP netip.Addr, returnFlags uint8, now time.Time, r Result, node, prefix, suffix string) Result {
	sport, ok := p.ports.alloc(f.Proto)
	if !ok {
		r.Verdict = Drop
		r.DropReason = "cnat: no more free ports"
		r.step("%s: no more free %s source ports, drop", node, protoName(f.Proto))
		return r
	}
	dport := sport
	if f.Proto == protoTCP || f.Proto == protoUDP {
		dport = f.Dst.Port()
	}
	fwd := &session{
		key:    key,
		newSrc: netip.AddrPortFrom(snatIP, sport),
		newDst: netip.AddrPortFrom(f.Dst.Addr(), dport),
		flags:  sessNoClient | sessAllocPort,
	}
	created := p.createSessions(fwd, now, true, returnFlags)
	r.Matched = true
	r.Verdict = Forward
	r.NewSession = true
	r.SNAT = true
	r.Flow = fwd.rewrite(f)
	fwd.updateLifetime(f)
	r.step("%s: %ssource %s → %s%s", node, prefix, f.Src, fwd.newSrc, suffix)
	if !created {
		r.step("%s: return entry %s → %s already exists and is kept", node, fwd.newDst, fwd.newSrc)
	}
	return r
}

// snatPolicy evaluates the configured policy (cnat_snat_policy_none /
// _if_pfx / _k8s) on the session key: src and dst of the packet.
func (p *Plugin) snatPolicy(k sessionKey, ip6 bool, inIf, outIf uint32) bool {
	c := &p.snat
	include := c.ifSets[cnat.CNAT_POLICY_INCLUDE_V4]
	if ip6 {
		include = c.ifSets[cnat.CNAT_POLICY_INCLUDE_V6]
	}
	src, dst := k.src.Addr(), k.dst.Addr()
	switch c.policy {
	case cnat.CNAT_POLICY_IF_PFX:
		return include[inIf] && !p.excluded(dst)
	case cnat.CNAT_POLICY_K8S:
		if c.ifSets[cnat.CNAT_POLICY_HOST][outIf] {
			return false
		}
		if include[inIf] && !p.excluded(dst) {
			return true
		}
		pods := c.ifSets[cnat.CNAT_POLICY_POD]
		if !pods[inIf] && !pods[outIf] {
			snatIP := c.ip4.addr
			if ip6 {
				snatIP = c.ip6.addr
			}
			return src != snatIP
		}
		return src == dst
	}
	return true
}

// excluded reports whether a falls in an excluded prefix of its family.
func (p *Plugin) excluded(a netip.Addr) bool {
	for k := range p.snat.exclude {
		if k.addr.Is6() != a.Is6() {
			continue
		}
		if maskAddr(a, k.len) == k.addr {
			return true
		}
	}
	return false
}

// maskAddr keeps the first n bits of a (all of them when n is longer).
func maskAddr(a netip.Addr, n uint8) netip.Addr {
	bits := int(n)
	if bits > a.BitLen() {
		bits = a.BitLen()
	}
	pfx, err := a.Prefix(bits)
	if err != nil {
		return a
	}
	return pfx.Addr()
}

func policyName(pol cnat.CnatSnatPolicies) string {
	switch pol {
	case cnat.CNAT_POLICY_NONE:
		return "none"
	case cnat.CNAT_POLICY_IF_PFX:
		return "if-pfx"
	case cnat.CNAT_POLICY_K8S:
		return "k8s"
	}
	return fmt.Sprintf("policy-%d", pol)
}

func familyName(ip6 bool) string {
	if ip6 {
		return "IPv6"
	}
	return "IPv4"
}
