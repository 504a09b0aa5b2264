// Package idmap is a map from service ID to an entry that knows its own ID,
// for the per-service indexes of the processor and the renderers.
package idmap

import (
	"hash/maphash"
	"iter"

	"github.com/vppsvc/vppsvc/model"
)

// Map holds entries keyed by a 64-bit hash of their service ID: an entry
// knows its ID (idOf), so the map need not hold it, and a slot of a hash
// and a pointer costs 16 bytes where one of an ID and a pointer costs 40
// (about 40 bytes a service with a map's spare room, per index). The rare
// entry whose hash another entry holds is kept by ID in collided.
//
// idOf must give an entry's ID for as long as the map holds it.
type Map[T any] struct {
	idOf     func(*T) model.ServiceID
	hash     func(model.ServiceID) uint64
	byHash   map[uint64]*T
	collided map[model.ServiceID]*T
}

// New returns a map with room for size entries.
func New[T any](size int, idOf func(*T) model.ServiceID) Map[T] {
	seed := maphash.MakeSeed()
	return Map[T]{
		idOf:   idOf,
		hash:   func(id model.ServiceID) uint64 { return maphash.Comparable(seed, id) },
		byHash: make(map[uint64]*T, size),
	}
}

// Get returns the entry of id, or nil.
func (m *Map[T]) Get(id model.ServiceID) *T {
	if m.Len() == 0 {
		return nil // without hashing the ID: the old index of a cold sync
	}
	if e := m.byHash[m.hash(id)]; e != nil && m.idOf(e) == id {
		return e
	}
	return m.collided[id]
}

// Set stores e under its ID, replacing the entry of that ID.
func (m *Map[T]) Set(e *T) {
	id := m.idOf(e)
	h := m.hash(id)
	if cur := m.byHash[h]; cur != nil && m.idOf(cur) != id {
		if m.collided == nil {
			m.collided = map[model.ServiceID]*T{}
		}
		m.collided[id] = e
		return
	}
	m.byHash[h] = e
}

// Put is Set returning the entry it replaced (nil when there was none),
// with the ID hashed once where Get then Set hash it twice.
func (m *Map[T]) Put(e *T) (old *T) { return m.PutHashed(e, m.hash(m.idOf(e))) }

// Hash is the hash m files id under. It only reads what New set, so
// goroutines may hash the IDs of entries to come while m is in use.
func (m *Map[T]) Hash(id model.ServiceID) uint64 { return m.hash(id) }

// PutHashed is Put of e, whose ID hashes to h (Hash). It reads e's ID only
// when h's slot is taken: a resync that hashed its entries' IDs where it
// made them fills an empty map without reading each ID again.
func (m *Map[T]) PutHashed(e *T, h uint64) (old *T) {
	cur := m.byHash[h]
	if cur == nil {
		m.byHash[h] = e
		return nil
	}
	id := m.idOf(e)
	if m.idOf(cur) == id {
		m.byHash[h] = e
		return cur
	}
	if m.collided == nil {
		m.collided = map[model.ServiceID]*T{}
	}
	old = m.collided[id]
	m.collided[id] = e
	return old
}

// Delete forgets the entry of id; a collided entry of the same hash takes
// its slot.
func (m *Map[T]) Delete(id model.ServiceID) {
	h := m.hash(id)
	if e := m.byHash[h]; e == nil || m.idOf(e) != id {
		delete(m.collided, id)
		return
	}
	delete(m.byHash, h)
	for oid, o := range m.collided {
		if m.hash(oid) == h {
			m.byHash[h] = o
			delete(m.collided, oid)
			return
		}
	}
}

// Len is the number of entries.
func (m *Map[T]) Len() int { return len(m.byHash) + len(m.collided) }

// All yields every entry, in no particular order. Set and Delete may not
// be called while it runs.
func (m *Map[T]) All() iter.Seq[*T] {
	return func(yield func(*T) bool) {
		for _, e := range m.byHash {
			if !yield(e) {
				return
			}
		}
		for _, e := range m.collided {
			if !yield(e) {
				return
			}
		}
	}
}
