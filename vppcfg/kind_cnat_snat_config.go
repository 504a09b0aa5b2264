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

// CNATSnatConfig holds cnat's global source-NAT settings. There is one per VPP.
type CNATSnatConfig struct {
	SnatIP4, SnatIP6 netip.Addr
	Policy           CNATSnatPolicy
	// ExcludePrefixes are destinations never source-NATed, sorted.
	ExcludePrefixes []netip.Prefix
}

// cnatSnatConfigKey is the key of the single CNATSnatConfig item.
func cnatSnatConfigKey() Key { return Key{Kind: KindCNATSnatConfig, Name: "global"} }

func (c *CNATSnatConfig) Key() Key   { return cnatSnatConfigKey() }
func (c *CNATSnatConfig) kind() Kind { return KindCNATSnatConfig }
func (c *CNATSnatConfig) Equal(o Item) bool {
	other, ok := o.(*CNATSnatConfig)
	return ok && c.SnatIP4 == other.SnatIP4 && c.SnatIP6 == other.SnatIP6 && c.Policy == other.Policy &&
		slices.Equal(c.ExcludePrefixes, other.ExcludePrefixes)
}
func (c *CNATSnatConfig) String() string {
	return fmt.Sprintf("cnat snat ip4 %s ip6 %s policy %s exclude %v", c.SnatIP4, c.SnatIP6, c.Policy, c.ExcludePrefixes)
}

// Every field changes in place. VPP cannot dump the settings: the driver
// lists the kind in State.Unobservable and the layer re-asserts it.
func init() {
	register(kindSpec[*CNATSnatConfig]{
		Kind: KindCNATSnatConfig, Name: "cnat-snat-config",
		Validate: func(k Key, v *CNATSnatConfig) error {
			if v.SnatIP4.IsValid() && !v.SnatIP4.Is4() {
				return invalid(k, "SnatIP4", "%s is not IPv4", v.SnatIP4)
			}
			if v.SnatIP6.IsValid() && !v.SnatIP6.Is6() {
				return invalid(k, "SnatIP6", "%s is not IPv6", v.SnatIP6)
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
			out := []string{"set cnat snat-policy addr " + strings.Join(addrs, " "), "set cnat snat-policy " + c.Policy.String()}
			for _, p := range c.ExcludePrefixes {
				out = append(out, "set cnat snat-policy prefix "+p.String())
			}
			return out
		},
		Printable: func(c *CNATSnatConfig, _ string) any {
			p := printableCNATSnatConfig{SnatIPv4: printableAddr(c.SnatIP4), SnatIPv6: printableAddr(c.SnatIP6),
				Policy: c.Policy.String(), ExcludePrefixes: []string{}}
			for _, x := range c.ExcludePrefixes {
				p.ExcludePrefixes = append(p.ExcludePrefixes, x.String())
			}
			return p
		},
	})
}

// printableCNATSnatConfig is CNATSnatConfig as the render document prints it.
type printableCNATSnatConfig struct {
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
