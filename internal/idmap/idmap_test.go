package idmap

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/vppsvc/vppsvc/model"
)

// TestMap: entries are found by ID whatever their hashes, including
// when every ID hashes alike (the collided entries), and a collided entry
// takes the slot of a deleted one.
func TestMap(t *testing.T) {
	for _, tc := range []struct {
		name string
		hash func(model.ServiceID) uint64
	}{
		{"seeded", nil},
		{"every hash alike", func(model.ServiceID) uint64 { return 7 }},
		{"two hashes", func(id model.ServiceID) uint64 { return uint64(len(id.Name) % 2) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := New(0, func(e *entry) model.ServiceID { return e.id })
			if tc.hash != nil {
				m.hash = tc.hash
			}
			newEntry := func(ns, name string) *entry {
				return &entry{id: model.ServiceID{Namespace: ns, Name: name}}
			}
			want := map[model.ServiceID]*entry{}
			check := func() {
				t.Helper()
				assert.Equal(t, len(want), m.Len())
				for id, e := range want {
					assert.Same(t, e, m.Get(id), id.String())
				}
				var got []*entry
				for e := range m.All() {
					got = append(got, e)
				}
				assert.ElementsMatch(t, slices.Collect(func(yield func(*entry) bool) {
					for _, e := range want {
						if !yield(e) {
							return
						}
					}
				}), got)
			}
			for _, n := range []string{"a", "bb", "ccc", "dddd", "e"} {
				e := newEntry("default", n)
				m.Set(e)
				want[e.id] = e
			}
			other := newEntry("other", "a")
			m.Set(other)
			want[other.id] = other
			check()
			assert.Nil(t, m.Get(model.ServiceID{Namespace: "default", Name: "zz"}))

			replaced := newEntry("default", "ccc")
			m.Set(replaced)
			want[replaced.id] = replaced
			check()

			// Put returns what it replaces, whether the entry holds the
			// hash's slot or sits among the collided.
			for _, n := range []string{"bb", "e", "new"} {
				e := newEntry("default", n)
				assert.Same(t, want[e.id], m.Put(e), n)
				want[e.id] = e
				check()
			}
			fresh := newEntry("other", "new")
			assert.Nil(t, m.Put(fresh))
			want[fresh.id] = fresh
			check()

			for _, id := range []model.ServiceID{{Namespace: "default", Name: "a"}, {Namespace: "default", Name: "dddd"}, {Namespace: "default", Name: "nope"}} {
				m.Delete(id)
				delete(want, id)
				check()
			}
			for id := range want {
				m.Delete(id)
				delete(want, id)
				check()
			}
			assert.Empty(t, m.byHash)
			assert.Empty(t, m.collided)
		})
	}
}

type entry struct{ id model.ServiceID }
