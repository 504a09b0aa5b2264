package core

import (
	"time"

	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
)

// Merger is what the engine asks of a kind whose items VPP does not take
// one by one but merged into one value per group (ACL bindings: one message
// sets an interface's whole lists). The merged value is an item of the kind
// under a key of its own (the group's), sent as one OpUpdate. The hooks see
// the engine only through the interfaces below, so that the kind file
// (vppcfg's kind_acl_binding_merge.go) knows nothing of the engine's types
// and the engine nothing of the kind's: what the kind remembers of VPP is
// its own MergedState, which the engine keeps without looking inside.
type Merger struct {
	// NewState returns the kind's empty state: the engine keeps one for
	// what it applied and builds one from every dump.
	NewState func() MergedState
	// Plan returns a diff's merged ops: dels, which only remove items, run
	// in the delete phase, sets in the create phase. Each op covers the
	// items whose status it decides.
	Plan func(in MergeInput) (dels, sets []MergedOp)
	// Prepare completes a merged op right before it is sent (the VPP
	// indexes of what it refers to); what it cannot resolve fails there.
	Prepare func(v AppliedView, op driverapi.Op, now time.Time) driverapi.Op
	// Record folds a merged op that succeeded into the applied view.
	Record func(v AppliedView, op driverapi.Op)
	// Observe maps a merged object of a dump back to applied items; it
	// runs after every other object of the dump is classified.
	Observe func(v DumpView, o driverapi.Observed)
}

// MergedOp is a planned merged op and the keys whose status it decides.
type MergedOp struct {
	Op     driverapi.Op
	Covers []Key
}

// MergeInput is a diff as Merger.Plan sees it.
type MergeInput interface {
	// EachKey visits every key of a merged kind, desired or applied, once.
	EachKey(fn func(Key))
	// Desired returns the desired item at k.
	Desired(k Key) (Item, bool)
	// Applied returns the applied item at k, its owner, and whether it may
	// be pruned if nobody desires it (an orphan whose owner has not
	// resynced may not).
	Applied(k Key) (it Item, owner string, prunable, ok bool)
	// Ready reports whether the desired item at k waits for nothing.
	Ready(k Key) bool
	// Pend marks k pending, with the reason.
	Pend(k Key, reason string)
	// HasInterface reports whether VPP has the interface.
	HasInterface(name string) bool
	// State is the kind's state of what is applied, not to be changed.
	State() MergedState
}

// AppliedView is the engine's applied state as Merger.Prepare and Record
// see it.
type AppliedView interface {
	// State is the kind's state of what is applied, changed in place.
	State() MergedState
	// Handle returns the VPP index of the applied item at k.
	Handle(k Key) (uint32, bool)
	// Fail records that the item at k failed.
	Fail(k Key, err error, now time.Time)
	// Replace removes the applied items drop selects, then applies keys:
	// each takes its desired value and first owner, or, when nobody
	// desires it, the removed entry it had.
	Replace(drop func(Item) bool, keys []Key)
}

// DumpView is a dump being classified as Merger.Observe sees it.
type DumpView interface {
	// State is the kind's state found so far, changed in place.
	State() MergedState
	// Name returns the name of the object of a kind keyed by label
	// (KeyedByLabel) at VPP index handle.
	Name(kind Kind, handle uint32) (string, bool)
	// Desired returns the desired item at k.
	Desired(k Key) (Item, bool)
	// Adopt records it as applied at k: owned by the first owner that
	// desires k or, when nobody does, an orphan of the owner of the
	// applied item at ownerOf.
	Adopt(k Key, it Item, ownerOf Key)
}

// MergedState is what a merged kind remembers of VPP (ACL bindings: the
// lists per interface). The engine keeps it for the kind, hands it to the
// hooks, replaces it with the one a dump built, and tells it when an
// interface is gone.
type MergedState interface {
	// ForgetInterface drops what the state holds of a deleted interface.
	ForgetInterface(ifName string)
}
