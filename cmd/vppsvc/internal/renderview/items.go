package renderview

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/vppsvc/vppsvc/cmd/vppsvc/internal/vppcli"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// Document is what `render -o json` and `-o yaml` print: every desired VPP
// item with its owners and state, enums as names, the ACL bindings of an
// interface folded into one entry. docs/cli.md ("The render JSON contract")
// documents it; the field names are part of that contract.
type Document struct {
	Node  string  `json:"node"`
	Items []Entry `json:"items"`
}

// Entry is one item of the document.
type Entry struct {
	// Key is the VPP layer's key, "<kind>/<name>"; "acl-bindings/<interface>"
	// for the folded bindings of an interface.
	Key    string   `json:"key"`
	Kind   string   `json:"kind"`
	Owners []string `json:"owners"`
	// State is applied, pending or failed (the worst of its bindings for a
	// folded entry).
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
	Config any    `json:"config"`
}

// ItemStatus is what the VPP layer says about one item.
type ItemStatus struct {
	Owners []string
	State  string
	Reason string
}

// KindACLBindings is the kind of a folded entry.
const KindACLBindings = "acl-bindings"

// BuildDocument turns desired items into the document, in creation order,
// with the folded binding entries last, by interface. status may be nil.
func BuildDocument(node string, items []vppcfg.Item, status func(vppcfg.Key) (ItemStatus, bool)) Document {
	items = slices.Clone(items)
	slices.SortFunc(items, func(a, b vppcfg.Item) int { return a.Key().Compare(b.Key()) })
	doc := Document{Node: node, Items: []Entry{}}
	get := func(k vppcfg.Key) ItemStatus {
		if status == nil {
			return ItemStatus{}
		}
		st, _ := status(k)
		return st
	}
	var bindings []*vppcfg.ACLBinding
	for _, it := range items {
		if b, ok := it.(*vppcfg.ACLBinding); ok {
			bindings = append(bindings, b)
			continue
		}
		st := get(it.Key())
		owner := ""
		if len(st.Owners) > 0 {
			owner = st.Owners[0]
		}
		doc.Items = append(doc.Items, Entry{Key: it.Key().String(), Kind: it.Key().Kind.String(),
			Owners: nonNil(st.Owners), State: st.State, Reason: st.Reason, Config: itemConfig(it, owner)})
	}
	return foldBindings(doc, bindings, get)
}

// BindingsConfig is the folded ACL list of one interface, in the order VPP
// evaluates it.
type BindingsConfig struct {
	Interface string   `json:"interface"`
	Input     []string `json:"input"`
	Output    []string `json:"output"`
}

func foldBindings(doc Document, bindings []*vppcfg.ACLBinding, get func(vppcfg.Key) ItemStatus) Document {
	slices.SortFunc(bindings, func(a, b *vppcfg.ACLBinding) int {
		if c := strings.Compare(a.Interface, b.Interface); c != 0 {
			return c
		}
		if a.Priority != b.Priority {
			return int(a.Priority) - int(b.Priority)
		}
		return strings.Compare(a.ACL, b.ACL)
	})
	for i := 0; i < len(bindings); {
		ifName := bindings[i].Interface
		cfg := BindingsConfig{Interface: ifName, Input: []string{}, Output: []string{}}
		e := Entry{Key: KindACLBindings + "/" + ifName, Kind: KindACLBindings, Owners: []string{}}
		for ; i < len(bindings) && bindings[i].Interface == ifName; i++ {
			b := bindings[i]
			if b.Direction == vppcfg.ACLOutput {
				cfg.Output = append(cfg.Output, b.ACL)
			} else {
				cfg.Input = append(cfg.Input, b.ACL)
			}
			st := get(b.Key())
			for _, o := range st.Owners {
				if !slices.Contains(e.Owners, o) {
					e.Owners = append(e.Owners, o)
				}
			}
			if stateRank(st.State) > stateRank(e.State) {
				e.State, e.Reason = st.State, st.Reason
			}
		}
		slices.Sort(e.Owners)
		e.Config = cfg
		doc.Items = append(doc.Items, e)
	}
	return doc
}

// stateRank orders states so that a folded entry shows its worst binding.
func stateRank(s string) int {
	switch s {
	case "applied":
		return 1
	case "pending":
		return 2
	case "failed":
		return 3
	case "":
		return 0
	}
	return 4
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// vrfName prints a VRF as VPP does: ~0 means every VRF.
func vrfName(vrf uint32) string {
	if vrf == vppcfg.AnyVRF {
		return "any"
	}
	return fmt.Sprint(vrf)
}

// roleNames are the NAT44-ED interface roles as `show nat44 interfaces`
// words them.
var roleNames = map[vppcfg.NAT44Role]string{
	vppcfg.NAT44Inside:  "inside",
	vppcfg.NAT44Outside: "outside",
	vppcfg.NAT44Output:  "output-feature",
}

func addrPort(a netip.AddrPort) string {
	if !a.IsValid() {
		return ""
	}
	return a.String()
}

func addr(a netip.Addr) string {
	if !a.IsValid() {
		return ""
	}
	return a.String()
}

// The config of each kind, with the item's fields under lower-case names and
// enums as names.
type (
	nat44GlobalConfig struct {
		InsideVRF    string        `json:"insideVRF"`
		OutsideVRF   string        `json:"outsideVRF"`
		SessionLimit uint32        `json:"sessionLimit,omitempty"`
		Forwarding   bool          `json:"forwarding"`
		Timeouts     timeoutConfig `json:"timeouts"`
	}
	timeoutConfig struct {
		UDP            uint32 `json:"udp,omitempty"`
		TCPEstablished uint32 `json:"tcpEstablished,omitempty"`
		TCPTransitory  uint32 `json:"tcpTransitory,omitempty"`
		ICMP           uint32 `json:"icmp,omitempty"`
	}
	nat44AddressConfig struct {
		Address string `json:"address"`
		Pool    string `json:"pool"`
		VRF     string `json:"vrf"`
	}
	nat44InterfaceConfig struct {
		Interface string `json:"interface"`
		Role      string `json:"role"`
	}
	staticMappingConfig struct {
		Protocol        string `json:"protocol"`
		External        string `json:"external"`
		Local           string `json:"local"`
		VRF             string `json:"vrf"`
		AddrOnly        bool   `json:"addrOnly,omitempty"`
		Out2InOnly      bool   `json:"out2inOnly"`
		TwiceNAT        string `json:"twiceNAT"`
		TwiceNATAddress string `json:"twiceNATAddress,omitempty"`
		Label           string `json:"label,omitempty"`
		Tag             string `json:"tag,omitempty"`
	}
	lbLocalConfig struct {
		Address     string `json:"address"`
		Probability uint8  `json:"probability"`
		VRF         string `json:"vrf"`
	}
	lbMappingConfig struct {
		Protocol        string          `json:"protocol"`
		External        string          `json:"external"`
		Locals          []lbLocalConfig `json:"locals"`
		AffinitySeconds uint32          `json:"affinitySeconds,omitempty"`
		Out2InOnly      bool            `json:"out2inOnly"`
		TwiceNAT        string          `json:"twiceNAT"`
		Label           string          `json:"label,omitempty"`
		Tag             string          `json:"tag,omitempty"`
	}
	identityMappingConfig struct {
		Protocol string `json:"protocol"`
		Address  string `json:"address"`
		Port     uint16 `json:"port,omitempty"`
		AddrOnly bool   `json:"addrOnly,omitempty"`
		VRF      string `json:"vrf"`
		Label    string `json:"label,omitempty"`
		Tag      string `json:"tag,omitempty"`
	}
	cnatSnatConfig struct {
		SnatIPv4        string   `json:"snatIPv4,omitempty"`
		SnatIPv6        string   `json:"snatIPv6,omitempty"`
		Policy          string   `json:"policy"`
		ExcludePrefixes []string `json:"excludePrefixes"`
	}
	cnatSnatInterfaceConfig struct {
		Interface string `json:"interface"`
		Table     string `json:"table"`
	}
	featureConfig struct {
		Interface string `json:"interface"`
		Arc       string `json:"arc"`
		Feature   string `json:"feature"`
	}
	dropRouteConfig struct {
		Prefix string `json:"prefix"`
		Table  uint32 `json:"table"`
	}
	cnatPathConfig struct {
		Source      string `json:"source,omitempty"`
		Destination string `json:"destination"`
	}
	cnatTranslationConfig struct {
		Protocol string `json:"protocol"`
		VIP      string `json:"vip"`
		// VIPKind is exclusive (cnat owns the address) or interposed (a
		// real address: unmatched traffic goes on as usual).
		VIPKind         string           `json:"vipKind"`
		LoadBalancing   string           `json:"loadBalancing"`
		FlowHash        []string         `json:"flowHash,omitempty"`
		AllocPort       bool             `json:"allocPort"`
		NoReturnSession bool             `json:"noReturnSession,omitempty"`
		Paths           []cnatPathConfig `json:"paths"`
	}
	aclRuleConfig struct {
		Action      string `json:"action"`
		Source      string `json:"source"`
		Destination string `json:"destination"`
		Protocol    string `json:"protocol"`
		SourcePorts string `json:"sourcePorts,omitempty"`
		DestPorts   string `json:"destinationPorts,omitempty"`
	}
	aclConfig struct {
		Name string `json:"name"`
		Tag  string `json:"tag,omitempty"`
		// Rules are the ACL's rules; empty for a placeholder.
		Rules []aclRuleConfig `json:"rules"`
		// Placeholder is set on an empty filter shard: VPP holds one
		// permit-nothing rule in it, because an ACL with no rules denies
		// everything.
		Placeholder bool `json:"placeholder,omitempty"`
	}
)

func tag(owner, label string) string {
	if owner == "" || label == "" {
		return ""
	}
	return vppcfg.Tag(owner, label)
}

// itemConfig returns the printable config of an item; owner names the tag.
func itemConfig(it vppcfg.Item, owner string) any {
	switch v := it.(type) {
	case *vppcfg.NAT44Global:
		return nat44GlobalConfig{InsideVRF: fmt.Sprint(v.InsideVRF), OutsideVRF: fmt.Sprint(v.OutsideVRF),
			SessionLimit: v.SessionLimit, Forwarding: v.Forwarding,
			Timeouts: timeoutConfig{v.Timeouts.UDP, v.Timeouts.TCPEstablished, v.Timeouts.TCPTransitory, v.Timeouts.ICMP}}
	case *vppcfg.NAT44Address:
		pool := "normal"
		if v.TwiceNAT {
			pool = "twice-nat"
		}
		return nat44AddressConfig{Address: addr(v.Addr), Pool: pool, VRF: vrfName(v.VRF)}
	case *vppcfg.NAT44Interface:
		role, ok := roleNames[v.Role]
		if !ok {
			role = v.Role.String()
		}
		return nat44InterfaceConfig{Interface: v.Interface, Role: role}
	case *vppcfg.NAT44StaticMapping:
		return staticMappingConfig{Protocol: v.Protocol.String(), External: addrPort(v.External), Local: addrPort(v.Local),
			VRF: vrfName(v.VRF), AddrOnly: v.AddrOnly, Out2InOnly: v.Out2InOnly, TwiceNAT: v.TwiceNAT.String(),
			TwiceNATAddress: addr(v.TwiceNATAddr), Label: v.Label, Tag: tag(owner, v.Label)}
	case *vppcfg.NAT44LBMapping:
		c := lbMappingConfig{Protocol: v.Protocol.String(), External: addrPort(v.External), Locals: []lbLocalConfig{},
			AffinitySeconds: v.Affinity, Out2InOnly: v.Out2InOnly, TwiceNAT: v.TwiceNAT.String(), Label: v.Label, Tag: tag(owner, v.Label)}
		for _, l := range v.Locals {
			c.Locals = append(c.Locals, lbLocalConfig{Address: addrPort(l.Addr), Probability: l.Probability, VRF: vrfName(l.VRF)})
		}
		return c
	case *vppcfg.NAT44IdentityMapping:
		return identityMappingConfig{Protocol: v.Protocol.String(), Address: addr(v.Addr), Port: v.Port, AddrOnly: v.AddrOnly,
			VRF: vrfName(v.VRF), Label: v.Label, Tag: tag(owner, v.Label)}
	case *vppcfg.CNATSnatConfig:
		c := cnatSnatConfig{SnatIPv4: addr(v.SnatIP4), SnatIPv6: addr(v.SnatIP6), Policy: v.Policy.String(), ExcludePrefixes: []string{}}
		for _, p := range v.ExcludePrefixes {
			c.ExcludePrefixes = append(c.ExcludePrefixes, p.String())
		}
		return c
	case *vppcfg.CNATSnatInterface:
		return cnatSnatInterfaceConfig{Interface: v.Interface, Table: v.Table.String()}
	case *vppcfg.InterfaceFeature:
		return featureConfig{Interface: v.Interface, Arc: v.Arc, Feature: v.Feature}
	case *vppcfg.DropRoute:
		return dropRouteConfig{Prefix: v.Prefix.String(), Table: v.VRF}
	case *vppcfg.CNATTranslation:
		kind := "exclusive"
		if v.IsRealIP {
			kind = "interposed"
		}
		c := cnatTranslationConfig{Protocol: v.Protocol.String(), VIP: addrPort(v.VIP), VIPKind: kind,
			LoadBalancing: v.LBType.String(), FlowHash: flowHashNames(v.FlowHash), AllocPort: v.AllocPort,
			NoReturnSession: v.NoReturnSession, Paths: []cnatPathConfig{}}
		for _, p := range v.Paths {
			pc := cnatPathConfig{Destination: addrPort(p.Dst)}
			if a := p.Src.Addr(); a.IsValid() && !a.IsUnspecified() {
				pc.Source = addrPort(p.Src)
			}
			c.Paths = append(c.Paths, pc)
		}
		return c
	case *vppcfg.ACL:
		c := aclConfig{Name: v.Name, Tag: tag(owner, v.Name), Rules: []aclRuleConfig{}}
		if vppcli.IsPlaceholder(v) {
			c.Placeholder = true
			return c
		}
		for _, r := range v.Rules {
			rc := aclRuleConfig{Action: r.Action.String(), Source: r.Src.String(), Destination: r.Dst.String(), Protocol: r.Protocol.String()}
			if r.Protocol != vppcfg.ProtoAny {
				rc.SourcePorts, rc.DestPorts = r.SrcPorts.String(), r.DstPorts.String()
			}
			c.Rules = append(c.Rules, rc)
		}
		return c
	}
	return it.String()
}

// flowHashNames names the fields of a cnat flow hash.
func flowHashNames(h vppcfg.CNATFlowHash) []string {
	var out []string
	for _, f := range []struct {
		bit  vppcfg.CNATFlowHash
		name string
	}{
		{vppcfg.CNATHashSrcIP, "src-ip"}, {vppcfg.CNATHashDstIP, "dst-ip"}, {vppcfg.CNATHashSrcPort, "src-port"},
		{vppcfg.CNATHashDstPort, "dst-port"}, {vppcfg.CNATHashProto, "proto"},
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
