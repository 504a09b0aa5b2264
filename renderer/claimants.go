package renderer

import (
	"slices"

	"github.com/vppsvc/vppsvc/model"
)

// claimants are the services that want one claim, sorted by ID: the first
// wins. Nearly every claim has one claimant, kept inline, so the index's
// claim map costs no allocation per claim; the others are in more.
type claimants struct {
	first *serviceEntry
	more  []*serviceEntry
}

func (c claimants) len() int {
	if c.first == nil {
		return 0
	}
	return 1 + len(c.more)
}

// ids returns the claimants' IDs, winner first.
func (c claimants) ids() []model.ServiceID {
	if c.first == nil {
		return nil
	}
	out := make([]model.ServiceID, 0, c.len())
	out = append(out, c.first.svc.ID)
	for _, e := range c.more {
		out = append(out, e.svc.ID)
	}
	return out
}

// insert adds e in ID order; an entry of the same service must have been
// removed before.
func (c claimants) insert(e *serviceEntry) claimants {
	switch {
	case c.first == nil:
		c.first = e
	case e.svc.ID.Compare(c.first.svc.ID) < 0:
		c.more = slices.Insert(c.more, 0, c.first)
		c.first = e
	default:
		i, _ := slices.BinarySearchFunc(c.more, e.svc.ID, func(m *serviceEntry, id model.ServiceID) int { return m.svc.ID.Compare(id) })
		c.more = slices.Insert(c.more, i, e)
	}
	return c
}

// remove takes the entry of service id out; the next in ID order wins.
func (c claimants) remove(id model.ServiceID) claimants {
	switch {
	case c.first == nil:
	case c.first.svc.ID == id:
		c.first = nil
		if len(c.more) > 0 {
			c.first = c.more[0]
			c.more = slices.Delete(c.more, 0, 1)
		}
	default:
		c.more = slices.DeleteFunc(c.more, func(m *serviceEntry) bool { return m.svc.ID == id })
	}
	if len(c.more) == 0 {
		c.more = nil
	}
	return c
}
