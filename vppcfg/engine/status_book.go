package engine

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vppsvc/vppsvc/vppcfg"
)

// statusBook is what Status, Statuses and Stats read.
//
// Most items are applied most of the time, and an applied item's status
// says nothing but its owners and since when: a full ItemStatus for each
// (about 200 bytes with its map slot) was the largest share of the VPP
// layer's heap. So the book keeps a full status only for items that are
// not applied, and a small record for applied ones, from which Status and
// Statuses rebuild the same ItemStatus.
type statusBook struct {
	// smu guards statuses, appliedStatuses, counters and waitingIf; passing is atomic.
	smu sync.RWMutex
	// statuses are the items whose status is not implied (see impliedStatus).
	statuses map[vppcfg.Key]*ItemStatus
	// appliedStatuses are the items whose status is implied: applied, no
	// failure. The records are shared (see share) and never changed.
	appliedStatuses map[vppcfg.Key]*impliedStatus
	// recent are the last records handed out by share.
	recent     [4]*impliedStatus
	recentNext int
	counters   Stats
	waitingIf  int // pending statuses waiting for an interface
	// stamp marks the records a pass settling early makes (status_early.go);
	// stamped counts the keys whose record carries it.
	stamp   uint64
	stamped int
	// passing counts passes in progress: statuses describe the state from
	// before a pass, but for the keys it has settled early, until it ends
	// (Stats.Applying).
	passing atomic.Int32
}

func newStatusBook() statusBook {
	return statusBook{statuses: map[vppcfg.Key]*ItemStatus{}, appliedStatuses: map[vppcfg.Key]*impliedStatus{}}
}

// impliedStatus is what an applied item's status holds beyond its key and
// state. since is in Unix nanoseconds: a time.Time would take three times
// the bytes, and the monotonic reading it drops is only read to order
// statuses, not shown.
type impliedStatus struct {
	owners []string
	since  int64
	stamp  uint64 // the book's stamp when the record was made
}

// implied returns the compact form of s, if s is an applied status that
// says nothing else.
func implied(s *ItemStatus) (impliedStatus, bool) {
	if s.State != StateApplied || s.Deleting || s.Reason != "" || s.Err != nil || s.Failures != 0 ||
		!s.NextRetry.IsZero() || s.Since.IsZero() {
		return impliedStatus{}, false
	}
	return impliedStatus{owners: s.Owners, since: s.Since.UnixNano()}, true
}

// status rebuilds the ItemStatus of an applied key.
func (i impliedStatus) status(k vppcfg.Key) ItemStatus {
	return ItemStatus{Key: k, Owners: i.owners, State: StateApplied, Since: time.Unix(0, i.since)}
}

// share returns a record equal to i, one of the last few handed out when
// one is: the items one pass applies become applied at one instant for
// the same owners, so most keys point at a few records instead of holding
// 32 bytes each in their map slot. A record is never changed once handed
// out (put replaces a key's pointer), so sharing it cannot leak one key's
// change into another's status. Called with smu held for writing.
func (b *statusBook) share(i impliedStatus) *impliedStatus {
	for _, r := range b.recent {
		if r != nil && r.since == i.since && r.stamp == i.stamp && slices.Equal(r.owners, i.owners) {
			return r
		}
	}
	r := new(impliedStatus) // not &i: that would move i to the heap on every call
	*r = i
	b.recent[b.recentNext] = r
	b.recentNext = (b.recentNext + 1) % len(b.recent)
	return r
}

// lookup returns the status of k. Called with smu held.
func (b *statusBook) lookup(k vppcfg.Key) (ItemStatus, bool) {
	p := b.find(k)
	return p.status, p.had
}

// prior is the status a key has before put or replace changes it.
type prior struct {
	status ItemStatus
	// had: k has a status; implied: it is held in appliedStatuses;
	// stamped: by a record carrying the book's stamp.
	had, implied, stamped bool
}

// find returns the status of k and where the book holds it. Called with
// smu held.
func (b *statusBook) find(k vppcfg.Key) prior {
	if s, ok := b.statuses[k]; ok {
		return prior{status: *s, had: true}
	}
	if i, ok := b.appliedStatuses[k]; ok {
		return prior{status: i.status(k), had: true, implied: true, stamped: i.stamp == b.stamp}
	}
	return prior{}
}

// keys returns every key with a status, in key order. Called with smu held.
func (b *statusBook) keys() []vppcfg.Key {
	ks := make([]vppcfg.Key, 0, len(b.statuses)+len(b.appliedStatuses))
	for k := range b.statuses {
		ks = append(ks, k)
	}
	for k := range b.appliedStatuses {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, vppcfg.Key.Compare)
	return ks
}

// forEachKey calls f for every key with a status; f may remove the key.
// Called with smu held.
func (b *statusBook) forEachKey(f func(vppcfg.Key)) {
	for k := range b.statuses {
		f(k)
	}
	for k := range b.appliedStatuses {
		f(k)
	}
}

// put replaces (or, with nil, removes) the status of k and keeps the
// counters in step. Called with smu held for writing.
func (b *statusBook) put(k vppcfg.Key, s *ItemStatus) {
	prev := b.find(k)
	if s != nil {
		b.replace(k, prev, *s)
		return
	}
	if prev.had {
		b.count(&prev.status, -1)
		delete(b.statuses, k)
		delete(b.appliedStatuses, k)
		if prev.stamped {
			b.stamped--
		}
	}
}

// replace sets the status of k to next, where prev is what find returned
// for k: refreshStatus has looked it up already (a cold sync's 100,000
// keys were looked up twice more), and next goes to the heap only when it
// is not folded into a shared record. Called with smu held for writing.
func (b *statusBook) replace(k vppcfg.Key, prev prior, next ItemStatus) {
	i, isImplied := implied(&next)
	if prev.stamped {
		b.stamped--
	}
	if prev.had {
		b.count(&prev.status, -1)
		// The map that gets the new status is written below; only the
		// other one may hold the key.
		switch {
		case prev.implied && !isImplied:
			delete(b.appliedStatuses, k)
		case !prev.implied && isImplied:
			delete(b.statuses, k)
		}
	}
	b.count(&next, 1)
	if isImplied {
		i.stamp = b.stamp
		b.stamped++
		b.appliedStatuses[k] = b.share(i)
		return
	}
	s := new(ItemStatus)
	*s = next
	b.statuses[k] = s
}

func (b *statusBook) count(st *ItemStatus, d int) {
	switch st.State {
	case StateApplied:
		b.counters.Applied += d
	case StatePending:
		b.counters.Pending += d
		if strings.HasPrefix(st.Reason, reasonInterfacePrefix) {
			b.waitingIf += d
		}
	case StateFailed:
		b.counters.Failed += d
	}
}
