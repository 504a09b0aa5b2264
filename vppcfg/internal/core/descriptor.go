package core

import (
	"fmt"
	"net/netip"

	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
	"github.com/vppsvc/vppsvc/vppcfg/internal/kindname"
	"github.com/vppsvc/vppsvc/vppcfg/internal/presentation"
)

// Descriptor is everything the generic code (store, classification, diff,
// status, presentation) knows about one item kind. Each kind registers
// one, from its kind_*.go file in vppcfg (vppcfg's kindSpec says what each
// field means); the generic code looks it up by Kind (an array index) and
// never switches over item types. Every function field but the optional
// ones named below is set, to a default when the kind gives none.
type Descriptor struct {
	Kind Kind
	Name string

	Gate              Kind
	GateKey           Key
	GatePlugin        string
	ShareExternal     bool
	NewHandleOnUpdate bool
	KeyedByLabel      bool
	AdoptDesired      bool
	Remerge           bool
	// ExcludeWhy explains a conflict with a key of Excludes.
	ExcludeWhy string
	// Merge is set for kinds whose items VPP takes merged (see Merger).
	Merge *Merger

	Validate         func(k Key, it Item) error
	Canonical        func(it Item) Item
	EqualApplied     func(desired, applied Item) bool
	NeedsRecreate    func(old, new Item) bool
	UpdateOps        func(k Key, old, new Item) []driverapi.Op
	WithLabel        func(it Item, label string) Item
	WithUnobservable func(observed, desired Item) Item
	ExternalKey      func(k Key, it Item) (string, bool)
	Excludes         func(it Item) []Key
	CLI              func(it Item) []string
	Printable        func(it Item, owner string) any
	Translation      func(it Item) (presentation.Translation, bool)
	Untagged         func(it Item) UntaggedTraits
	WaitsFor         func(it Item) (Key, string, bool)

	// Optional: nil when the kind has none (see vppcfg's kindSpec).
	Label     func(it Item) string
	OpText    func(op driverapi.Op) string
	Rebind    func(it Item, ifName string) Item
	ApplyPart func(applied, old, new Item) Item
	Shared    func(it Item) (group, value string, ok bool)
	Walks     func(it Item) []Kind
}

// UntaggedTraits is what an UntaggedClaim matches an object by: the
// address whose family it serves, or the interface feature it is.
type UntaggedTraits struct {
	Addr    netip.Addr
	Feature string
}

// Taggable reports whether VPP stores a tag for items of the kind.
func (d *Descriptor) Taggable() bool { return d.Label != nil }

// IsGate reports whether d's one item enables a plugin other kinds live in.
func (d *Descriptor) IsGate() bool { return d.GateKey != Key{} }

// descriptors is indexed by Kind.
var descriptors [KindLimit]*Descriptor

// Unknown describes kinds nobody registered: nothing is valid.
var Unknown = &Descriptor{
	Validate: func(k Key, it Item) error {
		return fmt.Errorf("%w: unknown item type %T", ErrInvalid, it)
	},
	Canonical:        func(it Item) Item { return it },
	EqualApplied:     func(d, a Item) bool { return d.Equal(a) },
	NeedsRecreate:    func(Item, Item) bool { return true },
	UpdateOps:        UpdateInPlace,
	WithLabel:        func(it Item, _ string) Item { return it },
	WithUnobservable: func(o, _ Item) Item { return o },
	ExternalKey:      func(Key, Item) (string, bool) { return "", false },
	Excludes:         func(Item) []Key { return nil },
	CLI:              NoCLI,
	Printable:        func(it Item, _ string) any { return it.String() },
	Translation:      func(Item) (presentation.Translation, bool) { return presentation.Translation{}, false },
	Untagged:         func(Item) UntaggedTraits { return UntaggedTraits{} },
	WaitsFor:         func(Item) (Key, string, bool) { return Key{}, "", false },
}

// Describe returns the descriptor of kind k.
func Describe(k Kind) *Descriptor {
	if k < KindLimit {
		if d := descriptors[k]; d != nil {
			return d
		}
	}
	return Unknown
}

// itemKind, set by vppcfg, names the kind of its items without building
// the key (Key allocates for most kinds).
var itemKind func(Item) (Kind, bool)

// SetItemKind installs vppcfg's kind lookup; vppcfg calls it once, at init.
func SetItemKind(f func(Item) (Kind, bool)) { itemKind = f }

// Of returns the descriptor of an item's kind.
func Of(it Item) *Descriptor {
	if itemKind != nil {
		if k, ok := itemKind(it); ok {
			return Describe(k)
		}
	}
	if it == nil {
		return Unknown
	}
	return Describe(it.Key().Kind) // the merged value of a kind, or no kind
}

// Register installs the descriptor of one kind; vppcfg's kind files call it
// from init (through vppcfg's register). Only the first registration of a
// kind counts.
func Register(d *Descriptor) {
	if d.Kind < KindLimit && descriptors[d.Kind] == nil {
		descriptors[d.Kind] = d
		kindname.Set(uint8(d.Kind), d.Name)
	}
}

// Gates yields the descriptors of the kinds that enable a plugin.
func Gates(yield func(*Descriptor) bool) {
	for _, d := range descriptors {
		if d != nil && d.IsGate() && !yield(d) {
			return
		}
	}
}

// UpdateInPlace is the default update: one OpUpdate to the new value.
func UpdateInPlace(k Key, old, new Item) []driverapi.Op {
	return []driverapi.Op{{Type: driverapi.OpUpdate, Key: k, Item: new, Old: old}}
}

// NoCLI is the default CLI: a comment that the CLI has no equivalent.
func NoCLI(it Item) []string { return []string{"# no CLI equivalent: " + it.String()} }

// OpText renders op for logs and tests, as its kind's OpText says.
func OpText(op driverapi.Op) string {
	if f := Describe(op.Key.Kind).OpText; f != nil {
		return f(op)
	}
	return op.String()
}

// Merged reports whether items of kind k are applied merged (see Merger).
func Merged(k Kind) bool { return Describe(k).Merge != nil }

// Taggable reports whether VPP stores a tag for items of kind k.
func Taggable(k Kind) bool { return Describe(k).Taggable() }

// ItemLabel returns the label an item contributes to its tag.
func ItemLabel(it Item) string {
	if d := Of(it); d.Taggable() {
		return d.Label(it)
	}
	return ""
}

// WithLabel returns a copy of a dumped item with the label recovered from its tag.
func WithLabel(it Item, label string) Item { return Of(it).WithLabel(it, label) }

// WithUnobservable copies into a dumped item the fields VPP does not report
// back, from the desired value (each kind's descriptor names them: cnat
// dumps show IsRealIP, flags and flow hash as 0, NAT44 static mapping dumps
// omit the twice-NAT pool address, LB mapping dumps never fill the
// affinity). Drift in those fields cannot be detected; it is fixed by the
// next change of the item.
func WithUnobservable(observed, desired Item) Item {
	return Of(observed).WithUnobservable(observed, desired)
}

// EqualApplied compares a desired item with its applied value, treating
// VPP defaults as the values they stand for.
func EqualApplied(desired, applied Item) bool {
	return Of(desired).EqualApplied(desired, applied)
}

// ValidateItem checks one item of key k with its kind's descriptor.
func ValidateItem(k Key, it Item) error { return Describe(k.Kind).Validate(k, it) }

// Canonical returns the item with its lists in canonical order, copying it
// only when its order differs, so that equal configurations compare equal.
func Canonical(it Item) Item { return Of(it).Canonical(it) }

// ExternalKeyOf is vppcfg.ExternalKey of an item whose key k is known;
// kinds whose key is built from the external key return its name without
// allocating. k may be the zero Key when unknown.
func ExternalKeyOf(k Key, it Item) (string, bool) {
	if k == (Key{}) {
		return Of(it).ExternalKey(k, it)
	}
	return Describe(k.Kind).ExternalKey(k, it)
}

// ExternalConflict reports whether keys a and b, both holding one external
// key, conflict in VPP.
func ExternalConflict(a, b Key) bool {
	return a != b && !(a.Kind == b.Kind && Describe(a.Kind).ShareExternal)
}

// All yields the registered descriptors in kind order.
func All(yield func(*Descriptor) bool) {
	for _, d := range descriptors {
		if d != nil && !yield(d) {
			return
		}
	}
}
