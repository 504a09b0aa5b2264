package renderer

import (
	"slices"

	"github.com/vppsvc/vppsvc/internal/idmap"
	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// Rendering is what a renderer's pure translation makes of one service:
// the items that implement it and the filter rules that go into its ACL
// shard, in evaluation order.
type Rendering struct {
	Items []vppcfg.Item
	Rules []vppcfg.ACLRule
}

// ClaimFunc returns the identity under which an item competes with the
// items of other services and of the node. It is usually the item's key; a
// renderer whose VPP objects collide under different keys (NAT44 static and
// load-balancing mappings share VPP's external key) maps them to one claim.
// It must be pure: a resync calls it from several goroutines at once.
type ClaimFunc func(vppcfg.Item) vppcfg.Key

// serviceEntry is what the index remembers of one service: the value last
// rendered, its items by claim and its filter rules.
type serviceEntry struct {
	svc *model.ContivService
	// items are sorted by claim, one per claim. A service has a few items
	// (one per frontend and port, and a drop route), so a sorted list costs
	// 40 bytes per item where a map cost a few hundred bytes per service.
	items []claimed
	rules []vppcfg.ACLRule
	// shard is an int32 so that it shares a word with needs and
	// selfCollided: the entry is 64 bytes, not 80, one per service.
	shard int32
	// needs tells whether the service needs the core's NodeDemand.
	needs bool
	// selfCollided: two of the entry's claims hash alike (winners).
	selfCollided bool
}

// entryAndOneItem is an entry with room for its one item.
type entryAndOneItem struct {
	entry serviceEntry
	one   [1]claimed
}

// entryAndTwoItems is an entry with room for its two items.
type entryAndTwoItems struct {
	entry serviceEntry
	two   [2]claimed
}

// claimed is an item under the claim it competes for.
type claimed struct {
	claim vppcfg.Key
	item  vppcfg.Item
}

// holds reports whether the entry claims c.
func (e *serviceEntry) holds(c vppcfg.Key) bool {
	_, found := slices.BinarySearchFunc(e.items, c, func(it claimed, c vppcfg.Key) int { return it.claim.Compare(c) })
	return found
}

// item returns the entry's item for claim c, or nil.
func (e *serviceEntry) item(c vppcfg.Key) vppcfg.Item { return e.claimed(c).item }

// claimed returns the entry's claim c with its item, or the zero claimed.
func (e *serviceEntry) claimed(c vppcfg.Key) claimed {
	if i, found := slices.BinarySearchFunc(e.items, c, func(it claimed, c vppcfg.Key) int { return it.claim.Compare(c) }); found {
		return e.items[i]
	}
	return claimed{}
}

// index is a renderer's whole desired configuration: node-wide items, per
// claim the item of the winning service, and per filter shard the ACL
// composed of its services' rules. Every field derives from the services
// and the node, so Resync rebuilds it from scratch.
//
// Two services can claim one key (two Services sharing an external IP and
// port, or an external IP equal to another Service's LoadBalancer IP); the
// service with the smallest ID wins and the next one takes over when the
// winner lets go. Picking by ID rather than by arrival keeps incremental
// updates and Resync in agreement. A node item wins over every service.
type index struct {
	claim    ClaimFunc
	shards   ACLShards
	services idmap.Map[serviceEntry]
	// winners and contenders hold, per claim, the services that want it
	// (claimants.go).
	winners    winners
	contenders map[vppcfg.Key][]*serviceEntry
	// node are the node-wide items, by claim.
	node map[vppcfg.Key]vppcfg.Item
	// members lists, per shard, the services with filter rules, sorted by
	// ID: the order in which their rules are concatenated.
	members [][]model.ServiceID
	// filtered counts the services with filter rules; the shards exist only
	// while it is not 0 (see ACLShards).
	filtered int
	// acls are the composed shard ACLs; nil while nothing is filtered, or
	// until first composed.
	acls []*vppcfg.ACL
	// demanding counts the services that need the core's NodeDemand.
	demanding int
}

func newIndex(claim ClaimFunc, shards ACLShards) *index { return newIndexSized(claim, shards, 0, 0) }

// newIndexSized returns an index with room for the given numbers of
// services and claims (a Resync knows them; growing the maps from empty
// rehashes them at every doubling and leaves them up to half empty).
func newIndexSized(claim ClaimFunc, shards ACLShards, services, claims int) *index {
	if claim == nil {
		claim = vppcfg.Item.Key
	}
	return &index{
		claim:      claim,
		shards:     shards,
		services:   idmap.New(services, func(e *serviceEntry) model.ServiceID { return e.svc.ID }),
		winners:    newWinners(claims),
		contenders: map[vppcfg.Key][]*serviceEntry{},
		node:       map[vppcfg.Key]vppcfg.Item{},
		members:    make([][]model.ServiceID, shards.Count),
		acls:       make([]*vppcfg.ACL, shards.Count),
	}
}

// newEntry indexes a service's rendering by claim; of two items with one
// claim the one with the smaller key is kept (the first of the rendering's
// if their keys are equal too). needs tells whether the service needs the
// core's NodeDemand. It only reads the index's claim and shard functions,
// so a resync makes entries on several goroutines.
func (ix *index) newEntry(svc *model.ContivService, r Rendering, needs bool) *serviceEntry {
	entry := serviceEntry{svc: svc, rules: r.Rules, shard: int32(ix.shards.Of(svc.ID)), needs: needs}
	// The entry and one or two items (a mapping, and a drop route when no
	// service CIDR covers the ClusterIP) in one allocation of the bytes
	// they took apart: 112 and 144 bytes, both size classes.
	var e *serviceEntry
	switch len(r.Items) {
	case 1:
		both := &entryAndOneItem{entry: entry}
		e = &both.entry
		e.items = both.one[:0]
	case 2:
		both := &entryAndTwoItems{entry: entry}
		e = &both.entry
		e.items = both.two[:0]
	default:
		e = new(serviceEntry)
		*e = entry
		e.items = make([]claimed, 0, len(r.Items))
	}
	for _, it := range r.Items {
		e.items = append(e.items, claimed{ix.claim(it), it})
	}
	if len(e.items) > 1 {
		// Stable: among items of one claim and key the first stays first.
		slices.SortStableFunc(e.items, func(a, b claimed) int {
			if c := a.claim.Compare(b.claim); c != 0 {
				return c
			}
			return a.item.Key().Compare(b.item.Key()) // rare: keys made only here
		})
		e.items = slices.Clip(slices.CompactFunc(e.items, func(a, b claimed) bool { return a.claim == b.claim }))
	}
	ix.winners.markSelfCollided(e)
	return e
}

// claimMap indexes node items by claim.
func (ix *index) claimMap(items []vppcfg.Item) map[vppcfg.Key]vppcfg.Item {
	m := make(map[vppcfg.Key]vppcfg.Item, len(items))
	for _, it := range items {
		m[ix.claim(it)] = it
	}
	return m
}

// effective returns the item desired for a claim, or nil.
func (ix *index) effective(c vppcfg.Key) vppcfg.Item { return ix.effectiveClaim(c).item }

// effectiveClaim returns the item desired for a claim with the claim as
// the index holds it (the copy of its name that the VPP layer may share,
// vppcfg.PutKeyed), or the zero claimed.
func (ix *index) effectiveClaim(c vppcfg.Key) claimed {
	if it, ok := ix.node[c]; ok {
		return claimed{c, it}
	}
	if w := ix.winners.get(c); w != nil {
		return w.claimed(c)
	}
	return claimed{}
}

// setService replaces the entry of a service (nil removes it) and returns
// the previous one, which setService(id, previous) restores. The shard ACLs
// are recomposed separately (composeShard).
func (ix *index) setService(id model.ServiceID, e *serviceEntry) *serviceEntry {
	if e != nil {
		h := ix.hashesOf(e)
		return ix.putEntry(e, &h) // e is the entry of id
	}
	old := ix.services.Get(id)
	if old != nil {
		ix.services.Delete(id)
		ix.forget(id, old)
	}
	return old
}

// putEntry is setService of e, with e's hashes in h: a resync makes them
// beside the entry, on every core, so that the one goroutine that indexes
// every entry does not read each ID and claim again (a cache miss each).
// It reads e's ID only when the index has to compare or list it.
func (ix *index) putEntry(e *serviceEntry, h *entryHashes) *serviceEntry {
	old := ix.services.PutHashed(e, h.id)
	if old != nil {
		ix.forget(e.svc.ID, old)
	}
	for j, it := range e.items {
		ix.addClaimantHashed(it.claim, h.claim(ix, e, j), e)
	}
	if len(e.rules) > 0 {
		ix.members[e.shard] = insertID(ix.members[e.shard], e.svc.ID)
		ix.filtered++
	}
	if e.needs {
		ix.demanding++
	}
	return old
}

// forget takes old, the entry of id the index no longer holds, out of its
// claims, shard and counts.
func (ix *index) forget(id model.ServiceID, old *serviceEntry) {
	for _, it := range old.items {
		ix.removeClaimant(it.claim, id)
	}
	if len(old.rules) > 0 {
		ix.members[old.shard] = removeID(ix.members[old.shard], id)
		ix.filtered--
	}
	if old.needs {
		ix.demanding--
	}
}

// entryHashes are an entry's hashes in the index's tables: its ID's in
// services and its first claims' in winners (an entry has one or two
// claims but for services of several ports).
type entryHashes struct {
	id     uint64
	claims [2]uint64
}

// hashesOf hashes e's ID and first claims. It reads only the tables'
// seeds, so a resync's goroutines call it.
func (ix *index) hashesOf(e *serviceEntry) entryHashes {
	h := entryHashes{id: ix.services.Hash(e.svc.ID)}
	for j := range min(len(e.items), len(h.claims)) {
		h.claims[j] = ix.winners.hashOf(e.items[j].claim)
	}
	return h
}

// claim is the hash of e's claim j.
func (h *entryHashes) claim(ix *index, e *serviceEntry, j int) uint64 {
	if j < len(h.claims) {
		return h.claims[j]
	}
	return ix.winners.hashOf(e.items[j].claim)
}

// composeShard rebuilds the ACL of shard i from its members' rules, kept
// together per service and in service-ID order, or drops it while no
// service has filter rules. The cost is that of the shard's rules, whatever
// the number of services.
func (ix *index) composeShard(i int) {
	if ix.filtered == 0 {
		ix.acls[i] = nil
		return
	}
	var rules []vppcfg.ACLRule
	for _, id := range ix.members[i] {
		rules = append(rules, ix.services.Get(id).rules...)
	}
	ix.acls[i] = ix.shards.ACL(i, rules)
}

// ownership summarises who claims a key: the winning service and how many
// want it. It tells the logs whom a change is for and whether a conflict
// between services is new.
type ownership struct {
	winner model.ServiceID
	n      int
}

func (ix *index) ownership(c vppcfg.Key) ownership {
	w := ix.winners.get(c)
	if w == nil {
		return ownership{}
	}
	return ownership{w.svc.ID, ix.claimants(c)}
}

// allOf returns every effective item, shard ACLs included, of an index
// whose services are exactly entries, holding claims claims in all, in no
// particular order: a resync transaction does not depend on it, and
// sorting 50,000 items by key cost a tenth of the renderer's part of a
// cold sync. It walks the entries, not the winners map: a cold sync's
// entries were made one after the other, so the walk reads memory in
// order instead of jumping to an entry per claim; a claim is looked up
// only when another service or a node item wants it too, which is rare.
//
// keys are the items' claims (the zero Key for a shard ACL), which are
// mostly their keys: handed to the VPP layer with the items
// (vppcfg.PutKeyed), the layer keeps the claim's copy of each name.
func (ix *index) allOf(entries []*serviceEntry, claims int) (keys []vppcfg.Key, items []vppcfg.Item) {
	n := len(ix.node) + claims + len(ix.acls)
	keys, items = make([]vppcfg.Key, 0, n), make([]vppcfg.Item, 0, n)
	for c, it := range ix.node {
		keys, items = append(keys, c), append(items, it)
	}
	shadowed := ix.shadowed()
	for _, e := range entries {
		for _, it := range e.items {
			if len(shadowed) > 0 && shadowed[it.claim] {
				continue
			}
			if _, contested := ix.contenders[it.claim]; contested && ix.winners.get(it.claim) != e {
				continue
			}
			keys, items = append(keys, it.claim), append(items, it.item)
		}
	}
	for _, acl := range ix.acls {
		if acl != nil {
			keys, items = append(keys, vppcfg.Key{}), append(items, acl)
		}
	}
	return keys, items
}

// shadowed returns the claims that node items take from services. It is
// usually empty: walking the few node items instead of looking every claim
// up in ix.node spares a cold sync one map lookup per item.
func (ix *index) shadowed() map[vppcfg.Key]bool {
	var out map[vppcfg.Key]bool
	for c := range ix.node {
		if ix.winners.get(c) != nil {
			if out == nil {
				out = map[vppcfg.Key]bool{}
			}
			out[c] = true
		}
	}
	return out
}

// sortedServices returns the remembered service values in ID order.
func (ix *index) sortedServices() []*model.ContivService {
	out := make([]*model.ContivService, 0, ix.services.Len())
	for e := range ix.services.All() {
		out = append(out, e.svc)
	}
	slices.SortFunc(out, func(a, b *model.ContivService) int { return a.ID.Compare(b.ID) })
	return out
}

// SortItems sorts items by key, the canonical order of every item list the
// renderers return, and returns them. Each key is computed once: Key builds
// its name from the item's fields, and computing it in every comparison made
// sorting a cold sync's items (n log n keys of 50,000 mappings) a tenth of
// the sync.
func SortItems(items []vppcfg.Item) []vppcfg.Item {
	if len(items) < 2 {
		return items
	}
	type keyed struct {
		key  vppcfg.Key
		item vppcfg.Item
	}
	ks := make([]keyed, len(items))
	for i, it := range items {
		ks[i] = keyed{it.Key(), it}
	}
	slices.SortFunc(ks, func(a, b keyed) int { return a.key.Compare(b.key) })
	for i := range ks {
		items[i] = ks[i].item
	}
	return items
}

func insertID(ids []model.ServiceID, id model.ServiceID) []model.ServiceID {
	if i, found := slices.BinarySearchFunc(ids, id, model.ServiceID.Compare); !found {
		ids = slices.Insert(ids, i, id)
	}
	return ids
}

func removeID(ids []model.ServiceID, id model.ServiceID) []model.ServiceID {
	if i, found := slices.BinarySearchFunc(ids, id, model.ServiceID.Compare); found {
		ids = slices.Delete(ids, i, i+1)
	}
	return ids
}
