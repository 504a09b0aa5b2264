package vppcfg

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// CNATLBType is cnat's load-balancing algorithm. VPP fixes it when a
// translation is created, so changing it makes the reconciler delete and
// re-create the translation.
type CNATLBType uint8

const (
	CNATLBDefault CNATLBType = iota
	CNATLBMaglev
)

func (t CNATLBType) String() string {
	if t == CNATLBMaglev {
		return "maglev"
	}
	return "default"
}

// CNATFlowHash selects the packet fields cnat hashes to pick a path; zero
// means VPP's default (addresses, ports and protocol). Like the LB type it is
// fixed at creation.
type CNATFlowHash uint8

const (
	CNATHashSrcIP CNATFlowHash = 1 << iota
	CNATHashDstIP
	CNATHashSrcPort
	CNATHashDstPort
	CNATHashProto
)

// CNATPath is one backend of a translation. A zero Src address (0.0.0.0 or ::
// of the backend's family, or invalid) means no source NAT; a non-zero Src
// port pins the translated source port.
type CNATPath struct {
	Src netip.AddrPort
	Dst netip.AddrPort
}

func (p CNATPath) String() string {
	if !p.Src.Addr().IsValid() || p.Src.Addr().IsUnspecified() {
		return p.Dst.String()
	}
	return p.Src.String() + "->" + p.Dst.String()
}

// CNATTranslation load-balances a VIP address:port/protocol over paths. An
// update keeps the translation's VPP ID; sessions already created keep their
// backend. Paths must not be empty (VPP 25.10 would abort).
type CNATTranslation struct {
	VIP      netip.AddrPort
	Protocol Protocol
	// IsRealIP marks the VIP as an address that also belongs to a host or
	// interface (a node IP): unmatched traffic to it is forwarded, not dropped.
	IsRealIP bool
	// AllocPort allocates source ports for source-NATed flows.
	AllocPort bool
	// NoReturnSession leaves replies untranslated.
	NoReturnSession bool
	LBType          CNATLBType
	FlowHash        CNATFlowHash
	// Paths in canonical order (SortCNATPaths).
	Paths []CNATPath
}

// cnatTranslationKey keys a translation by VIP address, port and protocol, as cnat does.
func cnatTranslationKey(vip netip.AddrPort, proto Protocol) Key {
	return Key{Kind: KindCNATTranslation, Name: addrPortProto(vip, proto)}
}

func (t *CNATTranslation) Key() Key   { return cnatTranslationKey(t.VIP, t.Protocol) }
func (t *CNATTranslation) kind() Kind { return KindCNATTranslation }
func (t *CNATTranslation) Equal(o Item) bool {
	other, ok := o.(*CNATTranslation)
	return ok && t.VIP == other.VIP && t.Protocol == other.Protocol && t.IsRealIP == other.IsRealIP &&
		t.AllocPort == other.AllocPort && t.NoReturnSession == other.NoReturnSession &&
		t.LBType == other.LBType && t.FlowHash == other.FlowHash && slices.Equal(t.Paths, other.Paths)
}

// NeedsRecreate reports whether moving from old to t requires deleting and
// re-creating the translation, because VPP keeps the LB type and flow hash of
// the first create.
func (t *CNATTranslation) NeedsRecreate(old Item) bool {
	o, ok := old.(*CNATTranslation)
	return ok && (o.LBType != t.LBType || o.FlowHash != t.FlowHash)
}

func (t *CNATTranslation) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cnat translation %s %s lb %s", t.Protocol, t.VIP, t.LBType)
	if t.FlowHash != 0 {
		fmt.Fprintf(&b, " hash 0x%x", uint8(t.FlowHash))
	}
	if t.IsRealIP {
		b.WriteString(" real")
	}
	if t.AllocPort {
		b.WriteString(" alloc-port")
	}
	if t.NoReturnSession {
		b.WriteString(" no-return-session")
	}
	b.WriteString(" ->")
	for _, p := range t.Paths {
		b.WriteString(" " + p.String())
	}
	return b.String()
}

// SortCNATPaths puts paths in canonical order (destination, then source).
func SortCNATPaths(paths []CNATPath) { slices.SortFunc(paths, comparePaths) }

func comparePaths(a, b CNATPath) int {
	if c := a.Dst.Compare(b.Dst); c != 0 {
		return c
	}
	return a.Src.Compare(b.Src)
}

// Paths and flags change in place (the translation keeps its VPP ID); the LB
// type and flow hash only by re-creating it (NeedsRecreate). VPP's dump shows
// IsRealIP, the flags and the flow hash as 0.
func init() {
	register(kindSpec[*CNATTranslation]{
		Kind: KindCNATTranslation, Name: "cnat-translation", NewHandleOnUpdate: true,
		// cnat keeps the real-IP flag of a VIP address as its first
		// translation set it, for every port.
		Shared: func(t *CNATTranslation) (string, string) {
			return "real IP of " + t.VIP.Addr().String(), strconv.FormatBool(t.IsRealIP)
		},
		Validate:      validateCNAT,
		Canonical:     canonicalTranslation,
		NeedsRecreate: func(old, new *CNATTranslation) bool { return new.NeedsRecreate(old) },
		Unobservable: func(o, d *CNATTranslation) *CNATTranslation {
			c := *o
			c.IsRealIP, c.AllocPort, c.NoReturnSession, c.FlowHash = d.IsRealIP, d.AllocPort, d.NoReturnSession, d.FlowHash
			return &c
		},
		CLI:         cnatTranslationCLI,
		Printable:   cnatTranslationPrintable,
		Translation: cnatFrontendTranslation,
		Untagged:    func(v *CNATTranslation) untaggedTraits { return untaggedTraits{addr: v.VIP.Addr()} },
	})
}

func validateCNAT(k Key, v *CNATTranslation) error {
	if !v.VIP.Addr().IsValid() {
		return invalid(k, "VIP", "invalid address")
	}
	switch v.Protocol {
	case ProtoTCP, ProtoUDP, ProtoSCTP, ProtoExperiment:
	default:
		return invalid(k, "Protocol", "%s not supported by cnat translations (tcp, udp, sctp, and 253 for inert ones)", v.Protocol)
	}
	if v.LBType > CNATLBMaglev {
		return invalid(k, "LBType", "unknown type %d", v.LBType)
	}
	if len(v.Paths) == 0 {
		return invalid(k, "Paths", "empty (VPP 25.10 aborts on a translation without paths)")
	}
	for i, p := range v.Paths {
		f := fmt.Sprintf("Paths[%d]", i)
		if !p.Dst.Addr().IsValid() || p.Dst.Addr().Is4() != v.VIP.Addr().Is4() {
			return invalid(k, f+".Dst", "%s is not an address of the VIP's family", p.Dst)
		}
		if p.Dst.Port() == 0 {
			return invalid(k, f+".Dst", "port 0 (cnat would rewrite the destination port to 0)")
		}
		if s := p.Src.Addr(); s.IsValid() && !s.IsUnspecified() && s.Is4() != v.VIP.Addr().Is4() {
			return invalid(k, f+".Src", "%s is not an address of the VIP's family", s)
		}
	}
	return nil
}

// canonicalTranslation sorts the paths and writes "no source NAT" one way.
func canonicalTranslation(v *CNATTranslation) *CNATTranslation {
	norm := false
	for _, p := range v.Paths {
		norm = norm || canonicalSrc(p.Src, v.VIP.Addr()) != p.Src
	}
	if !norm && slices.IsSortedFunc(v.Paths, comparePaths) {
		return v
	}
	c := *v
	c.Paths = slices.Clone(v.Paths)
	for i := range c.Paths {
		c.Paths[i].Src = canonicalSrc(c.Paths[i].Src, v.VIP.Addr())
	}
	SortCNATPaths(c.Paths)
	return &c
}

// canonicalSrc writes "no source NAT" one way: the zero AddrPort when no
// port is pinned, the unspecified address of the VIP's family otherwise.
func canonicalSrc(src netip.AddrPort, vip netip.Addr) netip.AddrPort {
	if src.Addr().IsValid() && !src.Addr().IsUnspecified() {
		return src
	}
	if src.Port() == 0 {
		return netip.AddrPort{}
	}
	if vip.Is6() {
		return netip.AddrPortFrom(netip.IPv6Unspecified(), src.Port())
	}
	return netip.AddrPortFrom(netip.IPv4Unspecified(), src.Port())
}

func cnatTranslationCLI(t *CNATTranslation) []string {
	var b strings.Builder
	kind := "vip"
	if t.IsRealIP {
		kind = "real"
	}
	fmt.Fprintf(&b, "cnat translation add proto %s %s %s %d", t.Protocol, kind, t.VIP.Addr(), t.VIP.Port())
	for _, p := range t.Paths {
		b.WriteString(" to ")
		if src := p.Src.Addr(); src.IsValid() && !src.IsUnspecified() {
			fmt.Fprintf(&b, "%s %d", src, p.Src.Port())
		}
		fmt.Fprintf(&b, "->%s %d", p.Dst.Addr(), p.Dst.Port())
	}
	if t.LBType == CNATLBMaglev {
		b.WriteString(" maglev")
	}
	var api []string
	if t.AllocPort {
		api = append(api, "flags alloc-port")
	}
	if t.NoReturnSession {
		api = append(api, "flags no-return-session")
	}
	if t.FlowHash != 0 {
		api = append(api, fmt.Sprintf("flow-hash-config 0x%x", uint8(t.FlowHash)))
	}
	if len(api) > 0 {
		b.WriteString("  # api: " + strings.Join(api, ", "))
	}
	return []string{b.String()}
}

// printableCNATTranslation is CNATTranslation as the render document prints
// it.
type printableCNATTranslation struct {
	Protocol string `json:"protocol"`
	VIP      string `json:"vip"`
	// VIPKind is exclusive (cnat owns the address) or interposed (a real
	// address: unmatched traffic goes on as usual).
	VIPKind         string              `json:"vipKind"`
	LoadBalancing   string              `json:"loadBalancing"`
	FlowHash        []string            `json:"flowHash,omitempty"`
	AllocPort       bool                `json:"allocPort"`
	NoReturnSession bool                `json:"noReturnSession,omitempty"`
	Paths           []printableCNATPath `json:"paths"`
}

// printableCNATPath leaves the source out when the path does no source NAT.
type printableCNATPath struct {
	Source      string `json:"source,omitempty"`
	Destination string `json:"destination"`
}

func cnatTranslationPrintable(t *CNATTranslation, _ string) any {
	p := printableCNATTranslation{Protocol: t.Protocol.String(), VIP: printableAddrPort(t.VIP), VIPKind: vipKind(t),
		LoadBalancing: t.LBType.String(), FlowHash: flowHashNames(t.FlowHash), AllocPort: t.AllocPort,
		NoReturnSession: t.NoReturnSession, Paths: []printableCNATPath{}}
	for _, path := range t.Paths {
		pp := printableCNATPath{Destination: printableAddrPort(path.Dst)}
		if snats(path) {
			pp.Source = printableAddrPort(path.Src)
		}
		p.Paths = append(p.Paths, pp)
	}
	return p
}

// vipKind says whether cnat owns the VIP (exclusive) or sits in front of a
// real address (interposed).
func vipKind(t *CNATTranslation) string {
	if t.IsRealIP {
		return "interposed"
	}
	return "exclusive"
}

// snats tells whether a path rewrites the source address.
func snats(p CNATPath) bool {
	a := p.Src.Addr()
	return a.IsValid() && !a.IsUnspecified()
}

// flowHashNames names the fields of a flow hash; unknown bits stay visible
// in hex.
func flowHashNames(h CNATFlowHash) []string {
	var out []string
	for _, f := range []struct {
		bit  CNATFlowHash
		name string
	}{
		{CNATHashSrcIP, "src-ip"}, {CNATHashDstIP, "dst-ip"}, {CNATHashSrcPort, "src-port"},
		{CNATHashDstPort, "dst-port"}, {CNATHashProto, "proto"},
	} {
		if h&f.bit != 0 {
			out = append(out, f.name)
			h &^= f.bit
		}
	}
	if h != 0 {
		out = append(out, fmt.Sprintf("0x%x", uint8(h)))
	}
	return out
}

// cnatFrontendTranslation: the VIP is the frontend, the paths' destinations
// the backends; the flags say who owns the VIP, the LB type when it is not
// the default, and how many paths source-NAT.
func cnatFrontendTranslation(t *CNATTranslation) frontendTranslation {
	ft := frontendTranslation{Frontend: t.VIP, Protocol: t.Protocol, Name: "cnat-translation", Flags: []string{vipKind(t)}}
	if t.LBType == CNATLBMaglev {
		ft.Flags = append(ft.Flags, "maglev")
	}
	snat := 0
	for _, p := range t.Paths {
		ft.Backends = append(ft.Backends, p.Dst)
		if snats(p) {
			snat++
		}
	}
	if snat > 0 {
		ft.Flags = append(ft.Flags, fmt.Sprintf("snat %d/%d", snat, len(t.Paths)))
	}
	return ft
}
