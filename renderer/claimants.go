package renderer

import (
	"slices"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// The services that want one claim are its claimants, in ID order: the
// first wins. Nearly every claim has one, so the index keeps the winner in
// winners (a 16-byte slot per claim, no allocation) and the others, rare,
// in contenders.

// addClaimant adds e, which claims c, to the claimants of c in ID order;
// an entry of the same service must have been removed before.
func (ix *index) addClaimant(c vppcfg.Key, e *serviceEntry) {
	ix.addClaimantHashed(c, ix.winners.hashOf(c), e)
}

// addClaimantHashed is addClaimant of c, whose hash is h.
func (ix *index) addClaimantHashed(c vppcfg.Key, h uint64, e *serviceEntry) {
	w := ix.winners.getHashed(c, h)
	if w == nil {
		ix.winners.setHashed(c, h, e)
		return
	}
	if e.svc.ID.Compare(w.svc.ID) < 0 {
		ix.winners.setHashed(c, h, e)
		e = w
	}
	rest := ix.contenders[c]
	i, _ := slices.BinarySearchFunc(rest, e.svc.ID, func(m *serviceEntry, id model.ServiceID) int { return m.svc.ID.Compare(id) })
	ix.contenders[c] = slices.Insert(rest, i, e)
}

// removeClaimant takes the entry of service id out of the claimants of c;
// the next in ID order wins.
func (ix *index) removeClaimant(c vppcfg.Key, id model.ServiceID) {
	w := ix.winners.get(c)
	if w == nil {
		return
	}
	rest := ix.contenders[c]
	if w.svc.ID == id {
		if len(rest) == 0 {
			ix.winners.remove(c)
			return
		}
		ix.winners.set(c, rest[0])
		rest = rest[1:]
	} else {
		rest = slices.DeleteFunc(rest, func(m *serviceEntry) bool { return m.svc.ID == id })
	}
	if len(rest) == 0 {
		delete(ix.contenders, c)
	} else {
		ix.contenders[c] = rest
	}
}

// claimants returns how many services want c.
func (ix *index) claimants(c vppcfg.Key) int {
	if ix.winners.get(c) == nil {
		return 0
	}
	return 1 + len(ix.contenders[c])
}

// claimantIDs returns the IDs of the services that want c, winner first.
func (ix *index) claimantIDs(c vppcfg.Key) []model.ServiceID {
	w := ix.winners.get(c)
	if w == nil {
		return nil
	}
	rest := ix.contenders[c]
	out := make([]model.ServiceID, 0, 1+len(rest))
	out = append(out, w.svc.ID)
	for _, e := range rest {
		out = append(out, e.svc.ID)
	}
	return out
}
