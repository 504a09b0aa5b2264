package vppcfg

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

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

// CNATSnatConfig holds cnat's global source-NAT settings, or one family's
// part of them. VPP has one set per VPP, and one message sets both
// families' addresses, so each cnat renderer desires the part of its family
// (Part) and the VPP layer merges the parts desired (and those kept for
// owners that have not resynced) into the one value it sends
// (kind_cnat_snat_config_merge.go): each owner owns its half, and losing
// one clears only that family's address.
type CNATSnatConfig struct {
	// Part is what the item holds: CNATSnatWhole (the default) both
	// addresses, CNATSnatIPv4 or CNATSnatIPv6 the address of one family
	// (the other must be unset). Each holds the policy and exclude prefixes
	// too: the merge takes the strongest policy and every prefix.
	Part             CNATSnatPart
	SnatIP4, SnatIP6 netip.Addr
	Policy           CNATSnatPolicy
	// ExcludePrefixes are destinations never source-NATed, sorted.
	ExcludePrefixes []netip.Prefix
	// Merged are the parts a merged value (what the layer sends VPP) was
	// made of, in part order; empty in a desired item.
	Merged []CNATSnatPart
}

// CNATSnatPart is which of cnat's global SNAT settings a CNATSnatConfig
// holds; each part has a key of its own.
type CNATSnatPart uint8

const (
	CNATSnatWhole CNATSnatPart = iota
	CNATSnatIPv4
	CNATSnatIPv6
)

// cnatSnatParts are the parts in merge order: a family's part sets its
// address over the whole one's.
var cnatSnatParts = []CNATSnatPart{CNATSnatWhole, CNATSnatIPv4, CNATSnatIPv6}

func (p CNATSnatPart) String() string {
	switch p {
	case CNATSnatIPv4:
		return "ip4"
	case CNATSnatIPv6:
		return "ip6"
	}
	return "global"
}

// cnatSnatConfigKey is the key of the CNATSnatConfig item of a part; the
// whole one's is also the key of the merged value.
func cnatSnatConfigKey(p CNATSnatPart) Key { return Key{Kind: KindCNATSnatConfig, Name: p.String()} }

func (c *CNATSnatConfig) Key() Key   { return cnatSnatConfigKey(c.Part) }
func (c *CNATSnatConfig) kind() Kind { return KindCNATSnatConfig }
func (c *CNATSnatConfig) Equal(o Item) bool {
	other, ok := o.(*CNATSnatConfig)
	return ok && c.Part == other.Part && c.SnatIP4 == other.SnatIP4 && c.SnatIP6 == other.SnatIP6 && c.Policy == other.Policy &&
		slices.Equal(c.ExcludePrefixes, other.ExcludePrefixes) && slices.Equal(c.Merged, other.Merged)
}
func (c *CNATSnatConfig) String() string {
	s := fmt.Sprintf("cnat snat ip4 %s ip6 %s policy %s exclude %v", c.SnatIP4, c.SnatIP6, c.Policy, c.ExcludePrefixes)
	if c.Part != CNATSnatWhole {
		s = fmt.Sprintf("cnat snat %s part: %s", c.Part, s)
	}
	return s
}

// Every field changes in place. VPP cannot dump the settings: the driver
// lists the kind in State.Unobservable and the layer re-asserts it.
func init() {
	register(kindSpec[*CNATSnatConfig]{
		Kind: KindCNATSnatConfig, Name: "cnat-snat-config",
		Merge: cnatSnatMerger,
		Validate: func(k Key, v *CNATSnatConfig) error {
			if v.SnatIP4.IsValid() && !v.SnatIP4.Is4() {
				return invalid(k, "SnatIP4", "%s is not IPv4", v.SnatIP4)
			}
			if v.SnatIP6.IsValid() && !v.SnatIP6.Is6() {
				return invalid(k, "SnatIP6", "%s is not IPv6", v.SnatIP6)
			}
			switch {
			case v.Part > CNATSnatIPv6:
				return invalid(k, "Part", "unknown part %d", v.Part)
			case v.Part == CNATSnatIPv4 && v.SnatIP6.IsValid():
				return invalid(k, "SnatIP6", "set in the IPv4 part")
			case v.Part == CNATSnatIPv6 && v.SnatIP4.IsValid():
				return invalid(k, "SnatIP4", "set in the IPv6 part")
			case len(v.Merged) > 0:
				return invalid(k, "Merged", "set in a desired item (the layer sets it on merged values)")
			}
			if v.Policy > CNATSnatPolicyK8s {
				return invalid(k, "Policy", "unknown policy %d", v.Policy)
			}
			for i, p := range v.ExcludePrefixes {
				if err := prefix(k, fmt.Sprintf("ExcludePrefixes[%d]", i), p); err != nil {
					return err
				}
			}
			return nil
		},
		Canonical: func(v *CNATSnatConfig) *CNATSnatConfig {
			if slices.IsSortedFunc(v.ExcludePrefixes, comparePrefixes) {
				return v
			}
			c := *v
			c.ExcludePrefixes = slices.Clone(v.ExcludePrefixes)
			slices.SortFunc(c.ExcludePrefixes, comparePrefixes)
			return &c
		},
		NeedsRecreate: func(_, _ *CNATSnatConfig) bool { return false },
		CLI: func(c *CNATSnatConfig) []string {
			var addrs []string
			for _, a := range []netip.Addr{c.SnatIP4, c.SnatIP6} {
				if a.IsValid() {
					addrs = append(addrs, a.String())
				}
			}
			addrLine := "set cnat snat-policy addr " + strings.Join(addrs, " ")
			if c.Part != CNATSnatWhole {
				// The command sets both addresses: one family's part alone
				// would clear the other's.
				addrLine += "  # api: the " + c.Part.String() + " part, merged with the other family's into one cnat_set_snat_addresses"
			}
			out := []string{addrLine, "set cnat snat-policy " + c.Policy.String()}
			for _, p := range c.ExcludePrefixes {
				out = append(out, "set cnat snat-policy prefix "+p.String())
			}
			return out
		},
		Printable: func(c *CNATSnatConfig, _ string) any {
			p := printableCNATSnatConfig{SnatIPv4: printableAddr(c.SnatIP4), SnatIPv6: printableAddr(c.SnatIP6),
				Policy: c.Policy.String(), ExcludePrefixes: []string{}}
			if c.Part != CNATSnatWhole {
				p.Part = c.Part.String()
			}
			for _, x := range c.ExcludePrefixes {
				p.ExcludePrefixes = append(p.ExcludePrefixes, x.String())
			}
			return p
		},
	})
}

// printableCNATSnatConfig is CNATSnatConfig as the render document prints it.
type printableCNATSnatConfig struct {
	Part            string   `json:"part,omitempty"`
	SnatIPv4        string   `json:"snatIPv4,omitempty"`
	SnatIPv6        string   `json:"snatIPv6,omitempty"`
	Policy          string   `json:"policy"`
	ExcludePrefixes []string `json:"excludePrefixes"`
}

// comparePrefixes orders prefixes by address, then length.
func comparePrefixes(a, b netip.Prefix) int {
	if c := a.Addr().Compare(b.Addr()); c != 0 {
		return c
	}
	return a.Bits() - b.Bits()
}
