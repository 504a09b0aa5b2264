package engine

import (
	"fmt"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
)

// Gates in the diff: a gate kind's one item enables the VPP plugin other
// kinds live in (vppcfg's kindSpec.Gate: the NAT44Global item and the NAT44 kinds),
// so it is created first and disabled last, and changing what only a
// re-enable can change re-creates every item of the plugin.

// gatedBy is the gate kind the items of kind k wait for (0: none).
func gatedBy(k vppcfg.Kind) vppcfg.Kind { return core.Describe(k).Gate }

// gateEnabled reports whether the gate item gk is, or is about to be, in
// VPP: the items of its plugin wait for it.
func gateEnabled(in diffInput, gk vppcfg.Key) bool {
	_, applied := in.Applied[gk]
	return in.Desired.Has(gk) || applied || in.Foreign[gk] != nil
}

// gateReset re-creates every ready item of a plugin when the plan
// re-enables it (changes holds a recreate of its gate), which wipes them
// all in VPP.
func (p *opPlan) gateReset(in diffInput, ready *readySet, changes *changeSet) {
	for g := range core.Gates {
		if !changes.recreates(g.GateKey) {
			continue
		}
		if p.Reset == nil {
			p.Reset = map[vppcfg.Kind]bool{}
		}
		p.Reset[g.Kind] = true
		for k, e := range in.Desired {
			if gatedBy(k.Kind) != g.Kind {
				continue
			}
			if !ready.has(k) && p.Pending[k] == "" && p.Blocked[k] == nil {
				// Out of the diff's scope: decided here.
				ready.decide(k, missingInterface(e.Item, in.Interfaces) == "")
			}
			if ready.has(k) {
				changes.create(k, e)
			}
		}
	}
}

// gateDeletes disables a plugin only when no item of it stays desired or
// applied: disabling deletes all of the plugin's state in VPP.
func (p *opPlan) gateDeletes(in diffInput, deletes []driverapi.Op, changes *changeSet) []driverapi.Op {
	var out []driverapi.Op
	for g := range core.Gates {
		if op, ok := p.gateDelete(in, g, deletes, changes); ok {
			out = append(out, op)
		}
	}
	return out
}

func (p *opPlan) gateDelete(in diffInput, g *core.Descriptor, deletes []driverapi.Op, changes *changeSet) (driverapi.Op, bool) {
	gk := g.GateKey
	a, applied := in.Applied[gk]
	if !applied {
		return driverapi.Op{}, false
	}
	if changes.recreates(gk) {
		return driverapi.Op{Type: driverapi.OpDelete, Key: gk, Item: a.Item}, true
	}
	if in.Desired.Has(gk) {
		return driverapi.Op{}, false
	}
	if !prunable(a, in.Resynced) {
		p.Pending[gk] = fmt.Sprintf("kept: not desired, but owner %q has not resynced", a.Owner.String())
		return driverapi.Op{}, false
	}
	deleted := map[vppcfg.Key]bool{}
	for _, op := range deletes {
		deleted[op.Key] = true
	}
	for k := range in.Desired {
		if gatedBy(k.Kind) == g.Kind {
			p.Pending[gk] = fmt.Sprintf("kept: %s needs it and is still desired", k)
			return driverapi.Op{}, false
		}
	}
	for k := range in.Applied {
		if gatedBy(k.Kind) == g.Kind && !deleted[k] {
			p.Pending[gk] = fmt.Sprintf("kept: %s needs it and is still in VPP", k)
			return driverapi.Op{}, false
		}
	}
	return driverapi.Op{Type: driverapi.OpDelete, Key: gk, Item: a.Item}, true
}
