package renderer

import "github.com/vppsvc/vppsvc/model"

// NodeDemand is node-wide state that follows the set of services: a switch
// of the node context that is on while at least one service needs it (the
// NAT44 renderer runs cnat's feature nodes only while some service has
// externalTrafficPolicy Local). Core counts the services that need it and
// sets the switch before it renders, on every call and at Resync, so the
// node items it implies come and go in the same transaction as the items
// of the service that made it flip.
type NodeDemand[N any] struct {
	// Needs tells whether a service needs the switch on.
	Needs func(svc *model.ContivService) bool
	// Set returns node with the switch on or off.
	Set func(node N, on bool) N
}

// needs tells whether svc needs the demand; false without one.
func (c *Core[N]) needs(svc *model.ContivService) bool {
	return c.cfg.Demand != nil && svc != nil && c.cfg.Demand.Needs(svc)
}

// withDemand returns node with the demand's switch as it is once changes
// are applied: on while some remembered or changed service needs it.
func (c *Core[N]) withDemand(node N, changes []Change) N {
	if c.cfg.Demand == nil {
		return node
	}
	n := c.ix.demanding
	for _, ch := range changes {
		if old := c.ix.services.Get(ch.ID); old != nil && old.needs {
			n--
		}
		if c.needs(ch.Service) {
			n++
		}
	}
	return c.cfg.Demand.Set(node, n > 0)
}
