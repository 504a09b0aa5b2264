package nat44

import (
	"net/netip"
	"slices"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// claimOf is the identity under which items compete. It is the item's key,
// except that static and identity mappings claim the key of the LB mapping
// at the same external address:port/protocol: VPP has one mapping per
// external key whatever its kind (the VPP layer rejects a transaction that
// would put two), so a one-backend and a many-backend service with the
// same frontend conflict, and so does a service frontend with an egress
// SNAT identity port.
func claimOf(it vppcfg.Item) vppcfg.Key {
	switch m := it.(type) {
	case *vppcfg.NAT44StaticMapping:
		return vppcfg.NAT44MappingKey(vppcfg.KindNAT44LBMapping, m.External, m.Protocol)
	case *vppcfg.NAT44IdentityMapping:
		if !m.AddrOnly {
			return vppcfg.NAT44MappingKey(vppcfg.KindNAT44LBMapping, netip.AddrPortFrom(m.Addr, m.Port), m.Protocol)
		}
	}
	return it.Key()
}

// serviceEntry is what the renderer remembers of one service: the last value
// it rendered and the items that value produced, by claim.
type serviceEntry struct {
	svc   *model.ContivService
	items map[vppcfg.Key]vppcfg.Item
	// filtering is true when the service owns an ACL, which needs the
	// shared permit-all ACL on the frontend interfaces.
	filtering bool
}

func newServiceEntry(svc *model.ContivService, items []vppcfg.Item) *serviceEntry {
	e := &serviceEntry{svc: svc, items: make(map[vppcfg.Key]vppcfg.Item, len(items))}
	for _, it := range items {
		c := claimOf(it)
		if _, dup := e.items[c]; !dup {
			e.items[c] = it
		}
		if it.Key().Kind == vppcfg.KindACL {
			e.filtering = true
		}
	}
	return e
}

// desiredState is the renderer's whole desired configuration: node items
// plus, per claim, the item of the winning service. A node item wins over
// every service (node claims are fixed by the Config, so a service never
// gains a claim a node item gives up). Two services can claim
// one external address:port/protocol (two Services sharing an external IP
// and port, or an external IP equal to another Service's LoadBalancer IP);
// the service with the smallest ID wins, and the other takes over when the
// winner lets go. Picking by ID rather than by arrival keeps incremental
// updates and Resync in agreement. Every field is derived from the services
// and the node, so Resync rebuilds it from scratch.
type desiredState struct {
	services map[model.ServiceID]*serviceEntry
	// owners lists, per claim, the services that want it, sorted by ID.
	owners map[vppcfg.Key][]model.ServiceID
	// filtering counts the services that own an ACL.
	filtering int
	// node are the node-wide items, by claim.
	node map[vppcfg.Key]vppcfg.Item
}

func newDesiredState() *desiredState {
	return &desiredState{
		services: map[model.ServiceID]*serviceEntry{},
		owners:   map[vppcfg.Key][]model.ServiceID{},
		node:     map[vppcfg.Key]vppcfg.Item{},
	}
}

// effective returns the item desired for a claim, or nil.
func (d *desiredState) effective(claim vppcfg.Key) vppcfg.Item {
	if it, ok := d.node[claim]; ok {
		return it
	}
	if ids := d.owners[claim]; len(ids) > 0 {
		return d.services[ids[0]].items[claim]
	}
	return nil
}

// setService replaces the entry of a service (nil removes it) and returns
// the previous one, which setService(id, previous) restores.
func (d *desiredState) setService(id model.ServiceID, e *serviceEntry) *serviceEntry {
	old := d.services[id]
	if old != nil {
		for c := range old.items {
			d.dropOwner(c, id)
		}
		if old.filtering {
			d.filtering--
		}
		delete(d.services, id)
	}
	if e != nil {
		d.services[id] = e
		for c := range e.items {
			d.addOwner(c, id)
		}
		if e.filtering {
			d.filtering++
		}
	}
	return old
}

func (d *desiredState) addOwner(c vppcfg.Key, id model.ServiceID) {
	ids := d.owners[c]
	i, found := slices.BinarySearchFunc(ids, id, model.ServiceID.Compare)
	if !found {
		d.owners[c] = slices.Insert(ids, i, id)
	}
}

func (d *desiredState) dropOwner(c vppcfg.Key, id model.ServiceID) {
	ids := d.owners[c]
	if i, found := slices.BinarySearchFunc(ids, id, model.ServiceID.Compare); found {
		ids = slices.Delete(ids, i, i+1)
	}
	if len(ids) == 0 {
		delete(d.owners, c)
	} else {
		d.owners[c] = ids
	}
}

// all returns every effective item, sorted by key.
func (d *desiredState) all() []vppcfg.Item {
	items := make([]vppcfg.Item, 0, len(d.node)+len(d.owners))
	for _, it := range d.node {
		items = append(items, it)
	}
	for c := range d.owners {
		if _, shadowed := d.node[c]; !shadowed {
			items = append(items, d.effective(c))
		}
	}
	return sortItems(items)
}

// ownership summarises who claims a key: the winning service and how many
// want it. It tells the logs whom a change is for and whether a conflict
// between services is new.
type ownership struct {
	winner model.ServiceID
	n      int
}

func (d *desiredState) ownership(c vppcfg.Key) ownership {
	ids := d.owners[c]
	if len(ids) == 0 {
		return ownership{}
	}
	return ownership{ids[0], len(ids)}
}
