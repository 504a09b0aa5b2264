package vppcfg

import (
	"fmt"

	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
)

// NAT44Timeouts are the NAT44-ED session timeouts in seconds; a zero field
// means VPP's default (udp 300, tcp-established 7440, tcp-transitory 240, icmp 60).
type NAT44Timeouts struct {
	UDP, TCPEstablished, TCPTransitory, ICMP uint32
}

// NAT44Global enables the NAT44-ED plugin with its global settings. There is
// one per VPP; every other NAT44 item depends on it.
type NAT44Global struct {
	InsideVRF, OutsideVRF uint32
	// SessionLimit is the per-thread session limit; 0 means VPP's default (64512).
	SessionLimit uint32
	// Forwarding lets out2in packets without a session or mapping pass untranslated.
	Forwarding bool
	Timeouts   NAT44Timeouts
}

// NAT44GlobalKey is the key of the single NAT44Global item.
func NAT44GlobalKey() Key { return Key{Kind: KindNAT44Global, Name: "global"} }

func (g *NAT44Global) Key() Key   { return NAT44GlobalKey() }
func (g *NAT44Global) kind() Kind { return KindNAT44Global }
func (g *NAT44Global) Equal(o Item) bool {
	other, ok := o.(*NAT44Global)
	return ok && *g == *other
}
func (g *NAT44Global) String() string {
	return fmt.Sprintf("nat44 enabled inside-vrf %d outside-vrf %d sessions %d forwarding %t timeouts %+v",
		g.InsideVRF, g.OutsideVRF, g.SessionLimit, g.Forwarding, g.Timeouts)
}

// Forwarding and timeouts change in place; the VRFs and the session limit
// only by disabling NAT44, which wipes every NAT44 object (the gate reset
// of vppcfg/engine/plan_gate.go).
func init() {
	register(kindSpec[*NAT44Global]{
		Kind: KindNAT44Global, Name: "nat44-global", GateKey: NAT44GlobalKey(), GatePlugin: "NAT44",
		EqualApplied: func(d, a *NAT44Global) bool { return canonicalGlobal(d) == canonicalGlobal(a) },
		NeedsRecreate: func(old, new *NAT44Global) bool {
			o, c := canonicalGlobal(old), canonicalGlobal(new)
			return o.InsideVRF != c.InsideVRF || o.OutsideVRF != c.OutsideVRF || o.SessionLimit != c.SessionLimit
		},
		CLI:       nat44GlobalCLI,
		Printable: nat44GlobalPrintable,
	})
}

// NAT44 defaults VPP applies for zero values (session limit and timeouts).
const (
	DefaultNAT44Sessions       = 64512
	DefaultNAT44UDPTimeout     = 300
	DefaultNAT44TCPEstablished = 7440
	DefaultNAT44TCPTransitory  = 240
	DefaultNAT44ICMPTimeout    = 60
)

func canonicalGlobal(g *NAT44Global) NAT44Global {
	c := *g
	if c.SessionLimit == 0 {
		c.SessionLimit = DefaultNAT44Sessions
	}
	c.Timeouts = NAT44Timeouts(core.EffectiveTimeouts(core.NAT44Timeouts(c.Timeouts)))
	return c
}

func nat44GlobalCLI(g *NAT44Global) []string {
	s := "nat44 plugin enable"
	if g.SessionLimit != 0 {
		s += fmt.Sprintf(" sessions %d", g.SessionLimit)
	}
	s += fmt.Sprintf(" inside-vrf %d outside-vrf %d", g.InsideVRF, g.OutsideVRF)
	out := []string{s}
	if g.Forwarding {
		out = append(out, "nat44 forwarding enable")
	}
	t := g.Timeouts
	for _, kv := range []struct {
		name string
		val  uint32
	}{{"udp", t.UDP}, {"tcp-established", t.TCPEstablished}, {"tcp-transitory", t.TCPTransitory}, {"icmp", t.ICMP}} {
		if kv.val != 0 {
			out = append(out, fmt.Sprintf("set nat timeout %s %d", kv.name, kv.val))
		}
	}
	return out
}

// printableNAT44Global is NAT44Global as the render document prints it; a
// zero limit or timeout is VPP's default and left out.
type printableNAT44Global struct {
	InsideVRF    string            `json:"insideVRF"`
	OutsideVRF   string            `json:"outsideVRF"`
	SessionLimit uint32            `json:"sessionLimit,omitempty"`
	Forwarding   bool              `json:"forwarding"`
	Timeouts     printableTimeouts `json:"timeouts"`
}

type printableTimeouts struct {
	UDP            uint32 `json:"udp,omitempty"`
	TCPEstablished uint32 `json:"tcpEstablished,omitempty"`
	TCPTransitory  uint32 `json:"tcpTransitory,omitempty"`
	ICMP           uint32 `json:"icmp,omitempty"`
}

func nat44GlobalPrintable(g *NAT44Global, _ string) any {
	t := g.Timeouts
	return printableNAT44Global{InsideVRF: fmt.Sprint(g.InsideVRF), OutsideVRF: fmt.Sprint(g.OutsideVRF),
		SessionLimit: g.SessionLimit, Forwarding: g.Forwarding,
		Timeouts: printableTimeouts{t.UDP, t.TCPEstablished, t.TCPTransitory, t.ICMP}}
}
