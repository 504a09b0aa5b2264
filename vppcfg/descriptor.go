package vppcfg

import (
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
	"github.com/vppsvc/vppsvc/vppcfg/internal/presentation"
)

// The descriptors themselves (core.Descriptor) live in vppcfg/internal/core,
// where the engine reads them; the kind files of this package describe
// their kinds in terms of their Go types (kindSpec), and register turns
// that into a descriptor.

// kindSpec is how a kind file describes its kind in terms of its Go type T;
// register turns it into a descriptor. Nil functions take the defaults
// named on each field.
type kindSpec[T Item] struct {
	Kind Kind
	// Name is the kind's name in keys, logs and status ("nat44-lb-mapping").
	Name string
	// Gate is the kind whose one item enables the VPP plugin this kind
	// lives in (KindNAT44Global for the NAT44 kinds): items wait for it,
	// disabling the plugin removes them from VPP, and re-enabling it
	// re-creates them. GateKey and GatePlugin are set on that kind: the
	// key of its item, and the plugin's name for pending reasons.
	Gate       Kind
	GateKey    Key
	GatePlugin string
	// ShareExternal lets two items of this kind hold one external key
	// (identity mappings of one address in several VRFs).
	ShareExternal bool
	// NewHandleOnUpdate: VPP answers an update with the object's new
	// handle (a cnat translation update is an add that returns its ID).
	NewHandleOnUpdate bool
	// ApplyPart is set when UpdateOps change one part of the object at a
	// time (an LB mapping's locals), each writing only that part: the
	// value VPP holds after an update from old to new succeeded on
	// applied, which differs from old when an earlier step failed.
	// Default: the update writes the whole new value.
	ApplyPart func(applied, old, new T) T
	// KeyedByLabel: VPP knows the objects only by index, and their label
	// is their identity (an ACL's name). A dumped object is keyed by its
	// tag's label, and one with a tag not ours blocks nothing.
	KeyedByLabel bool
	// AdoptDesired: VPP keeps none of the item but its identity (a
	// binding's priority is only the order of a list), so an adopted item
	// takes the desired value.
	AdoptDesired bool
	// Remerge: the values of merged kinds refer to this kind's items (by
	// VPP index), so a diff that looks at one re-merges them.
	Remerge bool
	// Merge is set when VPP takes the kind's items merged (see core.Merger).
	Merge *core.Merger
	// WaitsFor is a key v cannot be applied without (VPP refers to it by
	// index), with the pending reason: v waits until that key is applied
	// or about to be. Default: none.
	WaitsFor func(v T) (Key, string)
	// Walks are the kinds whose every object VPP visits, in the one API
	// call that applies v (enabling NAT44 on an outside interface
	// registers each static mapping's external address with it): after a
	// VPP restart the layer waits a while for v's interface before it
	// creates the first of them (the engine's Options.BulkHold), so that
	// this call finds none. Default: none.
	Walks func(v T) []Kind
	// Shared is set when VPP keeps one setting for a group of objects, the
	// one the group's first object brought, whatever later ones ask (cnat
	// keeps whether a VIP address is a real IP for all its ports): the
	// group and the value v asks for. Items of one group must agree on it
	// (SharedSetting). Default: no such setting.
	Shared func(v T) (group, value string)
	// OpText renders an op on the kind for logs and tests when Op.String
	// says too little (which local an LB update adds). Default: op.String().
	OpText func(op driverapi.Op) string
	// Rebind is set when VPP keeps the kind's objects by interface index
	// after the interface is deleted (cnat's SNAT-policy entries): the
	// item the same object is at ifName, the interface that reuses the
	// index, so that the layer can remove it there unless it is desired.
	Rebind func(v T, ifName string) T
	// Validate rejects values VPP would refuse or misbehave on; k is the
	// item's key, for the message (use invalid). Default: every value is valid.
	Validate func(k Key, v T) error
	// Canonical returns v with its lists in the order VPP reports them, v
	// itself when they already are, so that equal configurations compare
	// equal. Default: v.
	Canonical func(v T) T
	// EqualApplied tells whether applied (as VPP holds it) is desired,
	// reading VPP's defaults for the zero values that ask for them.
	// Default: desired.Equal(applied).
	EqualApplied func(desired, applied T) bool
	// NeedsRecreate tells whether VPP cannot change old into new in place
	// (identity fields changed); otherwise UpdateOps change it. Default:
	// always (the kind has no in-place update).
	NeedsRecreate func(old, new T) bool
	// UpdateOps are the in-place operations from old to new. Default: one
	// OpUpdate.
	UpdateOps func(k Key, old, new T) []driverapi.Op
	// Label is what an item writes after the owner in its VPP tag, and
	// WithLabel restores it into a dumped item. Default (nil): VPP stores no
	// tag for the kind, so its objects are adopted by key (see the engine's ownership.go).
	Label     func(v T) string
	WithLabel func(v T, label string) T
	// Unobservable copies from desired into a dumped item the fields VPP
	// does not report back. Default: VPP reports every field.
	Unobservable func(observed, desired T) T
	// ExternalKey is VPP's external identity of the item when it shares a
	// namespace with items of other kinds (NAT44 mappings). k is v's key
	// when the caller has it (its name may be the external key, saving an
	// allocation), the zero Key otherwise. Default: none.
	ExternalKey func(k Key, v T) (string, bool)
	// Excludes are keys VPP cannot hold together with v, whoever desires
	// them, and ExcludeWhy says why. Default: none.
	Excludes   func(v T) []Key
	ExcludeWhy string
	// CLI are the VPP CLI lines an operator would type to create v (see
	// cliCommands). Default: a comment that the CLI has no equivalent.
	CLI func(v T) []string
	// Printable is v as `vppsvc render -o json` and `-o yaml` print it (see
	// printableOf): a struct of the item's fields under JSON names, enums by
	// name; owner, when known, completes the VPP tag. Default: v.String().
	Printable func(v T, owner string) any
	// Translation is the service frontend v translates and the backends it
	// sends to, for the kinds that implement a frontend (see
	// translationOf). Default: the kind implements none.
	Translation func(v T) frontendTranslation
	// Untagged is what an UntaggedClaim matches an object of the kind by:
	// the IP family it serves, or the interface feature it is. Default:
	// nothing, so no UntaggedClaim claims the kind.
	Untagged func(v T) untaggedTraits
}

// kinded is implemented by every item type of this package: it names the
// kind without building the key (Key allocates for most kinds).
type kinded interface{ kind() Kind }

func init() {
	core.SetItemKind(func(it Item) (Kind, bool) {
		if k, ok := it.(kinded); ok {
			return k.kind(), true
		}
		return 0, false
	})
}

// register installs the descriptor of one kind; each kind file calls it
// from init. Only the first registration of a kind counts: a kind file that
// names the wrong Kind leaves its own kind undescribed, which
// TestDescriptorsCoverEveryKind catches.
func register[T Item](s kindSpec[T]) {
	u := core.Unknown
	d := &core.Descriptor{
		Kind: s.Kind, Name: s.Name, Gate: s.Gate, GateKey: s.GateKey, GatePlugin: s.GatePlugin, ShareExternal: s.ShareExternal,
		NewHandleOnUpdate: s.NewHandleOnUpdate, KeyedByLabel: s.KeyedByLabel, AdoptDesired: s.AdoptDesired,
		Remerge: s.Remerge, Merge: s.Merge, ExcludeWhy: s.ExcludeWhy,
		Validate:         u.Validate,
		Canonical:        u.Canonical,
		EqualApplied:     u.EqualApplied,
		NeedsRecreate:    u.NeedsRecreate,
		UpdateOps:        u.UpdateOps,
		WithLabel:        u.WithLabel,
		WithUnobservable: u.WithUnobservable,
		ExternalKey:      u.ExternalKey,
		Excludes:         u.Excludes,
		CLI:              u.CLI,
		Printable:        u.Printable,
		Translation:      u.Translation,
		Untagged:         u.Untagged,
		WaitsFor:         u.WaitsFor,
	}
	d.Validate = func(k Key, it Item) error {
		v, ok := it.(T)
		if !ok {
			return u.Validate(k, it)
		}
		if s.Validate == nil {
			return nil
		}
		return s.Validate(k, v)
	}
	if f := s.Canonical; f != nil {
		d.Canonical = func(it Item) Item {
			if v, ok := it.(T); ok {
				return f(v)
			}
			return it
		}
	}
	if f := s.EqualApplied; f != nil {
		d.EqualApplied = func(desired, applied Item) bool {
			dv, ok1 := desired.(T)
			av, ok2 := applied.(T)
			return ok1 && ok2 && f(dv, av)
		}
	}
	if f := s.NeedsRecreate; f != nil {
		d.NeedsRecreate = func(old, new Item) bool {
			ov, ok1 := old.(T)
			nv, ok2 := new.(T)
			return !ok1 || !ok2 || f(ov, nv)
		}
	}
	if f := s.UpdateOps; f != nil {
		d.UpdateOps = func(k Key, old, new Item) []driverapi.Op {
			ov, ok1 := old.(T)
			nv, ok2 := new.(T)
			if !ok1 || !ok2 {
				return core.UpdateInPlace(k, old, new)
			}
			return f(k, ov, nv)
		}
	}
	if f, w := s.Label, s.WithLabel; f != nil && w != nil {
		d.Label = func(it Item) string {
			if v, ok := it.(T); ok {
				return f(v)
			}
			return ""
		}
		d.WithLabel = func(it Item, label string) Item {
			if v, ok := it.(T); ok {
				return w(v, label)
			}
			return it
		}
	}
	if f := s.Unobservable; f != nil {
		d.WithUnobservable = func(observed, desired Item) Item {
			ov, ok1 := observed.(T)
			dv, ok2 := desired.(T)
			if !ok1 || !ok2 {
				return observed
			}
			return f(ov, dv)
		}
	}
	if f := s.ExternalKey; f != nil {
		d.ExternalKey = func(k Key, it Item) (string, bool) {
			if v, ok := it.(T); ok {
				return f(k, v)
			}
			return "", false
		}
	}
	if f := s.Excludes; f != nil {
		d.Excludes = func(it Item) []Key {
			if v, ok := it.(T); ok {
				return f(v)
			}
			return nil
		}
	}
	if f := s.CLI; f != nil {
		d.CLI = func(it Item) []string {
			if v, ok := it.(T); ok {
				return f(v)
			}
			return core.NoCLI(it)
		}
	}
	if f := s.Printable; f != nil {
		d.Printable = func(it Item, owner string) any {
			if v, ok := it.(T); ok {
				return f(v, owner)
			}
			return it.String()
		}
	}
	if f := s.Translation; f != nil {
		d.Translation = func(it Item) (presentation.Translation, bool) {
			if v, ok := it.(T); ok {
				t := f(v)
				return presentation.Translation{Frontend: t.Frontend, Protocol: uint8(t.Protocol),
					Backends: t.Backends, Name: t.Name, Flags: t.Flags}, true
			}
			return presentation.Translation{}, false
		}
	}
	if f := s.Untagged; f != nil {
		d.Untagged = func(it Item) core.UntaggedTraits {
			if v, ok := it.(T); ok {
				t := f(v)
				return core.UntaggedTraits{Addr: t.addr, Feature: t.feature}
			}
			return core.UntaggedTraits{}
		}
	}
	if f := s.WaitsFor; f != nil {
		d.WaitsFor = func(it Item) (Key, string, bool) {
			if v, ok := it.(T); ok {
				k, why := f(v)
				return k, why, true
			}
			return Key{}, "", false
		}
	}
	if f := s.Walks; f != nil {
		d.Walks = func(it Item) []Kind {
			if v, ok := it.(T); ok {
				return f(v)
			}
			return nil
		}
	}
	if f := s.ApplyPart; f != nil {
		d.ApplyPart = func(applied, old, new Item) Item {
			av, ok1 := applied.(T)
			ov, ok2 := old.(T)
			nv, ok3 := new.(T)
			if !ok1 || !ok2 || !ok3 {
				return new
			}
			return f(av, ov, nv)
		}
	}
	if f := s.Shared; f != nil {
		d.Shared = func(it Item) (string, string, bool) {
			if v, ok := it.(T); ok {
				g, val := f(v)
				return g, val, true
			}
			return "", "", false
		}
	}
	if f := s.OpText; f != nil {
		d.OpText = f
	}
	if f := s.Rebind; f != nil {
		d.Rebind = func(it Item, ifName string) Item {
			if v, ok := it.(T); ok {
				return f(v, ifName)
			}
			return nil
		}
	}
	core.Register(d)
}
