package renderer

import (
	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// ServiceKeys returns, per service, the keys of the items the renderer
// desires for it: the claims the service wins (a claim two services want
// is listed under the smallest ID, as it is rendered; one a node-wide item
// holds under none). Shard ACLs and node-wide items belong to no service.
// It is what an inspector needs to group the VPP layer's items by service;
// the lock is held only while the keys are copied.
func (c *Core[N]) ServiceKeys() map[model.ServiceID][]vppcfg.Key {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[model.ServiceID][]vppcfg.Key, c.ix.services.Len())
	for claim, w := range c.ix.winners.all() {
		if _, shadowed := c.ix.node[claim]; shadowed {
			continue
		}
		out[w.svc.ID] = append(out[w.svc.ID], w.item(claim).Key())
	}
	return out
}
