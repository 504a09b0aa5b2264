package vppcfg

import (
	"fmt"
	"net/netip"
	"slices"
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

func (t *CNATTranslation) Key() Key { return CNATTranslationKey(t.VIP, t.Protocol) }
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
func SortCNATPaths(paths []CNATPath) {
	slices.SortFunc(paths, func(a, b CNATPath) int {
		if c := a.Dst.Compare(b.Dst); c != 0 {
			return c
		}
		return a.Src.Compare(b.Src)
	})
}

// RecreateOnChange is implemented by items some of whose fields VPP cannot
// change in place.
type RecreateOnChange interface {
	NeedsRecreate(old Item) bool
}

// CNATSnatPolicy decides which packets the cnat-snat feature translates.
type CNATSnatPolicy uint8

const (
	CNATSnatPolicyNone CNATSnatPolicy = iota
	CNATSnatPolicyIfPfx
	CNATSnatPolicyK8s
)

func (p CNATSnatPolicy) String() string {
	switch p {
	case CNATSnatPolicyIfPfx:
		return "if-pfx"
	case CNATSnatPolicyK8s:
		return "k8s"
	}
	return "none"
}

// CNATSnatConfig holds cnat's global source-NAT settings. There is one per VPP.
type CNATSnatConfig struct {
	SnatIP4, SnatIP6 netip.Addr
	Policy           CNATSnatPolicy
	// ExcludePrefixes are destinations never source-NATed, sorted.
	ExcludePrefixes []netip.Prefix
}

func (c *CNATSnatConfig) Key() Key { return CNATSnatConfigKey() }
func (c *CNATSnatConfig) Equal(o Item) bool {
	other, ok := o.(*CNATSnatConfig)
	return ok && c.SnatIP4 == other.SnatIP4 && c.SnatIP6 == other.SnatIP6 && c.Policy == other.Policy &&
		slices.Equal(c.ExcludePrefixes, other.ExcludePrefixes)
}
func (c *CNATSnatConfig) String() string {
	return fmt.Sprintf("cnat snat ip4 %s ip6 %s policy %s exclude %v", c.SnatIP4, c.SnatIP6, c.Policy, c.ExcludePrefixes)
}

// CNATSnatTable is one of cnat's SNAT-policy interface sets.
type CNATSnatTable uint8

const (
	CNATSnatIncludeV4 CNATSnatTable = iota
	CNATSnatIncludeV6
	CNATSnatPod
	CNATSnatHost
)

func (t CNATSnatTable) String() string {
	switch t {
	case CNATSnatIncludeV4:
		return "include-v4"
	case CNATSnatIncludeV6:
		return "include-v6"
	case CNATSnatPod:
		return "pod"
	case CNATSnatHost:
		return "host"
	}
	return "table?"
}

// CNATSnatInterface puts an interface into one SNAT-policy table.
type CNATSnatInterface struct {
	Interface string
	Table     CNATSnatTable
}

func (i *CNATSnatInterface) Key() Key             { return CNATSnatInterfaceKey(i.Interface, i.Table) }
func (i *CNATSnatInterface) Interfaces() []string { return []string{i.Interface} }
func (i *CNATSnatInterface) Equal(o Item) bool {
	other, ok := o.(*CNATSnatInterface)
	return ok && *i == *other
}
func (i *CNATSnatInterface) String() string {
	return fmt.Sprintf("cnat snat-policy if %s table %s", i.Interface, i.Table)
}

// InterfaceFeature enables a graph feature on an interface's feature arc, for
// example cnat-snat-ip6 on ip6-unicast.
type InterfaceFeature struct {
	Interface string
	Arc       string
	Feature   string
}

func (f *InterfaceFeature) Key() Key             { return InterfaceFeatureKey(f.Interface, f.Arc, f.Feature) }
func (f *InterfaceFeature) Interfaces() []string { return []string{f.Interface} }
func (f *InterfaceFeature) Equal(o Item) bool {
	other, ok := o.(*InterfaceFeature)
	return ok && *f == *other
}
func (f *InterfaceFeature) String() string {
	return fmt.Sprintf("set interface feature %s %s arc %s", f.Interface, f.Feature, f.Arc)
}
