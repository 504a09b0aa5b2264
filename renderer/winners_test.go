package renderer

import (
	"fmt"
	"hash/maphash"
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/vppsvc/vppsvc/vppcfg"
)

// claimHashes are the claim hashes the winners table is tested under: the
// real one, every claim alike, and two values (so that one entry holds two
// claims of one hash, and claims share slots).
var claimHashes = []struct {
	name string
	hash func(maphash.Seed, vppcfg.Key) uint64
}{
	{"seeded", hashClaim},
	{"every hash alike", func(maphash.Seed, vppcfg.Key) uint64 { return 7 }},
	{"two hashes", func(_ maphash.Seed, c vppcfg.Key) uint64 { return uint64(len(c.Name) % 2) }},
}

// The winners table answers as a map keyed by the whole claim would,
// under each of claimHashes.
func TestWinnersEqualAMapByClaim(t *testing.T) {
	claims := make([]vppcfg.Key, 12)
	for i := range claims {
		claims[i] = vppcfg.Key{Kind: vppcfg.KindDropRoute, Name: fmt.Sprintf("vrf0/10.96.0.%d/32", i)}
	}
	for _, tc := range claimHashes {
		t.Run(tc.name, func(t *testing.T) {
			w := newWinners(0)
			w.hash = tc.hash
			rnd := rand.New(rand.NewPCG(1, 2))
			// Entries of one to three claims each, their claims sorted as
			// newEntry leaves them.
			var entries []*serviceEntry
			for i := 0; i < 20; i++ {
				e := &serviceEntry{}
				for _, j := range rnd.Perm(len(claims))[:1+rnd.IntN(3)] {
					e.items = append(e.items, claimed{claim: claims[j]})
				}
				sortClaims(e)
				w.markSelfCollided(e)
				entries = append(entries, e)
			}
			want := map[vppcfg.Key]*serviceEntry{}
			for step := 0; step < 2000; step++ {
				e := entries[rnd.IntN(len(entries))]
				c := e.items[rnd.IntN(len(e.items))].claim
				if rnd.IntN(3) == 0 {
					w.remove(c)
					delete(want, c)
				} else {
					w.set(c, e)
					want[c] = e
				}
				for _, c := range claims {
					if got := w.get(c); got != want[c] {
						t.Fatalf("step %d: winner of %s is %p, want %p", step, c, got, want[c])
					}
				}
				if w.len() != len(want) {
					t.Fatalf("step %d: %d winners, want %d", step, w.len(), len(want))
				}
			}
			if got := maps.Collect(w.all()); !maps.Equal(got, want) {
				t.Fatalf("all() = %v, want %v", got, want)
			}
		})
	}
}

// sortClaims sorts an entry's claims as newEntry does.
func sortClaims(e *serviceEntry) {
	for i := range e.items {
		for j := i + 1; j < len(e.items); j++ {
			if e.items[j].claim.Compare(e.items[i].claim) < 0 {
				e.items[i], e.items[j] = e.items[j], e.items[i]
			}
		}
	}
}
