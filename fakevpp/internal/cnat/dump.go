package cnat

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"

	"go.fd.io/govpp/binapi/cnat"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip_types"
)

// TranslationDump answers CnatTranslationDump (cnat_translation_send_details):
// one record per translation in ID order with ID, Vip, IPProto, LbType and
// every path, active or not, with its endpoints as configured (addresses only
// when resolved) and its internal flags (1 = active). IsRealIP, Flags and
// FlowHashConfig are not filled by VPP and are always 0.
func (p *Plugin) TranslationDump() []*cnat.CnatTranslationDetails {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*cnat.CnatTranslationDetails
	for _, t := range p.translations {
		if t == nil {
			continue
		}
		d := &cnat.CnatTranslationDetails{Translation: cnat.CnatTranslation{
			Vip:     t.vip.encode(),
			ID:      t.id,
			IPProto: ip_types.IPProto(t.proto),
			LbType:  t.lbType,
			NPaths:  uint32(len(t.paths)),
		}}
		for _, pa := range t.paths {
			d.Translation.Paths = append(d.Translation.Paths, cnat.CnatEndpointTuple{
				DstEp: pa.dst.encode(),
				SrcEp: pa.src.encode(),
				Flags: pa.flags,
			})
		}
		out = append(out, d)
	}
	return out
}

// SessionDump answers CnatSessionDump (cnat_session_send_details): one record
// per entry, forward and return entries separately. Src and Dst are the
// matched 5-tuple, New the new destination only, Location 255 (FIB),
// Timestamp 0, endpoints with SwIfIndex ~0. VPP walks its hash table, so its
// order is arbitrary; the fake lists entries in creation order.
func (p *Plugin) SessionDump() []*cnat.CnatSessionDetails {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*cnat.CnatSessionDetails
	for _, s := range p.sortedSessions() {
		ip6 := s.key.dst.Addr().Is6()
		out = append(out, &cnat.CnatSessionDetails{Session: cnat.CnatSession{
			Src:      sessionEndpoint(s.key.src, ip6),
			Dst:      sessionEndpoint(s.key.dst, ip6),
			New:      sessionEndpoint(s.newDst, ip6),
			IPProto:  ip_types.IPProto(s.key.proto),
			Location: s.key.loc,
		}})
	}
	return out
}

func sessionEndpoint(ap netip.AddrPort, ip6 bool) cnat.CnatEndpoint {
	e := endpoint{addr: as46(ap.Addr(), ip6), sw: invalidIndex, ip6: ip6, port: ap.Port(), resolved: true}
	out := e.encode()
	out.SwIfIndex = interface_types.InterfaceIndex(invalidIndex)
	return out
}

// Dump renders the plugin state as stable text for golden tests:
// translations with their paths, clients (cnat FIB entries), the SNAT
// configuration, the session count and the allocated ports.
func (p *Plugin) Dump() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var b strings.Builder
	b.WriteString("translations:\n")
	for _, t := range p.translations {
		if t == nil {
			continue
		}
		fmt.Fprintf(&b, "  [%d] %s %s %s lb:%s fhc:%s flags:%s\n", t.id, t.vip, protoName(t.proto),
			exclusiveName(t.flags&flagExclusive != 0), lbName(t.lbType), fhcName(t.fhc), trFlagsName(t.flags))
		for _, pa := range t.paths {
			state := "inactive"
			if pa.active() {
				state = "active"
			}
			if extra := pa.flags &^ trkActive; extra != 0 {
				state += fmt.Sprintf(" flags:0x%x", extra)
			}
			fmt.Fprintf(&b, "      %s -> %s %s\n", pa.src, pa.dst, state)
		}
	}
	b.WriteString("clients:\n")
	addrs := make([]netip.Addr, 0, len(p.clients))
	for a := range p.clients {
		addrs = append(addrs, a)
	}
	sort.Slice(addrs, func(i, j int) bool { return addrs[i].Less(addrs[j]) })
	for _, a := range addrs {
		c := p.clients[a]
		fmt.Fprintf(&b, "  %s %s tr:%d sess:%d\n", a, exclusiveName(c.exclusive), c.trRef, c.sessRef)
	}
	s := &p.snat
	b.WriteString("snat:\n")
	fmt.Fprintf(&b, "  ip4: %s\n  ip6: %s\n  policy: %s\n", snatAddrName(s.ip4), snatAddrName(s.ip6), policyName(s.policy))
	for i, name := range []string{"include-v4", "include-v6", "pod", "host"} {
		fmt.Fprintf(&b, "  %s: %s\n", name, swList(s.ifSets[i]))
	}
	var pfx []string
	for k := range s.exclude {
		pfx = append(pfx, fmt.Sprintf("%s/%d", k.addr, k.len))
	}
	sort.Strings(pfx)
	fmt.Fprintf(&b, "  exclude: %s\n", listOrDash(pfx))
	fmt.Fprintf(&b, "  cnat-snat-ip4: %s\n  cnat-snat-ip6: %s\n", swList(s.features[0]), swList(s.features[1]))
	fwd := 0
	for _, se := range p.sessions {
		if !se.isReturn() {
			fwd++
		}
	}
	fmt.Fprintf(&b, "sessions: %d (%d forward, %d return)\n", len(p.sessions), fwd, len(p.sessions)-fwd)
	fmt.Fprintf(&b, "ports in use: tcp %d udp %d icmp %d icmp6 %d\n",
		p.ports.inUse(protoTCP), p.ports.inUse(protoUDP), p.ports.inUse(protoICMP), p.ports.inUse(protoICMP6))
	return b.String()
}

func exclusiveName(exclusive bool) string {
	if exclusive {
		return "exclusive"
	}
	return "interposed"
}

func lbName(t cnat.CnatLbType) string {
	switch t {
	case cnat.CNAT_LB_TYPE_DEFAULT:
		return "default"
	case cnat.CNAT_LB_TYPE_MAGLEV:
		return "maglev"
	}
	return fmt.Sprintf("lb-%d", t)
}

func fhcName(fhc uint32) string {
	if fhc == 0 {
		return "default"
	}
	return fmt.Sprintf("0x%x", fhc)
}

func trFlagsName(f uint8) string {
	var parts []string
	if f&flagAllocPort != 0 {
		parts = append(parts, "alloc-port")
	}
	if f&flagNoReturnSession != 0 {
		parts = append(parts, "no-return-session")
	}
	if rest := f &^ (flagAllocPort | flagNoReturnSession | flagExclusive); rest != 0 {
		parts = append(parts, fmt.Sprintf("0x%x", rest))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, "|")
}

func snatAddrName(ep endpoint) string {
	sw := fmt.Sprintf("%d", ep.sw)
	if ep.sw == invalidIndex {
		sw = "~0"
	}
	state := "unresolved"
	if ep.resolved {
		state = "resolved"
	}
	return fmt.Sprintf("%s sw_if_index %s %s", ep.addr, sw, state)
}

func swList(set map[uint32]bool) string {
	var l []uint32
	for sw := range set {
		l = append(l, sw)
	}
	sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
	s := make([]string, len(l))
	for i, sw := range l {
		s[i] = fmt.Sprintf("%d", sw)
	}
	return listOrDash(s)
}

func listOrDash(l []string) string {
	if len(l) == 0 {
		return "-"
	}
	return strings.Join(l, " ")
}
