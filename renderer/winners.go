package renderer

import (
	"hash/maphash"
	"iter"

	"github.com/vppsvc/vppsvc/vppcfg"
)

// winners maps each claim to the service entry that wins it. A slot of a
// map keyed by the claim is 32 bytes (the 24-byte key and the pointer);
// keyed by a 64-bit hash of the claim it is 16, and the entry tells which
// of its claims a slot is for: the one it holds with that hash. An entry
// that holds two claims of one hash (selfCollided, which 64-bit hashes
// make all but impossible) and a claim whose hash slot another claim
// holds are kept by the whole claim in collided.
type winners struct {
	seed     maphash.Seed
	byHash   map[uint64]*serviceEntry
	collided map[vppcfg.Key]*serviceEntry
	// hash is maphash of the claim with seed; tests replace it to collide.
	hash func(maphash.Seed, vppcfg.Key) uint64
}

func newWinners(size int) winners {
	return winners{seed: maphash.MakeSeed(), byHash: make(map[uint64]*serviceEntry, size), hash: hashClaim}
}

func hashClaim(seed maphash.Seed, c vppcfg.Key) uint64 { return maphash.Comparable(seed, c) }

// reserve makes room for n claims in an empty table, keeping its seed (the
// entries made for it know which of their claims collide).
func (w *winners) reserve(n int) {
	if w.len() == 0 {
		w.byHash = make(map[uint64]*serviceEntry, n)
	}
}

// hashOf is the hash c is filed under. It reads only the seed and the
// hash function, so a resync's goroutines hash the claims of the entries
// they make (entryHashes) while the table is being filled.
func (w *winners) hashOf(c vppcfg.Key) uint64 { return w.hash(w.seed, c) }

// get returns the winner of c, or nil.
func (w *winners) get(c vppcfg.Key) *serviceEntry {
	if len(w.byHash) == 0 && len(w.collided) == 0 {
		return nil
	}
	return w.getHashed(c, w.hashOf(c))
}

// getHashed is get of c, whose hash is h.
func (w *winners) getHashed(c vppcfg.Key, h uint64) *serviceEntry {
	if e := w.byHash[h]; e != nil && e.holds(c) {
		return e
	}
	return w.collided[c]
}

// set makes e the winner of c, which e claims.
func (w *winners) set(c vppcfg.Key, e *serviceEntry) { w.setHashed(c, w.hashOf(c), e) }

// setHashed is set of c, whose hash is h.
func (w *winners) setHashed(c vppcfg.Key, h uint64, e *serviceEntry) {
	w.removeHashed(c, h)
	if !e.selfCollided && w.byHash[h] == nil {
		w.byHash[h] = e
		return
	}
	if w.collided == nil {
		w.collided = map[vppcfg.Key]*serviceEntry{}
	}
	w.collided[c] = e
}

// remove forgets the winner of c.
func (w *winners) remove(c vppcfg.Key) { w.removeHashed(c, w.hashOf(c)) }

// removeHashed is remove of c, whose hash is h.
func (w *winners) removeHashed(c vppcfg.Key, h uint64) {
	if e := w.byHash[h]; e != nil && e.holds(c) {
		delete(w.byHash, h)
		return
	}
	delete(w.collided, c)
}

// len is how many claims have a winner.
func (w *winners) len() int { return len(w.byHash) + len(w.collided) }

// all yields every claim with its winner, in no order.
func (w *winners) all() iter.Seq2[vppcfg.Key, *serviceEntry] {
	return func(yield func(vppcfg.Key, *serviceEntry) bool) {
		for h, e := range w.byHash {
			for _, it := range e.items {
				if w.hashOf(it.claim) == h && !yield(it.claim, e) {
					return
				}
			}
		}
		for c, e := range w.collided {
			if !yield(c, e) {
				return
			}
		}
	}
}

// markSelfCollided sets e.selfCollided when two of its claims hash alike.
// An entry has a few claims: their hashes are compared pairwise.
func (w *winners) markSelfCollided(e *serviceEntry) {
	if len(e.items) < 2 {
		return
	}
	var room [8]uint64
	hs := room[:0]
	for _, it := range e.items {
		h := w.hashOf(it.claim)
		for _, o := range hs {
			if o == h {
				e.selfCollided = true
				return
			}
		}
		hs = append(hs, h)
	}
}
