package vppcfg

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
)

// NAT44LBLocal is one backend of a load-balanced mapping.
type NAT44LBLocal struct {
	Addr netip.AddrPort
	// Probability is a relative weight (1–255); 0 never receives new
	// sessions. The probabilities of one mapping sum to at most
	// MaxLBProbabilitySum.
	Probability uint8
	VRF         uint32
}

func (l NAT44LBLocal) String() string {
	return fmt.Sprintf("%s:%d@vrf%d", l.Addr, l.Probability, l.VRF)
}

// NAT44LBMapping balances an external address:port over its locals. The
// reconciler changes the local set in place, one local at a time, so that
// sessions to unchanged locals survive — also across one local and several,
// which is why one backend is an LB mapping too and not a static mapping
// (see LBPlaceholder).
type NAT44LBMapping struct {
	External netip.AddrPort
	// Locals holds at least one entry; the layer pads a single one with
	// LBPlaceholder, because VPP needs two. Keep them sorted with
	// SortLBLocals so that equal sets compare equal.
	Locals []NAT44LBLocal
	// The small fields share one word (the mapping is 80 bytes, not 96,
	// one per service port).
	Protocol   Protocol
	Out2InOnly bool
	TwiceNAT   TwiceNATMode
	// Affinity is the sticky time in seconds for a client IP; 0 disables it.
	Affinity uint32
	Label    string
}

// MaxLBProbabilitySum bounds the sum of an LB mapping's probabilities: VPP
// 25.10 keeps each local's running sum (nat44_lb_addr_port_t.prefix) in a
// u8, so a larger sum wraps and the draw picks from the wrong range, and a
// sum of 256 divides by zero on the first packet.
const MaxLBProbabilitySum = 255

func (m *NAT44LBMapping) Key() Key {
	return NAT44MappingKey(KindNAT44LBMapping, m.External, m.Protocol)
}
func (m *NAT44LBMapping) kind() Kind { return KindNAT44LBMapping }
func (m *NAT44LBMapping) Equal(o Item) bool {
	other, ok := o.(*NAT44LBMapping)
	return ok && m.External == other.External && m.Protocol == other.Protocol &&
		slices.Equal(m.Locals, other.Locals) && m.Affinity == other.Affinity &&
		m.Out2InOnly == other.Out2InOnly && m.TwiceNAT == other.TwiceNAT && m.Label == other.Label
}
func (m *NAT44LBMapping) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "nat44 lb mapping %s %s ->", m.Protocol, m.External)
	for _, l := range m.Locals {
		b.WriteString(" " + l.String())
	}
	writeMappingFlags(&b, false, m.Out2InOnly, m.TwiceNAT)
	if m.Affinity != 0 {
		fmt.Fprintf(&b, " affinity %d", m.Affinity)
	}
	writeLabel(&b, m.Label)
	return b.String()
}

// LBPlaceholder is the local the layer adds beside a mapping's only one,
// because VPP refuses an LB mapping of fewer than two locals
// (nat44_ed_add_lb_static_mapping) and a local delete that would leave
// fewer than two. Its address is unspecified and its probability 0, so it
// is never drawn (VPP draws 1 + random % the sum and takes the first
// running sum at or above it), and no session ever uses it: adding or
// removing it touches no session, while VPP deletes every LB session of a
// removed real local. So one backend and several differ by local steps
// alone, and the surviving backend keeps its connections — which a static
// mapping (a different kind of mapping, so a delete and an add) could not,
// and which a backend listed twice could not either (VPP refuses to add a
// local equal to one it has, and removing one copy deletes the sessions of
// both). Its port is the frontend's, its VRF the real local's.
func LBPlaceholder(m *NAT44LBMapping) NAT44LBLocal {
	vrf := uint32(0)
	if len(m.Locals) > 0 {
		vrf = m.Locals[0].VRF
	}
	return NAT44LBLocal{Addr: netip.AddrPortFrom(netip.IPv4Unspecified(), m.External.Port()), VRF: vrf}
}

// canonicalLB sorts the locals and pads a single one with LBPlaceholder,
// copying v only when it changes.
func canonicalLB(v *NAT44LBMapping) *NAT44LBMapping {
	if len(v.Locals) != 1 && slices.IsSortedFunc(v.Locals, compareLocals) {
		return v
	}
	c := *v
	c.Locals = slices.Clone(v.Locals)
	if len(c.Locals) == 1 {
		c.Locals = append(c.Locals, LBPlaceholder(v))
	}
	SortLBLocals(c.Locals)
	return &c
}

// SortLBLocals puts locals in canonical order (address, port, VRF).
func SortLBLocals(locals []NAT44LBLocal) { slices.SortFunc(locals, compareLocals) }

// The locals change in place, one at a time (updateLocals); everything else
// re-creates the mapping, and so does a lost or re-weighted local of a
// mapping with affinity (losesAffinityTarget). VPP's dump never fills the
// affinity.
func init() {
	register(kindSpec[*NAT44LBMapping]{
		Kind: KindNAT44LBMapping, Name: "nat44-lb-mapping", Gate: KindNAT44Global,
		Validate:  validateLB,
		Canonical: canonicalLB,
		NeedsRecreate: func(o, n *NAT44LBMapping) bool {
			if o.Affinity != n.Affinity || o.Out2InOnly != n.Out2InOnly || o.TwiceNAT != n.TwiceNAT || o.Label != n.Label {
				return true
			}
			added, removed, changed := diffLocals(o.Locals, n.Locals)
			// A changed weight is a del+add of that local, which must not leave
			// fewer than 2 locals while it is out.
			return len(changed) > 0 && len(o.Locals)+len(added) < 3 ||
				len(added)+len(removed)+len(changed) == 0 || // identical sets in another order
				losesAffinityTarget(o, removed, changed)
		},
		UpdateOps: updateLocals,
		ApplyPart: applyLocalStep,
		OpText:    lbOpText,
		Label:     func(m *NAT44LBMapping) string { return m.Label },
		WithLabel: func(m *NAT44LBMapping, label string) *NAT44LBMapping {
			c := *m
			c.Label = label
			return &c
		},
		Unobservable: func(o, d *NAT44LBMapping) *NAT44LBMapping {
			c := *o
			c.Affinity = d.Affinity
			return &c
		},
		ExternalKey: func(k Key, m *NAT44LBMapping) (string, bool) {
			if k.Kind == KindNAT44LBMapping {
				return k.Name, true // the key is built from the external key
			}
			return addrPortProto(m.External, m.Protocol), true
		},
		CLI: func(m *NAT44LBMapping) []string {
			var b strings.Builder
			fmt.Fprintf(&b, "nat44 add load-balancing static mapping protocol %s external %s", m.Protocol, m.External)
			for _, l := range m.Locals {
				fmt.Fprintf(&b, " local %s vrf %d probability %d", l.Addr, l.VRF, l.Probability)
			}
			b.WriteString(twiceNATCLI(m.TwiceNAT))
			if m.Out2InOnly {
				b.WriteString(" out2in-only")
			}
			if m.Affinity != 0 {
				fmt.Fprintf(&b, " affinity %d", m.Affinity)
			}
			writeTagCLI(&b, m.Label)
			return []string{b.String()}
		},
		Printable: lbMappingPrintable,
		Translation: func(m *NAT44LBMapping) frontendTranslation {
			t := frontendTranslation{Frontend: m.External, Protocol: m.Protocol, Name: "lb-mapping",
				Flags: mappingFlags(m.TwiceNAT, m.Out2InOnly)}
			for _, l := range m.Locals {
				if l.Probability != 0 { // never drawn: not a backend
					t.Backends = append(t.Backends, l.Addr)
				}
			}
			if m.Affinity != 0 {
				t.Flags = append(t.Flags, fmt.Sprintf("affinity %ds", m.Affinity))
			}
			return t
		},
	})
}

// printableLBMapping is NAT44LBMapping as the render document prints it.
type printableLBMapping struct {
	Protocol        string           `json:"protocol"`
	External        string           `json:"external"`
	Locals          []printableLocal `json:"locals"`
	AffinitySeconds uint32           `json:"affinitySeconds,omitempty"`
	Out2InOnly      bool             `json:"out2inOnly"`
	TwiceNAT        string           `json:"twiceNAT"`
	Label           string           `json:"label,omitempty"`
	Tag             string           `json:"tag,omitempty"`
}

type printableLocal struct {
	Address     string `json:"address"`
	Probability uint8  `json:"probability"`
	VRF         string `json:"vrf"`
}

func lbMappingPrintable(m *NAT44LBMapping, owner string) any {
	p := printableLBMapping{Protocol: m.Protocol.String(), External: printableAddrPort(m.External), Locals: []printableLocal{},
		AffinitySeconds: m.Affinity, Out2InOnly: m.Out2InOnly, TwiceNAT: m.TwiceNAT.String(),
		Label: m.Label, Tag: printableTag(owner, m.Label)}
	for _, l := range m.Locals {
		p.Locals = append(p.Locals, printableLocal{Address: printableAddrPort(l.Addr), Probability: l.Probability, VRF: vrfString(l.VRF)})
	}
	return p
}

func validateLB(k Key, v *NAT44LBMapping) error {
	if err := ip4(k, "External", v.External.Addr()); err != nil {
		return err
	}
	if err := natProto(k, v.Protocol); err != nil {
		return err
	}
	if len(v.Locals) == 0 {
		return invalid(k, "Locals", "no local; an LB mapping needs at least one")
	}
	total := 0
	for i, l := range v.Locals {
		if a := l.Addr.Addr(); !a.IsValid() || !a.Is4() {
			return ip4(k, fmt.Sprintf("Locals[%d].Addr", i), a)
		}
		if l.Addr.Addr().IsUnspecified() && l.Probability != 0 {
			return invalid(k, fmt.Sprintf("Locals[%d].Addr", i), "%s with probability %d: only the placeholder (probability 0) may be unspecified", l.Addr, l.Probability)
		}
		total += int(l.Probability)
	}
	if i, ok := firstDuplicateLocal(v.Locals); ok {
		l := v.Locals[i]
		return invalid(k, fmt.Sprintf("Locals[%d]", i), "duplicate local %s vrf %d", l.Addr, l.VRF)
	}
	if total == 0 {
		return invalid(k, "Locals", "all probabilities are 0 (VPP would divide by zero)")
	}
	if total > MaxLBProbabilitySum {
		return invalid(k, "Locals", "probabilities sum to %d, over %d: VPP keeps the running sum in 8 bits, so it would draw backends from a wrapped range (or divide by zero)", total, MaxLBProbabilitySum)
	}
	if v.TwiceNAT > TwiceNATSelf {
		return invalid(k, "TwiceNAT", "unknown mode %d", v.TwiceNAT)
	}
	return tagSafe(k, "Label", v.Label)
}

// updateLocals changes the locals of a mapping one at a time: added ones
// first, then changed weights (del + add), then removed ones, so that the
// mapping never drops below two locals and sessions to unchanged locals
// survive. Each step is an update from the value before it (VPP's
// add-local or del-local message), built from o, the applied value, so
// that the fields no step writes stay as VPP holds them.
func updateLocals(k Key, o, n *NAT44LBMapping) []driverapi.Op {
	added, removed, changed := diffLocals(o.Locals, n.Locals)
	if len(added)+len(removed) == 1 && len(changed) == 0 {
		// One step: n is its value (an endpoint change, most often).
		return []driverapi.Op{{Type: driverapi.OpUpdate, Key: k, Item: n, Old: o}}
	}
	var ops []driverapi.Op
	cur := o
	step := func(add bool, l NAT44LBLocal) {
		next := *cur
		next.Locals = slices.DeleteFunc(slices.Clone(cur.Locals), func(x NAT44LBLocal) bool { return idOf(x) == idOf(l) })
		if add {
			next.Locals = append(next.Locals, l)
			SortLBLocals(next.Locals)
		}
		ops = append(ops, driverapi.Op{Type: driverapi.OpUpdate, Key: k, Item: &next, Old: cur})
		cur = &next
	}
	for _, l := range added {
		step(true, l)
	}
	for _, c := range changed {
		step(false, c[0])
		step(true, c[1])
	}
	for _, l := range removed {
		step(false, l)
	}
	return ops
}

// losesAffinityTarget reports whether a mapping with session affinity loses
// or re-weights a local (a changed weight is a del and an add of it). VPP
// deletes the sessions of a removed local but not the affinity records
// that point at it: a record keeps the local's slot in the mapping's pool,
// which VPP dereferences as if it were live (nat44_ed.c,
// nat44_ed_static_mapping_match), so pinned clients would keep being sent
// to the gone endpoint, or to whichever later reuses the slot, until the
// affinity times out (three hours by default). Deleting the mapping
// flushes its records; clients are balanced and pinned afresh.
//
// A local of probability 0 is never drawn, so no record points at it: the
// placeholder leaves without a re-create.
func losesAffinityTarget(o *NAT44LBMapping, removed []NAT44LBLocal, changed [][2]NAT44LBLocal) bool {
	if o.Affinity == 0 {
		return false
	}
	for _, l := range removed {
		if l.Probability != 0 {
			return true
		}
	}
	for _, c := range changed {
		if c[0].Probability != 0 {
			return true
		}
	}
	return false
}

// applyLocalStep applies the local an update step from o to n adds or
// removes to applied.
func applyLocalStep(applied, o, n *NAT44LBMapping) *NAT44LBMapping {
	l, add, ok := lbLocalStep(driverapi.Op{Type: driverapi.OpUpdate, Old: o, Item: n})
	if !ok {
		return n
	}
	cur := *applied
	cur.Locals = slices.DeleteFunc(slices.Clone(cur.Locals), func(x NAT44LBLocal) bool { return idOf(x) == idOf(l) })
	if add {
		cur.Locals = append(cur.Locals, l)
		SortLBLocals(cur.Locals)
	}
	return &cur
}

// lbLocalStep is the one local an update step of an LB mapping adds or
// removes (see updateLocals); ok is false when op is no such step.
func lbLocalStep(op driverapi.Op) (l NAT44LBLocal, add, ok bool) {
	o, ok1 := op.Old.(*NAT44LBMapping)
	n, ok2 := op.Item.(*NAT44LBMapping)
	if !ok1 || !ok2 || op.Type != driverapi.OpUpdate {
		return NAT44LBLocal{}, false, false
	}
	return oneLocalApart(o.Locals, n.Locals)
}

// oneLocalApart finds the one local new has more (add) or fewer than old,
// both in one order, without allocating: it runs for every step applied.
func oneLocalApart(old, new []NAT44LBLocal) (l NAT44LBLocal, add, ok bool) {
	long, short, add := new, old, true
	if len(old) == len(new)+1 {
		long, short, add = old, new, false
	} else if len(new) != len(old)+1 {
		return NAT44LBLocal{}, false, false
	}
	i := 0
	for i < len(short) && short[i] == long[i] {
		i++
	}
	for j := i; j < len(short); j++ {
		if short[j] != long[j+1] {
			return NAT44LBLocal{}, false, false
		}
	}
	return long[i], add, true
}

// lbOpText renders an update step as "add-local <key> <addr>" or
// "del-local <key> <addr>".
func lbOpText(op driverapi.Op) string {
	l, add, ok := lbLocalStep(op)
	if !ok {
		return op.String()
	}
	verb := "del-local"
	if add {
		verb = "add-local"
	}
	return fmt.Sprintf("%s %s %s", verb, op.Key, l.Addr)
}

// compareLocals orders locals by address, port and VRF (canonical order).
func compareLocals(a, b NAT44LBLocal) int {
	if c := a.Addr.Compare(b.Addr); c != 0 {
		return c
	}
	return cmp.Compare(a.VRF, b.VRF)
}

// localID is a local's identity in VPP (address, port and VRF).
type localID struct {
	addr netip.AddrPort
	vrf  uint32
}

func idOf(l NAT44LBLocal) localID { return localID{l.Addr, l.VRF} }

// firstDuplicateLocal returns the index of the first local whose address
// and VRF an earlier one has. Every endpoint change validates its mapping:
// a few locals are compared pairwise, without allocating.
func firstDuplicateLocal(ls []NAT44LBLocal) (int, bool) {
	if len(ls) > 32 {
		seen := make(map[localID]bool, len(ls))
		for i, l := range ls {
			if seen[idOf(l)] {
				return i, true
			}
			seen[idOf(l)] = true
		}
		return 0, false
	}
	for i := 1; i < len(ls); i++ {
		for j := range i {
			if idOf(ls[j]) == idOf(ls[i]) {
				return i, true
			}
		}
	}
	return 0, false
}

// diffLocals compares local sets: added, removed, and changed (old, new)
// pairs whose probability differs, each in canonical order. It runs twice
// per endpoint change. Both lists are canonical in practice (the store
// keeps desired values so, and applied ones come from the layer's writes
// or a sorted dump), so one merge walk suffices; others are sorted first.
func diffLocals(old, new []NAT44LBLocal) (added, removed []NAT44LBLocal, changed [][2]NAT44LBLocal) {
	old, new = canonicalLocals(old), canonicalLocals(new)
	i, j := 0, 0
	for i < len(old) || j < len(new) {
		var c int
		switch {
		case i == len(old):
			c = 1
		case j == len(new):
			c = -1
		default:
			c = compareLocals(old[i], new[j])
		}
		switch {
		case c < 0:
			removed = append(removed, old[i])
			i++
		case c > 0:
			added = append(added, new[j])
			j++
		default:
			if old[i].Probability != new[j].Probability {
				changed = append(changed, [2]NAT44LBLocal{old[i], new[j]})
			}
			i++
			j++
		}
	}
	return added, removed, changed
}

// canonicalLocals returns ls in canonical order, sorting a copy if needed.
func canonicalLocals(ls []NAT44LBLocal) []NAT44LBLocal {
	if slices.IsSortedFunc(ls, compareLocals) {
		return ls
	}
	c := slices.Clone(ls)
	SortLBLocals(c)
	return c
}
