package nat44

import "github.com/vppsvc/vppsvc/vppcfg"

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
