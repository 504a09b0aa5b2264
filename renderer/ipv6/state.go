package ipv6

import (
	"slices"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// serviceEntry is what the renderer remembers of one service: the last value
// it rendered and the items that value produced, by key.
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
		e.items[it.Key()] = it
		if it.Key().Kind == vppcfg.KindACL {
			e.filtering = true
		}
	}
	return e
}

// desiredState is the renderer's whole desired configuration: node items
// plus, per key, the item of the winning service. Two services can want one
// translation key (two Services sharing an external IP and port, or an
// external IP equal to another Service's LoadBalancer IP); cnat has one
// translation per address, port and protocol, so the service with the
// smallest ID wins and the next one takes over when the winner lets go.
// Picking by ID rather than by arrival keeps incremental updates and Resync
// in agreement. Node items (the permit-all ACL and its bindings) never share
// a key with a service item. Every field is derived from the services and
// the node, so Resync rebuilds it from scratch.
type desiredState struct {
	services map[model.ServiceID]*serviceEntry
	// owners lists, per key, the services that want it, sorted by ID.
	owners map[vppcfg.Key][]model.ServiceID
	// filtering counts the services that own an ACL.
	filtering int
	// node are the node-wide items, by key.
	node map[vppcfg.Key]vppcfg.Item
}

func newDesiredState() *desiredState {
	return &desiredState{
		services: map[model.ServiceID]*serviceEntry{},
		owners:   map[vppcfg.Key][]model.ServiceID{},
		node:     map[vppcfg.Key]vppcfg.Item{},
	}
}

// effective returns the item desired for a key, or nil.
func (d *desiredState) effective(k vppcfg.Key) vppcfg.Item {
	if it, ok := d.node[k]; ok {
		return it
	}
	if ids := d.owners[k]; len(ids) > 0 {
		return d.services[ids[0]].items[k]
	}
	return nil
}

// setService replaces the entry of a service (nil removes it) and returns
// the previous one, which setService(id, previous) restores.
func (d *desiredState) setService(id model.ServiceID, e *serviceEntry) *serviceEntry {
	old := d.services[id]
	if old != nil {
		for k := range old.items {
			d.owners[k] = removeID(d.owners[k], id)
			if len(d.owners[k]) == 0 {
				delete(d.owners, k)
			}
		}
		if old.filtering {
			d.filtering--
		}
		delete(d.services, id)
	}
	if e != nil {
		d.services[id] = e
		for k := range e.items {
			d.owners[k] = insertID(d.owners[k], id)
		}
		if e.filtering {
			d.filtering++
		}
	}
	return old
}

// winner returns the service whose item a key holds, and how many services
// want the key.
func (d *desiredState) winner(k vppcfg.Key) (model.ServiceID, int) {
	ids := d.owners[k]
	if len(ids) == 0 {
		return model.ServiceID{}, 0
	}
	return ids[0], len(ids)
}

// all returns every effective item, sorted by key.
func (d *desiredState) all() []vppcfg.Item {
	items := make([]vppcfg.Item, 0, len(d.node)+len(d.owners))
	for _, it := range d.node {
		items = append(items, it)
	}
	for k := range d.owners {
		items = append(items, d.effective(k))
	}
	return sortItems(items)
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
