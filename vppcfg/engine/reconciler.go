package engine

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/vppsvc/vppsvc/internal/logx"
	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
)

// Options configure a Reconciler. Zero values take the defaults noted.
type Options struct {
	// Logger receives the layer's logs; default logrus.StandardLogger().
	Logger logrus.FieldLogger
	// RetryMin and RetryMax bound the per-key exponential retry delay;
	// defaults 100ms and 30s. Tests use a few milliseconds.
	RetryMin, RetryMax time.Duration
	// ResyncInterval, when positive, runs a full resync (dump and compare)
	// periodically, which repairs changes made to VPP behind the layer's back.
	ResyncInterval time.Duration
	// InterfacePoll is how often interfaces are re-listed while some item
	// waits for one, in case an interface event was missed; default 5s.
	InterfacePoll time.Duration
	// OpTimeout is the deadline of one driver call (a dump, or one batch of
	// operations, however many chunks it is handed over in); default 2
	// minutes, enough for a cold sync of tens of thousands of objects.
	OpTimeout time.Duration
	// BulkHold is how long after a resync with a restarted VPP (another
	// process than the one the layer had programmed) the creates of the
	// kinds an item visits (vppcfg's Walks: NAT44 mappings, for an outside
	// interface's NAT44 feature) wait for that item's missing interface,
	// while VPP holds none of them (plan_bulk_hold.go); default 5s,
	// negative turns it off.
	BulkHold time.Duration
	// Claims lets an owner claim untagged VPP objects that nobody desires,
	// so that they are removed as stale once that owner has resynced (see
	// vppcfg's tag.go). Without a claim such objects are never touched.
	Claims map[string]vppcfg.UntaggedClaimFunc
}

func (o *Options) setDefaults() {
	if o.Logger == nil {
		o.Logger = logrus.StandardLogger()
	}
	if o.RetryMin <= 0 {
		o.RetryMin = 100 * time.Millisecond
	}
	if o.RetryMax < o.RetryMin {
		o.RetryMax = max(30*time.Second, o.RetryMin)
	}
	if o.InterfacePoll <= 0 {
		o.InterfacePoll = 5 * time.Second
	}
	if o.OpTimeout <= 0 {
		o.OpTimeout = 2 * time.Minute
	}
	if o.BulkHold == 0 {
		o.BulkHold = 5 * time.Second
	}
}

// Reconciler keeps VPP equal to the desired items of all its clients.
//
// Commits record desired state; once Start has completed its first full
// resync, every Commit also applies the difference before returning. Start
// then keeps VPP in line: it retries failed operations with per-key
// backoff, applies pending items when their interface appears, and resyncs
// fully after a reconnect (VPP may have restarted) and, optionally, on a timer.
//
// Three locks, taken in the order mu, storeMu, smu (each may also be taken
// alone): storeMu guards the desired state, mu what the layer believes VPP
// holds and what it has to do next, smu the statuses and counters.
type Reconciler struct {
	// Set by NewReconciler, read-only afterwards.
	d     driverapi.Driver
	opts  Options
	log   logrus.FieldLogger
	debug bool
	// chunk is how many ops a Streamer driver is handed at a time
	// (chunkOps; tests set fewer).
	chunk int
	// settleLate turns early settling off (status_early.go): tests
	// compare the statuses of both.
	settleLate bool

	// storeMu guards store, the desired state of every owner. It is held
	// only to read or change that state, never across a VPP call.
	storeMu sync.RWMutex
	store   *core.Store

	// mu serialises passes and resyncs, and with them every call to VPP.
	// It guards the three embedded structs that follow.
	mu sync.Mutex
	loopState
	appliedView
	keyFailures

	// statusBook has a lock of its own, so that statuses and stats can be
	// read while a pass holds mu.
	statusBook
}

// loopState is where the Start loop stands and what it has to do next.
// Guarded by Reconciler.mu, except the channels syncedCh and kick.
type loopState struct {
	started bool
	// synced is set by the first full resync, which closes syncedCh.
	synced   bool
	syncedCh chan struct{}
	// kick wakes the loop to re-arm its timer (poke).
	kick chan struct{}
	// needResync asks for a full dump; forgetUnobserved drops what the layer
	// believed about objects it cannot dump (after a reconnect).
	needResync bool
	// disconnected holds every pass from the connection's loss until the
	// resync of the next connection (handleEvent).
	disconnected     bool
	forgetUnobserved bool
	resyncAt         time.Time
	resyncFailures   int
	lastPoll         time.Time
	// bulkHoldUntil ends the bulk hold of the current connection, and
	// bulkHeld says the last full pass held creates for it (Options.BulkHold).
	bulkHoldUntil time.Time
	bulkHeld      bool
	// dirty are keys changed by commits since the last pass; full asks the
	// next pass to diff everything (after a resync, an interface event, a
	// ResyncTxn or a NAT44 global change).
	dirty map[vppcfg.Key]bool
	full  bool
	// early is the plan of the pass in progress when it settles statuses
	// as its ops are recorded (status_early.go), nil otherwise; planned is
	// the store's version it was planned from.
	early   *opPlan
	planned uint64
}

// appliedView is what the layer believes VPP holds: set by each resync
// from a dump, then kept up to date by op results and interface events.
// Guarded by Reconciler.mu.
type appliedView struct {
	// applied are the objects of owners: made, adopted or claimed by one
	// (orphans among them are desired by nobody). unowned are untagged
	// objects nobody claims; foreign are objects with another's tag, or
	// untagged ones of a kind we always tag. The layer never touches those.
	applied map[vppcfg.Key]appliedEntry
	unowned map[vppcfg.Key]appliedEntry
	foreign map[vppcfg.Key]vppcfg.Item
	// tags are the tags of applied items that differ from the one the
	// layer would write for them (see oddTags).
	tags oddTags
	// owners share one copy of each owner name among the applied entries.
	owners ownerRefs
	// merged are the merged kinds' own states of what is applied.
	merged mergedStates
	// ifaces maps the names of VPP's interfaces to their sw_if_index.
	ifaces map[string]uint32
	// stale remembers objects deleted interfaces left behind by index
	// (vppcfg's kindSpec.Rebind: cnat SNAT-policy entries), to clean when the
	// index is reused.
	stale map[uint32][]vppcfg.Item
	// orphanOwners are the owners of the orphans found by the last dump
	// (nil before the first); see diffInput.OrphanOwners.
	orphanOwners map[string]bool
	// uncertain are keys whose last create or update got no answer
	// (ErrDrift): VPP may hold the object although the layer recorded no
	// success. The resync that follows attributes an untagged object found
	// there to this owner, so that it is pruned if nobody desires it by then
	// rather than left in VPP as nobody's.
	uncertain map[vppcfg.Key]string
	// appliedBindings are the keys of merged kinds (ACL bindings) in applied.
	appliedBindings map[vppcfg.Key]bool
	// vppPID is the VPP process of the last dump (0: unknown).
	vppPID uint32
}

// keyFailures are the keys whose last operation failed: the error, for
// their status, and when each is retried. Guarded by Reconciler.mu.
type keyFailures struct {
	lastErr map[vppcfg.Key]error
	retry   *backoff
}

// NewReconciler returns a reconciler over driver d.
func NewReconciler(d driverapi.Driver, opts Options) *Reconciler {
	opts.setDefaults()
	return &Reconciler{
		d:     d,
		opts:  opts,
		log:   opts.Logger.WithField("component", "vppcfg"),
		debug: logx.DebugEnabled(opts.Logger),
		chunk: chunkOps,
		store: core.NewStore(),
		loopState: loopState{
			syncedCh: make(chan struct{}),
			kick:     make(chan struct{}, 1),
			dirty:    map[vppcfg.Key]bool{},
			full:     true,
		},
		appliedView: appliedView{
			applied:         map[vppcfg.Key]appliedEntry{},
			tags:            oddTags{},
			owners:          ownerRefs{},
			appliedBindings: map[vppcfg.Key]bool{},
			unowned:         map[vppcfg.Key]appliedEntry{},
			foreign:         map[vppcfg.Key]vppcfg.Item{},
			merged:          newMergedStates(),
			ifaces:          map[string]uint32{},
			stale:           map[uint32][]vppcfg.Item{},
		},
		keyFailures: keyFailures{
			lastErr: map[vppcfg.Key]error{},
			retry:   newBackoff(opts.RetryMin, opts.RetryMax),
		},
		statusBook: newStatusBook(),
	}
}

// Client returns the handle of one owner (a renderer). Owner names are part
// of VPP tags: at most MaxOwnerLen bytes, no ':' or spaces; an invalid name
// makes every Commit fail.
func (r *Reconciler) Client(owner string) vppcfg.Client { return &client{r: r, owner: owner} }

// Synced is closed once the first full resync has been applied.
func (r *Reconciler) Synced() <-chan struct{} { return r.syncedCh }

// Desired returns every desired item, in key order.
func (r *Reconciler) Desired() []vppcfg.Item {
	r.storeMu.RLock()
	defer r.storeMu.RUnlock()
	return r.store.Desired()
}

// commit records one owner's transaction and, once synced, applies it.
func (r *Reconciler) commit(ctx context.Context, owner string, ops []core.TxnOp, resync bool) error {
	r.storeMu.Lock()
	err := r.store.Commit(owner, ops, resync)
	r.storeMu.Unlock()
	log := func() logrus.FieldLogger {
		return r.log.WithFields(logrus.Fields{"owner": owner, "resync": resync, "ops": len(ops)})
	}
	if err != nil {
		log().WithError(err).Warn("transaction rejected")
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.full = r.full || resync
	for _, op := range ops {
		k := op.KeyOf()
		r.retry.reset(k)
		if !r.full { // a full pass diffs every key: no need to list them
			r.dirty[k] = true
			r.full = core.Describe(k.Kind).IsGate()
		}
	}
	if !r.synced {
		log().Debug("transaction recorded; applied by the first resync")
		r.refreshStatuses(nil, nil)
		return nil
	}
	r.pass(ctx)
	if len(r.retry.next) > 0 || r.needResync || r.waitingForInterface() {
		// The loop's timer may be set too late for what this pass armed.
		// Otherwise nothing is scheduled, and waking the loop on every
		// commit cost an endpoint change a tenth of its CPU.
		r.poke()
	}
	return nil
}

// Start runs the reconciler until ctx is done: a first full resync (retried
// until VPP answers), then events, retries and periodic resyncs. It returns
// nil when ctx ends, or an error if VPP is incompatible with the driver.
func (r *Reconciler) Start(ctx context.Context) error {
	r.mu.Lock()
	if r.started {
		r.mu.Unlock()
		return errors.New("vppcfg: reconciler already started")
	}
	r.started = true
	r.requestResync(false)
	r.mu.Unlock()

	var periodic <-chan time.Time
	if r.opts.ResyncInterval > 0 {
		t := time.NewTicker(r.opts.ResyncInterval)
		defer t.Stop()
		periodic = t.C
	}
	events := r.d.Events()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			r.handleEvent(ctx, ev)
		case <-periodic:
			r.mu.Lock()
			r.requestResync(false)
			r.mu.Unlock()
		case <-r.kick:
		case <-timer.C:
		}
		if err := r.wake(ctx); err != nil {
			return err
		}
		timer.Reset(r.untilNextWake())
	}
}

// poke wakes the Start loop to re-arm its timer after a pass outside it.
func (r *Reconciler) poke() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

func (r *Reconciler) requestResync(forget bool) {
	if !r.needResync {
		r.resyncAt = time.Now()
	}
	r.needResync = true
	r.forgetUnobserved = r.forgetUnobserved || forget
}

// wake does whatever is due: a resync, retries, or an interface poll.
func (r *Reconciler) wake(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	if r.needResync && !now.Before(r.resyncAt) {
		if err := r.resync(ctx); err != nil {
			if errors.Is(err, driverapi.ErrIncompatible) {
				return err
			}
			r.resyncFailures++
			r.resyncAt = now.Add(r.retry.delay(r.resyncFailures))
			log := r.log.WithError(err).WithField("retry_in", r.resyncAt.Sub(now))
			switch {
			case errors.Is(err, driverapi.ErrNotConnected):
				log.Debug("resync waits for the VPP connection")
			case worthWarning(r.resyncFailures):
				log.Warn("resync failed")
			default:
				log.Debug("resync failed again")
			}
		}
		return nil
	}
	if !r.synced {
		return nil
	}
	if r.waitingForInterface() && now.Sub(r.lastPoll) >= r.opts.InterfacePoll {
		r.pollInterfaces(ctx)
	}
	if t, ok := r.retry.nextDue(); ok && !now.Before(t) {
		r.pass(ctx)
	} else if r.bulkHeld && !now.Before(r.bulkHoldUntil) {
		// The bulk hold is over: what it held goes now. Cleared first: a
		// pass that returns at once (disconnected) would otherwise leave
		// the loop's timer at the past hold's end, and the loop spinning.
		r.bulkHeld = false
		r.pass(ctx)
	}
	return nil
}

func (r *Reconciler) untilNextWake() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	next := time.Now().Add(time.Hour)
	if r.needResync && r.resyncAt.Before(next) {
		next = r.resyncAt
	}
	if r.synced {
		if t, ok := r.retry.nextDue(); ok && t.Before(next) {
			next = t
		}
		if r.bulkHeld && r.bulkHoldUntil.Before(next) {
			next = r.bulkHoldUntil
		}
		if r.waitingForInterface() {
			if t := r.lastPoll.Add(r.opts.InterfacePoll); t.Before(next) {
				next = t
			}
		}
	}
	return max(time.Until(next), 0)
}

func (r *Reconciler) waitingForInterface() bool {
	r.smu.RLock()
	defer r.smu.RUnlock()
	return r.waitingIf > 0
}
