package nat44

import (
	"slices"

	"github.com/vppsvc/vppsvc/vppcfg"
)

// claimOf is the identity under which items compete (renderer.ClaimFunc).
// It is the item's key, except that NAT44 mappings of every kind claim the
// key of the LB mapping at their external key (vppcfg.ExternalKey, the name
// of an LB mapping's key): VPP has one mapping per external key whatever
// its kind (the VPP layer rejects a transaction that would put two), so a
// one-backend and a many-backend service with the same frontend conflict,
// and so does a service frontend with an egress SNAT identity port.
func claimOf(it vppcfg.Item) vppcfg.Key {
	if ext, ok := vppcfg.ExternalKey(it); ok {
		return vppcfg.Key{Kind: vppcfg.KindNAT44LBMapping, Name: ext}
	}
	return it.Key()
}

// affinityRecreateReason is logged for each mapping losesAffinityTarget
// re-creates.
const affinityRecreateReason = "re-creating LB mapping to drop session affinity to a removed endpoint"

// losesAffinityTarget reports whether an LB mapping with session affinity,
// kept with the same affinity, loses or changes one of its locals (a
// changed weight is applied as remove and add, so it counts too); such a
// mapping is deleted in a transaction of its own before the new value is
// put (renderer.RecreateFunc). Deleting an LB mapping flushes its affinity
// records; removing only the local (what the VPP layer does for a changed
// local set) would leave records that still point at the removed
// endpoint's slot, which VPP then dereferences as if it were live: pinned
// clients would keep being sent to the gone endpoint (or to whichever
// endpoint later reuses the slot) until the affinity timeout, three hours by
// default. When the affinity itself changes the VPP layer re-creates the
// mapping anyway.
func losesAffinityTarget(before, after vppcfg.Item) bool {
	b, ok1 := before.(*vppcfg.NAT44LBMapping)
	a, ok2 := after.(*vppcfg.NAT44LBMapping)
	if !ok1 || !ok2 || b.Affinity == 0 || b.Affinity != a.Affinity {
		return false
	}
	for _, l := range b.Locals {
		if !slices.Contains(a.Locals, l) {
			return true
		}
	}
	return false
}
