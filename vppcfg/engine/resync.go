package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
)

// Resync dumps VPP and applies the difference now. Start does this by
// itself; the method is for callers that know VPP was changed behind the
// layer's back.
func (r *Reconciler) Resync(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.resync(ctx)
}

// resync dumps VPP, maps the dump back to items and owners, and applies the
// difference. Called with mu held.
func (r *Reconciler) resync(ctx context.Context) error {
	start := time.Now()
	dctx, cancel := context.WithTimeout(ctx, r.opts.OpTimeout)
	st, err := r.d.Dump(dctx)
	cancel()
	if err != nil {
		return fmt.Errorf("dump VPP: %w", err)
	}
	if st.VPPPID == 0 || st.VPPPID != r.vppPID {
		// Another (or an unknown) VPP process than the one the layer
		// learnt from: it may have restarted since.
		r.forgetUnobserved = true
		if r.synced && len(r.applied) > 0 && r.opts.BulkHold > 0 {
			// It had programmed the one before: the interfaces may come
			// back after this connection (plan_bulk_hold.go). At a first
			// start they are there, or not expected soon.
			r.bulkHoldUntil = start.Add(r.opts.BulkHold)
		}
	}
	r.vppPID = st.VPPPID
	r.storeMu.RLock()
	c := classify(st, viewOf(r.store), r.opts.Claims)
	r.storeMu.RUnlock()

	if !r.forgetUnobserved {
		// VPP was not restarted: keep what we know about objects it cannot list.
		for k, a := range r.applied {
			if st.Unobservable[k.Kind] && boundInterfacesExist(a.Item, st.Interfaces) {
				c.applied[k] = a
				if t, odd := r.tags[k]; odd {
					c.tags[k] = t
				}
			}
		}
	} else {
		r.stale = map[uint32][]vppcfg.Item{}
	}
	if !r.forgetUnobserved {
		r.recallUnobservable(c)
		// A merged kind VPP cannot dump keeps what it last sent.
		for kind, s := range r.merged {
			if st.Unobservable[kind] {
				c.merged[kind] = s
			}
		}
	}
	// An untagged object this layer applied for an owner is still that
	// owner's when a later dump finds it undesired (say its delete failed,
	// or a resync ran before it): VPP cannot say so, but the layer
	// remembers. It becomes the owner's orphan and goes like one, instead
	// of being left in VPP as somebody else's.
	for k, u := range c.unowned {
		owner := r.uncertain[k]
		if prev, ok := r.applied[k]; ok && prev.Owner.String() != "" {
			owner = prev.Owner.String()
		}
		if owner != "" {
			prevOwner, label := u.Owner.String(), core.ItemLabel(u.Item)
			u.Owner, u.Orphan = r.owners.of(owner), true
			c.tags.relabel(k, u, prevOwner, label)
			c.applied[k] = u
			delete(c.unowned, k)
		}
	}
	r.uncertain = nil // the dump has settled them
	drift := 0
	if r.synced {
		drift = countDrift(r.applied, c.applied)
	}
	r.applied, r.tags, r.unowned, r.foreign = c.applied, c.tags, c.unowned, c.foreign
	r.appliedBindings = map[vppcfg.Key]bool{}
	for k := range r.applied {
		if core.Merged(k.Kind) {
			r.appliedBindings[k] = true
		}
	}
	// Orphans are made only here, from a dump; remember whose they are.
	r.orphanOwners = map[string]bool{}
	for _, a := range r.applied {
		if a.Orphan {
			r.orphanOwners[a.Owner.String()] = true
		}
	}
	r.merged, r.ifaces = c.merged, st.Interfaces
	r.needResync, r.forgetUnobserved, r.resyncFailures, r.disconnected = false, false, 0, false
	r.lastPoll = time.Now()
	// Fresh facts: every failed key may be retried at once.
	for k := range r.retry.next {
		r.retry.reset(k)
	}
	r.log.WithFields(logrus.Fields{
		"objects": len(st.Objects), "ours": len(c.applied), "unowned": len(c.unowned),
		"foreign": len(c.foreign), "drift": drift, "took": time.Since(start),
	}).Info("resync: VPP dumped")
	first := !r.synced
	r.synced = true
	r.full = true
	r.pass(ctx)
	// Counted once applied, so that a caller seeing the count grow also
	// sees the statuses of this resync.
	r.smu.Lock()
	r.counters.Resyncs++
	r.counters.Drift += uint64(drift)
	r.counters.LastResync = time.Now()
	r.counters.Synced = true
	r.smu.Unlock()
	if first {
		close(r.syncedCh)
	}
	r.log.WithField("took", time.Since(start)).Info("resync applied")
	return nil
}

func countDrift(before, after map[vppcfg.Key]appliedEntry) int {
	n := 0
	for k, b := range before {
		if a, ok := after[k]; !ok || !core.EqualApplied(b.Item, a.Item) {
			n++
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			n++
		}
	}
	return n
}

// recallUnobservable gives the objects of a dump the fields VPP does not
// report (an LB mapping's affinity, a cnat translation's flags) that this
// layer last wrote to the same object, where it knows them: classify can
// only copy them from the desired value, which hides a change whose write
// failed (found by the property test: an affinity change whose delete
// failed looked applied after the next resync). Called with mu held.
func (r *Reconciler) recallUnobservable(c *classified) {
	for _, m := range []map[vppcfg.Key]appliedEntry{c.applied, c.unowned} {
		for k, a := range m {
			if prev, ok := r.applied[k]; ok && prev.known && prev.Handle == a.Handle {
				owner, label := a.Owner.String(), core.ItemLabel(a.Item)
				a.Item, a.known = core.WithUnobservable(a.Item, prev.Item), true
				m[k] = a
				c.tags.relabel(k, a, owner, label)
			}
		}
	}
}

// adoptDesired turns untagged objects and orphans that are now desired into
// regular applied items of their desiring owner, looking at the keys of sc
// (all keys when sc is nil). Called with both locks held.
func (r *Reconciler) adoptDesired(sc map[vppcfg.Key]bool) {
	visit := func(k vppcfg.Key) {
		d, owners, desired := r.store.Get(k)
		if !desired {
			return
		}
		if u, ok := r.unowned[k]; ok {
			if !u.known {
				u.Item = core.WithUnobservable(u.Item, d)
			}
			u.Owner = r.owners.of(owners[0])
			r.setApplied(k, u)
			delete(r.unowned, k)
			return
		}
		if a, ok := r.applied[k]; ok && a.Orphan {
			owner, label := a.Owner.String(), core.ItemLabel(a.Item)
			a.Orphan = false
			a.Owner = r.owners.of(owners[0])
			if !a.known {
				a.Item = core.WithUnobservable(a.Item, d)
			}
			if core.Describe(k.Kind).AdoptDesired {
				// VPP keeps none of it but its identity (a binding's
				// priority); the merged order is compared by the diff.
				a.Item = d
			}
			r.applied[k] = a
			r.tags.relabel(k, a, owner, label)
		}
	}
	if sc != nil {
		for k := range sc {
			visit(k)
		}
		return
	}
	for k := range r.unowned {
		visit(k)
	}
	for k, a := range r.applied {
		if a.Orphan {
			visit(k)
		}
	}
}
