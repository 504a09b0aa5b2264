package vppcfg

import (
	"context"
	"errors"
	"fmt"
	"github.com/vppsvc/vppsvc/internal/logx"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"
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
	// operations); default 2 minutes, enough for a cold sync of tens of
	// thousands of objects.
	OpTimeout time.Duration
	// Claims lets an owner claim untagged VPP objects that nobody desires,
	// so that they are removed as stale once that owner has resynced (see
	// ownership.go). Without a claim such objects are never touched.
	Claims map[string]ClaimFunc
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
}

// ErrIncompatible marks a VPP whose API does not match the driver's
// bindings; Start gives up on it instead of retrying.
var ErrIncompatible = errors.New("VPP API is incompatible")

// Reconciler keeps VPP equal to the desired items of all its clients.
//
// Commits record desired state; once Start has completed its first full
// resync, every Commit also applies the difference before returning. Start
// then keeps VPP in line: it retries failed operations with per-key
// backoff, applies pending items when their interface appears, and resyncs
// fully after a reconnect (VPP may have restarted) and, optionally, on a timer.
type Reconciler struct {
	d     Driver
	opts  Options
	log   logrus.FieldLogger
	debug bool

	storeMu sync.RWMutex
	store   *store

	// mu guards the applied view and serialises passes (and thus VPP calls).
	mu         sync.Mutex
	started    bool
	synced     bool
	syncedCh   chan struct{}
	applied    map[Key]*AppliedItem
	unowned    map[Key]*AppliedItem
	foreign    map[Key]Item
	aclFront   map[string]InterfaceACLIndexes
	aclOrder   map[string]ACLNames
	ifaces     map[string]uint32
	unobserved map[Kind]bool
	// staleSnat remembers cnat SNAT-policy entries left behind by deleted
	// interfaces (VPP keeps them by index), to clean when the index is reused.
	staleSnat map[uint32][]CNATSnatTable
	// orphanOwners are the owners of the orphans found by the last dump
	// (nil before the first); see DiffInput.OrphanOwners.
	orphanOwners map[string]bool
	// uncertain are keys whose last create or update got no answer
	// (ErrDrift): VPP may hold the object although the layer recorded no
	// success. The resync that follows attributes an untagged object found
	// there to this owner, so that it is pruned if nobody desires it by then
	// rather than left in VPP as nobody's.
	uncertain map[Key]string
	// appliedBindings are the ACL binding keys of applied.
	appliedBindings map[Key]bool
	// vppPID is the VPP process of the last dump (0: unknown).
	vppPID  uint32
	lastErr map[Key]error
	retry   *backoff
	// needResync asks for a full dump; forgetUnobserved drops what the layer
	// believed about objects it cannot dump (after a reconnect).
	needResync       bool
	forgetUnobserved bool
	resyncAt         time.Time
	resyncFailures   int
	lastPoll         time.Time
	// dirty are keys changed by commits since the last pass; full asks the
	// next pass to diff everything (after a resync, an interface event, a
	// ResyncTxn or a NAT44 global change).
	dirty map[Key]bool
	full  bool
	kick  chan struct{}

	smu       sync.RWMutex
	statuses  map[Key]*ItemStatus
	counters  Stats
	waitingIf int // pending statuses waiting for an interface
	// passing counts passes in progress: statuses describe the state from
	// before a pass until it ends (Stats.Applying).
	passing atomic.Int32
}

// NewReconciler returns a reconciler over driver d.
func NewReconciler(d Driver, opts Options) *Reconciler {
	opts.setDefaults()
	return &Reconciler{
		d:               d,
		opts:            opts,
		log:             opts.Logger.WithField("component", "vppcfg"),
		debug:           logx.DebugEnabled(opts.Logger),
		store:           newStore(),
		syncedCh:        make(chan struct{}),
		applied:         map[Key]*AppliedItem{},
		appliedBindings: map[Key]bool{},
		unowned:         map[Key]*AppliedItem{},
		foreign:         map[Key]Item{},
		aclFront:        map[string]InterfaceACLIndexes{},
		aclOrder:        map[string]ACLNames{},
		ifaces:          map[string]uint32{},
		unobserved:      map[Kind]bool{},
		staleSnat:       map[uint32][]CNATSnatTable{},
		lastErr:         map[Key]error{},
		retry:           newBackoff(opts.RetryMin, opts.RetryMax),
		kick:            make(chan struct{}, 1),
		dirty:           map[Key]bool{},
		full:            true,
		statuses:        map[Key]*ItemStatus{},
	}
}

// Client returns the handle of one owner (a renderer). Owner names are part
// of VPP tags: at most MaxOwnerLen bytes, no ':' or spaces; an invalid name
// makes every Commit fail.
func (r *Reconciler) Client(owner string) Client { return &client{r: r, owner: owner} }

// Synced is closed once the first full resync has been applied.
func (r *Reconciler) Synced() <-chan struct{} { return r.syncedCh }

// Desired returns every desired item, in key order.
func (r *Reconciler) Desired() []Item {
	r.storeMu.RLock()
	defer r.storeMu.RUnlock()
	return r.store.desired()
}

// commit records one owner's transaction and, once synced, applies it.
func (r *Reconciler) commit(ctx context.Context, owner string, ops []txnOp, resync bool) error {
	r.storeMu.Lock()
	err := r.store.commit(owner, ops, resync)
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
		k := op.keyOf()
		r.retry.reset(k)
		r.dirty[k] = true
		r.full = r.full || k.Kind == KindNAT44Global
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

// Resync dumps VPP and applies the difference now. Start does this by
// itself; the method is for callers that know VPP was changed behind the
// layer's back.
func (r *Reconciler) Resync(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.resync(ctx)
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
			if errors.Is(err, ErrIncompatible) {
				return err
			}
			r.resyncFailures++
			r.resyncAt = now.Add(r.retry.delay(r.resyncFailures))
			log := r.log.WithError(err).WithField("retry_in", r.resyncAt.Sub(now))
			switch {
			case errors.Is(err, ErrNotConnected):
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
	}
	r.vppPID = st.VPPPID
	r.storeMu.RLock()
	c := classify(st, r.store.view(), r.opts.Claims)
	r.storeMu.RUnlock()

	if !r.forgetUnobserved {
		// VPP was not restarted: keep what we know about objects it cannot list.
		for k, a := range r.applied {
			if st.Unobservable[k.Kind] && boundInterfacesExist(a.Item, st.Interfaces) {
				c.applied[k] = a
			}
		}
	} else {
		r.staleSnat = map[uint32][]CNATSnatTable{}
	}
	if !r.forgetUnobserved {
		r.recallUnobservable(c)
	}
	// An untagged object this layer applied for an owner is still that
	// owner's when a later dump finds it undesired (say its delete failed,
	// or a resync ran before it): VPP cannot say so, but the layer
	// remembers. It becomes the owner's orphan and goes like one, instead
	// of being left in VPP as somebody else's.
	for k, u := range c.unowned {
		owner := r.uncertain[k]
		if prev, ok := r.applied[k]; ok && prev.Owner != "" {
			owner = prev.Owner
		}
		if owner != "" {
			u.Owner, u.Orphan = owner, true
			c.applied[k] = u
			delete(c.unowned, k)
		}
	}
	r.uncertain = nil // the dump has settled them
	drift := 0
	if r.synced {
		drift = countDrift(r.applied, c.applied)
	}
	r.applied, r.unowned, r.foreign = c.applied, c.unowned, c.foreign
	r.appliedBindings = map[Key]bool{}
	for k := range r.applied {
		if k.Kind == KindACLBinding {
			r.appliedBindings[k] = true
		}
	}
	// Orphans are made only here, from a dump; remember whose they are.
	r.orphanOwners = map[string]bool{}
	for _, a := range r.applied {
		if a.Orphan {
			r.orphanOwners[a.Owner] = true
		}
	}
	r.aclFront, r.aclOrder, r.ifaces, r.unobserved = c.aclFront, c.aclOrder, st.Interfaces, st.Unobservable
	r.needResync, r.forgetUnobserved, r.resyncFailures = false, false, 0
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

func countDrift(before, after map[Key]*AppliedItem) int {
	n := 0
	for k, b := range before {
		if a, ok := after[k]; !ok || !equalApplied(b.Item, a.Item) {
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

// pass plans from the in-memory view and applies the operations that are
// not waiting for a retry. Unless a full pass is due, it diffs only the keys
// changed by commits and the keys whose retry is due. Called with mu held.
func (r *Reconciler) pass(ctx context.Context) {
	r.passing.Add(1)
	defer r.passing.Add(-1)
	now := time.Now()
	var sc map[Key]bool
	if !r.full {
		sc = r.dirty
	}
	// Due retries are consumed by this pass; a new failure re-arms them. A
	// key that no longer needs an op (pending again, or gone) thus stops
	// waking the loop.
	for k, t := range r.retry.next {
		if !now.Before(t) {
			r.retry.reset(k)
			if sc != nil {
				sc[k] = true
			}
		}
	}
	r.dirty, r.full = map[Key]bool{}, false
	r.storeMu.RLock()
	r.adoptDesired(sc)
	plan := Diff(DiffInput{
		Desired:      r.store.items,
		Applied:      r.applied,
		Interfaces:   r.ifaces,
		Foreign:      r.foreign,
		Resynced:     r.store.resynced,
		ACLOrder:     r.aclOrder,
		Scope:        sc,
		OrphanOwners: r.orphanOwners,

		DesiredBindings: r.store.bindings,
		AppliedBindings: r.appliedBindings,
	})
	ops := make([]Op, 0, len(plan.Ops))
	for _, op := range plan.Ops {
		if !r.opReady(op, now) {
			continue
		}
		if owners := r.store.owners[op.Key]; len(owners) > 0 {
			op.Owner = owners[0]
		}
		if op.Type == OpCreate && taggable(op.Key.Kind) {
			op.Tag = Tag(op.Owner, itemLabel(op.Item))
		}
		ops = append(ops, op)
	}
	r.storeMu.RUnlock()
	if len(ops) > 0 {
		r.execute(ctx, ops)
	}
	if sc != nil {
		// Statuses that may have moved: the scope, what the plan looked at
		// (all bindings, when ACLs were in scope) and what was executed.
		for k := range plan.Pending {
			sc[k] = true
		}
		for k := range plan.Blocked {
			sc[k] = true
		}
		for _, op := range plan.Ops {
			for _, k := range opKeys(op) {
				sc[k] = true
			}
		}
	}
	r.refreshStatuses(&plan, sc)
}

// opReady reports whether any key of op is out of backoff.
func (r *Reconciler) opReady(op Op, now time.Time) bool {
	for _, k := range opKeys(op) {
		if r.retry.ready(k, now) {
			return true
		}
	}
	return false
}

func opKeys(op Op) []Key {
	if op.Type == OpSetACLs {
		return op.ACLs.Bindings
	}
	return []Key{op.Key}
}

// recallUnobservable gives the objects of a dump the fields VPP does not
// report (an LB mapping's affinity, a cnat translation's flags) that this
// layer last wrote to the same object, where it knows them: classify can
// only copy them from the desired value, which hides a change whose write
// failed (found by the property test: an affinity change whose delete
// failed looked applied after the next resync). Called with mu held.
func (r *Reconciler) recallUnobservable(c *classified) {
	for _, m := range []map[Key]*AppliedItem{c.applied, c.unowned} {
		for k, a := range m {
			if prev, ok := r.applied[k]; ok && prev.known && prev.Handle == a.Handle {
				a.Item, a.known = withUnobservable(a.Item, prev.Item), true
			}
		}
	}
}

// adoptDesired turns untagged objects and orphans that are now desired into
// regular applied items of their desiring owner, looking at the keys of sc
// (all keys when sc is nil). Called with both locks held.
func (r *Reconciler) adoptDesired(sc map[Key]bool) {
	visit := func(k Key) {
		d, owners, desired := r.store.get(k)
		if !desired {
			return
		}
		if u, ok := r.unowned[k]; ok {
			if !u.known {
				u.Item = withUnobservable(u.Item, d)
			}
			u.Owner = owners[0]
			r.setApplied(k, u)
			delete(r.unowned, k)
			return
		}
		if a, ok := r.applied[k]; ok && a.Orphan {
			a.Orphan = false
			a.Owner = owners[0]
			if !a.known {
				a.Item = withUnobservable(a.Item, d)
			}
			if k.Kind == KindACLBinding {
				// VPP keeps no priority; the list order is compared by the diff.
				a.Item = d
			}
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

// execute sends ops in batches. A batch ends before interface ACL
// assignments that follow other ops, because those need the indexes VPP
// returns for the ACLs created just before.
//
// A batch also ends after the delete of a recreate (a delete followed by a
// create of the same key), and the create is dropped when that delete
// failed: the create could otherwise succeed as an update in place (cnat
// keeps the LB type of the first create), and the layer would record a
// value VPP does not hold. The key then fails as a whole and is retried.
func (r *Reconciler) execute(ctx context.Context, ops []Op) {
	created, recreated := map[Key]bool{}, map[Key]bool{}
	for _, op := range ops {
		if op.Type == OpCreate {
			created[op.Key] = true
		}
	}
	for _, op := range ops {
		if op.Type == OpDelete && created[op.Key] {
			recreated[op.Key] = true
		}
	}
	for len(ops) > 0 {
		n := 1
		for n < len(ops) && !(ops[n].Type == OpSetACLs && ops[n-1].Type != OpSetACLs) &&
			!(ops[n-1].Type == OpDelete && recreated[ops[n-1].Key]) {
			n++
		}
		batch := ops[:n]
		ops = ops[n:]
		send := r.prepare(batch)
		if len(send) == 0 {
			continue
		}
		bctx, cancel := context.WithTimeout(ctx, r.opts.OpTimeout)
		results := r.d.Apply(bctx, send)
		cancel()
		r.record(send, results)
		for i, op := range send {
			if op.Type == OpDelete && recreated[op.Key] && i < len(results) && results[i].Err != nil {
				ops = slices.DeleteFunc(ops, func(o Op) bool { return o.Type == OpCreate && o.Key == op.Key })
			}
		}
	}
}

// prepare fills in what only the current applied view knows: interface
// indexes, VPP handles and ACL indexes. Ops that cannot be completed fail here.
func (r *Reconciler) prepare(batch []Op) []Op {
	send := make([]Op, 0, len(batch))
	now := time.Now()
	for _, op := range batch {
		if b, ok := op.Item.(InterfaceBound); ok {
			op.SwIfIndex = r.ifaces[b.Interfaces()[0]]
		}
		if a, ok := r.applied[op.Key]; ok && op.Type != OpCreate {
			op.Handle = a.Handle
			op.Tag = a.Tag
		}
		if op.Type == OpSetACLs {
			op.ACLs = r.resolveACLs(op.ACLs, now)
			op.SwIfIndex = r.ifaces[op.ACLs.Interface]
		}
		send = append(send, op)
	}
	return send
}

// resolveACLs maps ACL names to VPP indexes, foreign ACLs first. A name
// whose ACL is not in VPP (its create failed) is left out, and its binding
// fails, so that the other bindings of the interface still apply.
func (r *Reconciler) resolveACLs(a *ACLAssignment, now time.Time) *ACLAssignment {
	c := *a
	front := r.aclFront[a.Interface]
	c.InputIndexes = slices.Clone(front.Input)
	c.OutputIndexes = slices.Clone(front.Output)
	c.Input, c.Output = nil, nil
	resolve := func(dir ACLDirection, names []string, idx *[]uint32, out *[]string) {
		for _, n := range names {
			acl, ok := r.applied[ACLKey(n)]
			if !ok {
				k := ACLBindingKey(a.Interface, dir, n)
				r.failKey(k, fmt.Errorf("acl %q is not in VPP", n), now)
				continue
			}
			*idx = append(*idx, acl.Handle)
			*out = append(*out, n)
		}
	}
	resolve(ACLInput, a.Input, &c.InputIndexes, &c.Input)
	resolve(ACLOutput, a.Output, &c.OutputIndexes, &c.Output)
	return &c
}

// record folds the results of one batch into the applied view.
// errNoResult fails the ops a driver returned no result for.
var errNoResult = errors.New("driver returned no result")

func (r *Reconciler) record(ops []Op, results []OpResult) {
	now := time.Now()
	failed := map[Key]error{}
	succeeded := make(map[Key]bool, len(ops))
	for i, op := range ops {
		res := OpResult{Err: errNoResult}
		if i < len(results) {
			res = results[i]
		}
		if res.Err != nil {
			failures := r.retry.failures(op.Key) + 1
			log := r.opLog(op).WithError(res.Err).WithField("failures", failures)
			if worthWarning(failures) {
				log.Warn("VPP operation failed")
			} else {
				log.Debug("VPP operation failed again")
			}
			for _, k := range opKeys(op) {
				failed[k] = res.Err
			}
			if errors.Is(res.Err, ErrDrift) {
				if op.Type == OpCreate || op.Type == OpUpdate {
					if r.uncertain == nil {
						r.uncertain = map[Key]string{}
					}
					r.uncertain[op.Key] = op.Owner
				}
				r.requestResync(false)
			}
			continue
		}
		if r.debug {
			r.opLog(op).Debug("VPP operation done")
		}
		r.applyResult(op, res)
		for _, k := range opKeys(op) {
			succeeded[k] = true
		}
	}
	for k, err := range failed {
		r.failKey(k, err, now)
	}
	for k := range succeeded {
		if _, bad := failed[k]; !bad {
			r.retry.succeeded(k)
			delete(r.lastErr, k)
		}
	}
}

// worthWarning keeps a failure that repeats from flooding the log: the 1st,
// 2nd, 4th, 8th… consecutive failure is a warning, the others are debug. The
// retry delay doubles too, so with the default backoff a stuck item warns
// about once per maximum delay.
func worthWarning(failures int) bool { return failures&(failures-1) == 0 }

// opLog is the logger of one op, with the fields every op log carries.
func (r *Reconciler) opLog(op Op) logrus.FieldLogger {
	owner := op.Owner
	if owner == "" {
		owner = r.ownerOf(op.Key)
	}
	return r.log.WithFields(logrus.Fields{"owner": owner, "key": op.Key.String(), "op": op.String()})
}

func (r *Reconciler) failKey(k Key, err error, now time.Time) {
	r.lastErr[k] = err
	r.retry.failed(k, now)
}

func (r *Reconciler) ownerOf(k Key) string {
	if a, ok := r.applied[k]; ok && a.Owner != "" {
		return a.Owner
	}
	r.storeMu.RLock()
	defer r.storeMu.RUnlock()
	return r.store.ownerNames(k)
}

// setApplied and deleteApplied change the applied view and keep its
// index of ACL bindings (DiffInput.AppliedBindings) in step.
func (r *Reconciler) setApplied(k Key, a *AppliedItem) {
	r.applied[k] = a
	if k.Kind == KindACLBinding {
		r.appliedBindings[k] = true
	}
}

func (r *Reconciler) deleteApplied(k Key) {
	delete(r.applied, k)
	delete(r.appliedBindings, k)
}

// applyResult updates the applied view after a successful op.
func (r *Reconciler) applyResult(op Op, res OpResult) {
	k := op.Key
	switch op.Type {
	case OpCreate:
		r.setApplied(k, &AppliedItem{Item: op.Item, Owner: op.Owner, Handle: res.Handle, Tag: op.Tag, known: true})
	case OpUpdate:
		a := r.applied[k]
		a.Item, a.known = op.Item, true
		if k.Kind == KindCNATTranslation {
			a.Handle = res.Handle
		}
	case OpDelete:
		r.deleteApplied(k)
		if k == NAT44GlobalKey() {
			// Disabling the plugin removed every NAT44 object in VPP.
			for ak := range r.applied {
				if isNAT44(ak.Kind) {
					r.deleteApplied(ak)
				}
			}
		}
	case OpAddLocal, OpDelLocal:
		a := r.applied[k]
		cur := *a.Item.(*NAT44LBMapping)
		cur.Locals = slices.DeleteFunc(slices.Clone(cur.Locals), func(l NAT44LBLocal) bool { return idOf(l) == idOf(op.Local) })
		if op.Type == OpAddLocal {
			cur.Locals = append(cur.Locals, op.Local)
			SortLBLocals(cur.Locals)
		}
		a.Item = &cur
	case OpSetACLs:
		r.applyACLAssignment(op.ACLs)
	}
}

// applyACLAssignment rebuilds the applied bindings of one interface.
func (r *Reconciler) applyACLAssignment(a *ACLAssignment) {
	prev := map[Key]*AppliedItem{}
	for k, ai := range r.applied {
		if b, ok := ai.Item.(*ACLBinding); ok && b.Interface == a.Interface {
			prev[k] = ai
			r.deleteApplied(k)
		}
	}
	r.storeMu.RLock()
	defer r.storeMu.RUnlock()
	for _, dir := range []ACLDirection{ACLInput, ACLOutput} {
		names := a.Input
		if dir == ACLOutput {
			names = a.Output
		}
		for _, n := range names {
			k := ACLBindingKey(a.Interface, dir, n)
			if d, owners, ok := r.store.get(k); ok {
				r.setApplied(k, &AppliedItem{Item: d, Owner: owners[0]})
			} else if p, ok := prev[k]; ok {
				r.setApplied(k, p)
			}
		}
	}
	if len(a.Input)+len(a.Output) == 0 {
		delete(r.aclOrder, a.Interface)
	} else {
		r.aclOrder[a.Interface] = ACLNames{Input: slices.Clone(a.Input), Output: slices.Clone(a.Output)}
	}
}

// handleEvent reacts to interface and connection events.
func (r *Reconciler) handleEvent(ctx context.Context, ev Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	log := r.log.WithFields(logrus.Fields{"event": ev.Type.String(), "interface": ev.Interface, "sw_if_index": ev.SwIfIndex})
	switch ev.Type {
	case EventConnected:
		// What the layer knows beyond a dump was learnt from the VPP
		// process of its last dump. A connection to the same process (the
		// first event, arriving after the layer has used the connection,
		// or a reconnection after a missed health check) keeps it.
		restarted := ev.VPPPID == 0 || r.vppPID != ev.VPPPID
		if restarted {
			log.WithField("vpp_pid", ev.VPPPID).Info("connected to VPP: full resync (VPP may have restarted)")
		} else {
			log.WithField("vpp_pid", ev.VPPPID).Info("connected to the same VPP process: full resync")
		}
		r.requestResync(restarted)
		r.resyncAt = time.Now() // not after a backoff from failures while disconnected
		return
	case EventDisconnected:
		log.Warn("disconnected from VPP")
		return
	}
	if !r.synced {
		return // the first resync reads the interfaces anyway
	}
	switch ev.Type {
	case EventInterfaceAdded:
		if ev.Interface == "" {
			return
		}
		if idx, known := r.ifaces[ev.Interface]; known && idx == ev.SwIfIndex {
			return
		} else if known {
			r.interfaceGone(ev.Interface)
		}
		log.Info("interface appeared")
		r.ifaces[ev.Interface] = ev.SwIfIndex
		r.cleanStaleSnat(ctx, ev.Interface, ev.SwIfIndex)
	case EventInterfaceDeleted:
		name := ev.Interface
		if name == "" {
			for n, idx := range r.ifaces {
				if idx == ev.SwIfIndex {
					name = n
				}
			}
		}
		if _, known := r.ifaces[name]; !known {
			return
		}
		log.Info("interface deleted: its items are pending again")
		r.interfaceGone(name)
	}
	r.full = true
	r.pass(ctx)
}

// interfaceGone forgets what VPP removed together with an interface: its
// NAT44 roles, ACL bindings and features. cnat keeps SNAT-policy entries by
// index; they are remembered so they can be cleaned if the index is reused.
func (r *Reconciler) interfaceGone(name string) {
	idx := r.ifaces[name]
	delete(r.ifaces, name)
	for k, a := range r.applied {
		b, ok := a.Item.(InterfaceBound)
		if !ok || !slices.Contains(b.Interfaces(), name) {
			continue
		}
		if s, ok := a.Item.(*CNATSnatInterface); ok {
			r.staleSnat[idx] = append(r.staleSnat[idx], s.Table)
		}
		r.deleteApplied(k)
		r.retry.succeeded(k)
		delete(r.lastErr, k)
	}
	delete(r.aclOrder, name)
	delete(r.aclFront, name)
}

// cleanStaleSnat removes cnat SNAT-policy entries a deleted interface left
// at an index that now belongs to ifName, unless ifName wants them.
func (r *Reconciler) cleanStaleSnat(ctx context.Context, ifName string, idx uint32) {
	tables := r.staleSnat[idx]
	delete(r.staleSnat, idx)
	var ops []Op
	r.storeMu.RLock()
	for _, t := range tables {
		k := CNATSnatInterfaceKey(ifName, t)
		if _, wanted := r.store.items[k]; !wanted {
			ops = append(ops, Op{Type: OpDelete, Key: k, Item: &CNATSnatInterface{Interface: ifName, Table: t}, SwIfIndex: idx})
		}
	}
	r.storeMu.RUnlock()
	if len(ops) == 0 {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, r.opts.OpTimeout)
	defer cancel()
	for i, res := range r.d.Apply(cctx, ops) {
		if res.Err != nil {
			r.log.WithError(res.Err).WithField("op", ops[i].String()).Warn("cleaning stale cnat SNAT-policy entry failed")
		}
	}
}

// pollInterfaces re-lists interfaces in case an event was missed.
func (r *Reconciler) pollInterfaces(ctx context.Context) {
	r.lastPoll = time.Now()
	pctx, cancel := context.WithTimeout(ctx, r.opts.OpTimeout)
	ifaces, err := r.d.Interfaces(pctx)
	cancel()
	if err != nil {
		r.log.WithError(err).Warn("listing interfaces failed")
		return
	}
	changed := false
	for name := range r.ifaces {
		if _, ok := ifaces[name]; !ok {
			r.interfaceGone(name)
			changed = true
		}
	}
	for name, idx := range ifaces {
		if old, ok := r.ifaces[name]; !ok || old != idx {
			if ok {
				r.interfaceGone(name)
			}
			r.ifaces[name] = idx
			r.cleanStaleSnat(ctx, name, idx)
			changed = true
		}
	}
	if changed {
		r.log.Info("interfaces changed without an event")
		r.full = true
		r.pass(ctx)
	}
}
