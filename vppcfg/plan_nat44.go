package vppcfg

import "fmt"

// NAT44 specifics of the diff: the NAT44Global item enables the plugin that
// every other NAT44 kind lives in (descriptor.nat44), so it is created
// first, disabled last, and changing what only a re-enable can change
// re-creates every NAT44 object.

// isNAT44 reports whether kind k belongs to the NAT44 plugin (NAT44Global included).
func isNAT44(k Kind) bool { return describe(k).nat44 }

// natEnabled reports whether NAT44 is, or is about to be, enabled: NAT44
// items wait for it.
func natEnabled(in diffInput) bool {
	gk := NAT44GlobalKey()
	_, applied := in.Applied[gk]
	return in.Desired.has(gk) || applied || in.Foreign[gk] != nil
}

// natReset re-creates every ready NAT44 item when the plan re-enables NAT44
// (changes holds a recreate of the global), which wipes them all in VPP.
func (p *opPlan) natReset(in diffInput, ready map[Key]bool, changes map[Key]change) {
	if changes[NAT44GlobalKey()] != changeRecreate {
		return
	}
	p.NATReset = true
	for k := range in.Desired {
		if isNAT44(k.Kind) && k.Kind != KindNAT44Global {
			if _, evaluated := ready[k]; !evaluated && p.Pending[k] == "" && p.Blocked[k] == nil {
				ready[k] = missingInterface(in.Desired[k].item, in.Interfaces) == ""
			}
			if ready[k] {
				changes[k] = changeCreate
			}
		}
	}
}

// natGlobalDelete disables NAT44 only when no NAT44 item stays desired or
// applied: disabling deletes all NAT44 state in VPP.
func (p *opPlan) natGlobalDelete(in diffInput, deletes []Op, changes map[Key]change) (Op, bool) {
	gk := NAT44GlobalKey()
	a, applied := in.Applied[gk]
	if !applied {
		return Op{}, false
	}
	if changes[gk] == changeRecreate {
		return Op{Type: OpDelete, Key: gk, Item: a.Item}, true
	}
	if in.Desired.has(gk) {
		return Op{}, false
	}
	if !prunable(a, in.Resynced) {
		p.Pending[gk] = fmt.Sprintf("kept: not desired, but owner %q has not resynced", a.Owner.String())
		return Op{}, false
	}
	deleted := map[Key]bool{}
	for _, op := range deletes {
		deleted[op.Key] = true
	}
	for k := range in.Desired {
		if isNAT44(k.Kind) {
			p.Pending[gk] = fmt.Sprintf("kept: NAT44 item %s is still desired", k)
			return Op{}, false
		}
	}
	for k := range in.Applied {
		if isNAT44(k.Kind) && k != gk && !deleted[k] {
			p.Pending[gk] = fmt.Sprintf("kept: NAT44 item %s is still in VPP", k)
			return Op{}, false
		}
	}
	return Op{Type: OpDelete, Key: gk, Item: a.Item}, true
}
