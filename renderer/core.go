package renderer

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"sync"

	"github.com/sirupsen/logrus"

	"github.com/vppsvc/vppsvc/internal/logx"
	"github.com/vppsvc/vppsvc/internal/parallel"
	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// NodeContext is the node-wide input of a renderer's translation (node IPs,
// frontend and backend interfaces). Equal lets the core skip re-rendering
// the node-wide items for a call that does not change them. The frontend
// interfaces are where the core binds the filter ACLs.
type NodeContext[N any] interface {
	Equal(N) bool
	// FrontendInterfaces returns the interfaces through which clients reach
	// services.
	FrontendInterfaces() model.Interfaces
	// WithFrontendInterfaces returns a copy with other frontend interfaces.
	WithFrontendInterfaces(model.Interfaces) N
}

// CoreConfig is what a renderer gives its Core: the pure translation and a
// few renderer-specific policies. The translation functions must be pure
// and deterministic, and must not modify the services they are given.
type CoreConfig[N NodeContext[N]] struct {
	// Name is the renderer's name, for errors and logs.
	Name string
	// Client is the renderer's own handle on the VPP layer.
	Client vppcfg.Client
	// Log receives the core's logs; it should carry the renderer's name.
	Log logrus.FieldLogger
	// Shards is the renderer's set of filter ACLs.
	Shards ACLShards

	// NodeOf extracts the renderer's node context from a Resync event.
	NodeOf func(ev *model.ResyncEventData) N
	// RenderService translates one service for the node, appending its
	// items to items[:0], room the caller reuses from one service to the
	// next: the core keeps the items, never the list. Their order does
	// not matter: the core orders them by claim, and by key among items of
	// one claim, of which it keeps the first. It must be pure (read only
	// its arguments, change nothing but items' room): Resync calls it for
	// many services at once, on several goroutines, each with its own room.
	RenderService func(svc *model.ContivService, node N, items []vppcfg.Item) Rendering
	// RenderNode returns the renderer's own node-wide items; the core adds
	// the filter ACLs and their bindings.
	RenderNode func(node N) []vppcfg.Item

	// Claim is the identity under which items compete; nil: their key.
	Claim ClaimFunc
	// Warn logs what a renderer has to say about one service it rendered
	// (old is its previous value, nil for a new one), once per change; nil:
	// nothing.
	Warn func(log logrus.FieldLogger, old, svc *model.ContivService)
	// NodeConflict is logged when a node-wide item holds a claim that a
	// service wants; empty: a generic message.
	NodeConflict string
	// Demand is node-wide state that follows the set of services; nil:
	// none.
	Demand *NodeDemand[N]
}

// Change is one service to re-render (Service set) or to remove (nil).
type Change struct {
	ID      model.ServiceID
	Service *model.ContivService
}

// Core is the incremental engine shared by the renderers: it keeps the
// per-service index of rendered items (with conflicts between services
// resolved by smallest ID), composes the filter ACL shards, diffs every
// change against what it remembers, and commits one transaction per call.
//
// It implements AddService, UpdateService, DeleteService, Resync and
// UpdateLocalFrontendIfs of vppsvc.ServiceRendererAPI; a renderer embeds it
// and adds the other node-side methods with Reconfigure. Its state is
// exactly what a Resync rebuilds, so a Resync after any failure converges.
// If a commit fails, the state is rolled back, so the processor's Resync
// that follows (or a caller's retry with the same arguments) starts from
// what VPP was last told. Its methods are safe for
// concurrent use, though the processor never calls a renderer concurrently.
type Core[N NodeContext[N]] struct {
	cfg     CoreConfig[N]
	mu      sync.Mutex
	node    N
	started bool // the node items were rendered at least once
	ix      *index
	// items is the room RenderService appends a service's items to.
	items []vppcfg.Item
}

// NewCore returns a core for the given renderer configuration. Nothing is
// written before the first call.
func NewCore[N NodeContext[N]](cfg CoreConfig[N]) (*Core[N], error) {
	if cfg.Client == nil {
		return nil, fmt.Errorf("%s renderer: nil vppcfg client", cfg.Name)
	}
	if cfg.NodeOf == nil || cfg.RenderService == nil || cfg.RenderNode == nil {
		return nil, fmt.Errorf("%s renderer: incomplete translation (NodeOf, RenderService and RenderNode are required)", cfg.Name)
	}
	if err := ValidateACLShards("aclShards", cfg.Shards.Count); err != nil {
		return nil, JoinFieldErrors(cfg.Name, err)
	}
	if cfg.Log == nil {
		cfg.Log = logrus.StandardLogger().WithField("renderer", cfg.Name)
	}
	if cfg.NodeConflict == "" {
		cfg.NodeConflict = "frontend held by a node-wide item of the renderer; not rendered for the service"
	}
	return &Core[N]{cfg: cfg, ix: newIndex(cfg.Claim, cfg.Shards)}, nil
}

// AddService renders a service that became renderable.
func (c *Core[N]) AddService(svc *model.ContivService) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.apply("add service", c.node, []Change{{svc.ID, svc}})
}

// UpdateService re-renders a changed service. The diff is taken against
// what the core remembers for the service, not against oldService, so a
// retry after a failure (or an update of a service whose add failed) still
// converges. Only the items that changed are written, and the filter shard
// of the service only when its rules changed.
func (c *Core[N]) UpdateService(oldService, newService *model.ContivService) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	changes := []Change{{newService.ID, newService}}
	if oldService != nil && oldService.ID != newService.ID {
		changes = append(changes, Change{ID: oldService.ID})
	}
	return c.apply("update service", c.node, changes)
}

// DeleteService removes everything the renderer configured for a service;
// deleting an unknown service writes nothing.
func (c *Core[N]) DeleteService(svc *model.ContivService) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.apply("delete service", c.node, []Change{{ID: svc.ID}})
}

// UpdateLocalFrontendIfs moves the filter bindings, and whatever else the
// renderer's node-wide items put on frontend interfaces, to the new set of
// interfaces. No service item depends on them, so no service is
// re-rendered.
func (c *Core[N]) UpdateLocalFrontendIfs(_, newIfNames model.Interfaces) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.apply("update frontend interfaces", c.node.WithFrontendInterfaces(newIfNames), nil)
}

// Reconfigure applies a change of the node context. plan gets the current
// node and the remembered services (in ID order) and returns the new node
// and the services to re-render for it; the renderer decides which depend
// on what changed.
func (c *Core[N]) Reconfigure(what string, plan func(node N, services []*model.ContivService) (N, []Change)) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	node, changes := plan(c.node, c.ix.sortedServices())
	return c.apply(what, node, changes)
}

// ReconfigureSome is Reconfigure for a plan that picks the few services a
// node change concerns out of many: it gets them in no particular order,
// so that the change costs a pass over them rather than a sort, and the
// changes it returns are applied in ID order.
func (c *Core[N]) ReconfigureSome(what string, plan func(node N, services iter.Seq[*model.ContivService]) (N, []Change)) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	node, changes := plan(c.node, func(yield func(*model.ContivService) bool) {
		for e := range c.ix.services.All() {
			if !yield(e.svc) {
				return
			}
		}
	})
	slices.SortFunc(changes, func(a, b Change) int { return a.ID.Compare(b.ID) })
	return c.apply(what, node, changes)
}

// Resync renders the whole state from scratch and replaces everything the
// renderer's client owns with it, through one ResyncTxn.
func (c *Core[N]) Resync(ev *model.ResyncEventData) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	needs := make([]bool, len(ev.Services))
	node := c.cfg.NodeOf(ev)
	if c.cfg.Demand != nil {
		for i, svc := range ev.Services {
			needs[i] = c.needs(svc)
		}
		node = c.cfg.Demand.Set(node, slices.Contains(needs, true))
	}
	ix := newIndexSized(c.cfg.Claim, c.cfg.Shards, len(ev.Services), 0)
	// Rendering a service and making its entry are pure (RenderService's
	// and ClaimFunc's contracts) and the bulk of the work: they run on
	// every core; the index takes the entries in this goroutine.
	entries := make([]*serviceEntry, len(ev.Services))
	hashes := make([]entryHashes, len(ev.Services))
	parallel.For(len(ev.Services), func(lo, hi int) {
		var items []vppcfg.Item // this goroutine's room for a service's items
		for i := lo; i < hi; i++ {
			svc := ev.Services[i]
			r := c.cfg.RenderService(svc, node, items[:0])
			items = r.Items[:0]
			entries[i] = ix.newEntry(svc, r, needs[i])
			hashes[i] = ix.hashesOf(entries[i])
		}
	})
	claims := 0
	for _, e := range entries {
		claims += len(e.items)
	}
	ix.winners.reserve(claims)
	for i, e := range entries {
		ix.putEntry(e, &hashes[i])
	}
	ix.node = ix.claimMap(c.renderNode(node, ix.filtered > 0))
	for i := range c.cfg.Shards.Count {
		ix.composeShard(i)
	}
	if ix.services.Len() != len(entries) {
		// A service listed twice: its last entry is the one indexed.
		entries = slices.DeleteFunc(entries, func(e *serviceEntry) bool { return ix.services.Get(e.svc.ID) != e })
	}
	keys, items := ix.allOf(entries, claims)
	if err := vppcfg.PutKeyed(c.cfg.Client.ResyncTxn(), keys, items).Commit(context.Background()); err != nil {
		return fmt.Errorf("%s renderer: resync (%d services, %d items): %w", c.cfg.Name, len(ev.Services), len(items), err)
	}
	old := c.ix
	c.ix, c.node, c.started = ix, node, true
	for _, svc := range ev.Services {
		var prev *model.ContivService
		if e := old.services.Get(svc.ID); e != nil {
			prev = e.svc
		}
		c.warn(prev, svc)
	}
	// Only contested keys can warn; sorting just them keeps the warnings in
	// key order without sorting every key of a cold sync.
	contested := ix.shadowed()
	if contested == nil {
		contested = map[vppcfg.Key]bool{}
	}
	for k := range ix.contenders {
		if ix.claimants(k) > 1 {
			contested[k] = true
		}
	}
	for _, k := range sortedKeys(contested) {
		c.warnConflict(k, old.ownership(k))
	}
	c.cfg.Log.WithFields(logrus.Fields{"services": ix.services.Len(), "items": len(items)}).Info("resynced")
	return nil
}

// apply re-renders the changed services for node (with the demand's switch
// as the changes leave it), commits the difference and, on success,
// remembers the new state.
func (c *Core[N]) apply(what string, node N, changes []Change) error {
	node = c.withDemand(node, changes)
	ix := c.ix
	entries := make([]*serviceEntry, len(changes))
	touched := map[vppcfg.Key]bool{}
	shards := map[int]bool{}
	mark := func(e *serviceEntry) {
		for _, it := range e.items {
			touched[it.claim] = true
		}
		if len(e.rules) > 0 {
			shards[int(e.shard)] = true
		}
	}
	for i, ch := range changes {
		if old := ix.services.Get(ch.ID); old != nil {
			mark(old)
		}
		if ch.Service != nil {
			entries[i] = ix.newEntry(ch.Service, c.render(ch.Service, node), c.needs(ch.Service))
			mark(entries[i])
		}
	}
	// The filter ACLs exist while some service has filter rules: when the
	// first one comes or the last one goes, every shard and binding does.
	filtered := ix.filtered
	for i, ch := range changes {
		if old := ix.services.Get(ch.ID); old != nil && len(old.rules) > 0 {
			filtered--
		}
		if entries[i] != nil && len(entries[i].rules) > 0 {
			filtered++
		}
	}
	filteringChanged := (filtered > 0) != (ix.filtered > 0)
	oldNode, newNode := ix.node, ix.node
	if !c.started || filteringChanged || !c.node.Equal(node) {
		newNode = ix.claimMap(c.renderNode(node, filtered > 0))
		for k := range oldNode {
			touched[k] = true
		}
		for k := range newNode {
			touched[k] = true
		}
	}
	if !c.started || filteringChanged {
		for i := range c.cfg.Shards.Count {
			shards[i] = true
		}
	}

	claims := sortedKeys(touched)
	before := make([]vppcfg.Item, len(claims))
	owned := make([]ownership, len(claims))
	for i, k := range claims {
		before[i] = ix.effective(k)
		owned[i] = ix.ownership(k)
	}
	shardIDs := sortedInts(shards)
	aclsBefore := make([]*vppcfg.ACL, len(shardIDs))
	for i, s := range shardIDs {
		aclsBefore[i] = ix.acls[s]
	}

	prev := make([]*serviceEntry, len(changes))
	for i, ch := range changes {
		prev[i] = ix.setService(ch.ID, entries[i])
	}
	ix.node = newNode
	for _, s := range shardIDs {
		ix.composeShard(s)
	}

	var d diff
	for i, k := range claims {
		owner := owned[i].winner
		if now := ix.ownership(k); now.n > 0 {
			owner = now.winner
		}
		if _, byNode := ix.node[k]; byNode {
			owner = model.ServiceID{}
		}
		after := ix.effectiveClaim(k)
		d.add(before[i], after.item, after.claim, owner)
	}
	for i, s := range shardIDs {
		d.add(aclItem(aclsBefore[i]), aclItem(ix.acls[s]), vppcfg.Key{}, model.ServiceID{})
	}

	if err := c.commit(what, d); err != nil {
		for i := len(changes) - 1; i >= 0; i-- {
			ix.setService(changes[i].ID, prev[i])
		}
		ix.node = oldNode
		for i, s := range shardIDs {
			ix.acls[s] = aclsBefore[i]
		}
		return err
	}
	c.node, c.started = node, true
	for i, k := range claims {
		c.warnConflict(k, owned[i])
	}
	debug := logx.DebugEnabled(c.cfg.Log)
	for i, ch := range changes {
		if ch.Service != nil {
			var old *model.ContivService
			if prev[i] != nil {
				old = prev[i].svc
			}
			c.warn(old, ch.Service)
		}
		if debug {
			log := c.cfg.Log.WithField("service", ch.ID.String())
			if ch.Service != nil {
				log = log.WithField("items", len(entries[i].items))
			}
			log.Debug(what)
		}
	}
	return nil
}

// render is the renderer's RenderService into the core's room for items;
// the rendering's Items are valid until the next call.
func (c *Core[N]) render(svc *model.ContivService, node N) Rendering {
	r := c.cfg.RenderService(svc, node, c.items[:0])
	c.items = r.Items[:0]
	return r
}

// renderNode returns every node-wide item: the renderer's and, while some
// service has filter rules, the filter bindings with the shared permit-all
// ACL.
func (c *Core[N]) renderNode(node N, filtering bool) []vppcfg.Item {
	items := c.cfg.RenderNode(node)
	if filtering {
		items = append(items, c.cfg.Shards.Bindings(node.FrontendInterfaces())...)
	}
	return items
}

// commit writes a diff in one transaction. An empty diff writes nothing.
func (c *Core[N]) commit(what string, d diff) error {
	ctx := context.Background()
	if d.empty() {
		return nil
	}
	if err := vppcfg.PutKeyed(c.cfg.Client.Txn().Delete(d.deletes...), d.putKeys, d.puts).Commit(ctx); err != nil {
		return fmt.Errorf("%s renderer: %s (%d puts, %d deletes): %w", c.cfg.Name, what, len(d.puts), len(d.deletes), err)
	}
	if !logx.DebugEnabled(c.cfg.Log) {
		return nil
	}
	for i, k := range d.deletes {
		c.opLog(k, d.delFor[i]).Debug("deleted")
	}
	for i, it := range d.puts {
		c.opLog(it.Key(), d.putFor[i]).Debug("put")
	}
	return nil
}

// opLog is the logger of one written key, with the service it is for.
func (c *Core[N]) opLog(k vppcfg.Key, owner model.ServiceID) logrus.FieldLogger {
	f := logrus.Fields{"key": k.String()}
	if owner != (model.ServiceID{}) {
		f["service"] = owner.String()
	}
	return c.cfg.Log.WithFields(f)
}

func (c *Core[N]) warn(old, svc *model.ContivService) {
	if c.cfg.Warn != nil {
		c.cfg.Warn(c.cfg.Log, old, svc)
	}
}

// warnConflict logs a claim that several services want, or that a service
// wants but a node item holds, when that conflict is new or changed: only
// the service with the smallest ID gets a contested frontend, and none gets
// one a node item holds.
func (c *Core[N]) warnConflict(k vppcfg.Key, before ownership) {
	ids := c.ix.claimantIDs(k)
	_, byNode := c.ix.node[k]
	if len(ids) == 0 || (!byNode && len(ids) < 2) || (ownership{ids[0], len(ids)}) == before {
		return
	}
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = id.String()
	}
	log := c.cfg.Log.WithFields(logrus.Fields{"key": k.String(), "services": names})
	if byNode {
		log.Warn(c.cfg.NodeConflict)
		return
	}
	log.Warn("frontend wanted by several services; only the first (smallest ID) gets it")
}

// aclItem returns acl as an item, and a nil item (not a nil *ACL in an
// interface) for no ACL.
func aclItem(acl *vppcfg.ACL) vppcfg.Item {
	if acl == nil {
		return nil
	}
	return acl
}

func sortedInts(set map[int]bool) []int {
	out := make([]int, 0, len(set))
	for i := range set {
		out = append(out, i)
	}
	slices.Sort(out)
	return out
}
