package core

import (
	"sync"

	"github.com/vppsvc/vppsvc/internal/parallel"
)

// txnEntry is one op of a transaction with what Commit derives from it on
// every core: its key and its canonical value (nil for a Delete).
type txnEntry struct {
	key Key
	val Item
	// superseded: a later op of the transaction writes the same key.
	superseded bool
}

// txnEntries validates the ops of a transaction and puts each value in
// canonical order. Both are pure and a resync's 50,000 puts are most of a
// commit's work, so they run on every core (internal/parallel); the error
// is that of the first invalid op, as one pass in order would find.
func txnEntries(ops []TxnOp) ([]txnEntry, error) {
	entries := make([]txnEntry, len(ops))
	var mu sync.Mutex
	firstBad, firstErr := len(ops), error(nil)
	parallel.For(len(ops), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			op := &ops[i]
			if op.Put == nil {
				entries[i].key = op.Del
				continue
			}
			k := op.KeyOf()
			if err := ValidateItem(k, op.Put); err != nil {
				mu.Lock()
				if i < firstBad {
					firstBad, firstErr = i, err
				}
				mu.Unlock()
				return // the ops after i in this range cannot come first
			}
			entries[i] = txnEntry{key: k, val: Describe(k.Kind).Canonical(op.Put)}
		}
	})
	return entries, firstErr
}

// netOf is the net effect of entries by key, the last op of a key winning;
// it marks the entries a later one supersedes.
func netOf(entries []txnEntry) map[Key]Item {
	net := make(map[Key]Item, len(entries))
	dup := false
	for i := range entries {
		n := len(net)
		net[entries[i].key] = entries[i].val
		dup = dup || len(net) == n
	}
	if dup { // rare: a key put or deleted twice in one transaction
		last := make(map[Key]bool, len(entries))
		for i := len(entries) - 1; i >= 0; i-- {
			k := entries[i].key
			entries[i].superseded = last[k]
			last[k] = true
		}
	}
	return net
}

// firstConflict is the conflict (Store.check) of the smallest key among
// the puts of entries, whatever the order they are checked in: the checks
// only read the store and the transaction, and run on every core.
func (s *Store) firstConflict(owner string, entries []txnEntry, net map[Key]Item, netExt *extIndex, leaving map[Key]bool) error {
	var mu sync.Mutex
	var firstKey Key
	var firstErr error
	parallel.For(len(entries), func(lo, hi int) {
		var key Key
		var err error
		for i := lo; i < hi; i++ {
			e := &entries[i]
			if e.val == nil || e.superseded || (err != nil && e.key.Compare(key) > 0) {
				continue
			}
			if cerr := s.check(owner, e.key, e.val, net, netExt, leaving); cerr != nil {
				key, err = e.key, cerr
			}
		}
		if err != nil {
			mu.Lock()
			if firstErr == nil || key.Compare(firstKey) < 0 {
				firstKey, firstErr = key, err
			}
			mu.Unlock()
		}
	})
	return firstErr
}
