package vppcfg

import (
	"fmt"
	"slices"
	"time"

	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
)

// cnat's global SNAT settings are one value per VPP, set by one message for
// both families' addresses (cnat_set_snat_addresses; VPP 25.10's
// cnat_set_snat writes both), but two renderers need them: the IPv6
// renderer its IPv6 address, the cnat IPv4 renderer its IPv4 one. Each
// desires its own part (CNATSnatConfig.Part, a key of its own), and the diff
// merges every part into one value sent as an OpUpdate under the whole
// key, as ACL bindings are merged into an interface's lists
// (kind_acl_binding_merge.go). The kind's state is the value last sent:
// VPP cannot dump it, so after a VPP restart (or an agent start) it is
// unknown and the next merge sends every setting again.

// cnatSnatMerger is the SNAT settings kind's merger.
var cnatSnatMerger = &core.Merger{
	NewState: func() core.MergedState { return &cnatSnatState{} },
	Plan:     cnatSnatPlan,
	Prepare:  func(_ core.AppliedView, op driverapi.Op, _ time.Time) driverapi.Op { return op },
	Record:   recordCNATSnat,
	// VPP has no dump of the settings (State.Unobservable): there is
	// never an object to observe.
	Observe: func(core.DumpView, driverapi.Observed) {},
}

// cnatSnatState is the merged value VPP holds, nil when unknown.
type cnatSnatState struct{ sent *CNATSnatConfig }

// ForgetInterface is a no-op: the settings name no interface.
func (*cnatSnatState) ForgetInterface(string) {}

// cnatSnatStateOf is the kind's state among the hooks' arguments.
func cnatSnatStateOf(s core.MergedState) *cnatSnatState {
	if c, ok := s.(*cnatSnatState); ok {
		return c
	}
	return &cnatSnatState{}
}

// cnatSnatPlan merges the desired parts, and those applied for owners that
// have not resynced, into one value. It sends it when a part changed,
// appeared or went, or when VPP's value is unknown; a part nobody desires
// any more (and may be pruned) leaves the merge, which clears its address.
func cnatSnatPlan(in core.MergeInput) (dels, sets []core.MergedOp) {
	parts := map[CNATSnatPart]*CNATSnatConfig{}
	var covers []Key
	changed := false
	in.EachKey(func(k Key) {
		covers = append(covers, k)
		di, desired := in.Desired(k)
		ai, owner, prunable, applied := in.Applied(k)
		d, _ := di.(*CNATSnatConfig)
		a, _ := ai.(*CNATSnatConfig)
		switch {
		case desired && d != nil:
			parts[d.Part] = d
			changed = changed || a == nil || !a.Equal(d)
		case applied && a != nil && !prunable:
			in.Pend(k, fmt.Sprintf("kept: not desired, but owner %q has not resynced", owner))
			parts[a.Part] = a
		case applied:
			changed = true
		}
	})
	if len(covers) == 0 {
		return nil, nil
	}
	merged := mergeCNATSnatParts(parts)
	sent := cnatSnatStateOf(in.State()).sent
	if !changed && sent != nil && sent.Equal(merged) {
		return nil, nil
	}
	op := driverapi.Op{Type: driverapi.OpUpdate, Key: cnatSnatConfigKey(CNATSnatWhole), Item: merged}
	if sent != nil {
		op.Old = sent
	}
	return nil, []core.MergedOp{{Op: op, Covers: covers}}
}

// mergeCNATSnatParts is the one value of the parts: the whole part's
// addresses with each family's part's address over its own, the strongest
// policy, and every exclude prefix. A family no part holds gets no
// address (VPP's zero address: cnat source-NATs nothing of that family).
func mergeCNATSnatParts(parts map[CNATSnatPart]*CNATSnatConfig) *CNATSnatConfig {
	m := &CNATSnatConfig{}
	for _, p := range cnatSnatParts {
		c, ok := parts[p]
		if !ok {
			continue
		}
		m.Merged = append(m.Merged, p)
		if p != CNATSnatIPv6 && c.SnatIP4.IsValid() {
			m.SnatIP4 = c.SnatIP4
		}
		if p != CNATSnatIPv4 && c.SnatIP6.IsValid() {
			m.SnatIP6 = c.SnatIP6
		}
		m.Policy = max(m.Policy, c.Policy)
		for _, x := range c.ExcludePrefixes {
			if !slices.Contains(m.ExcludePrefixes, x) {
				m.ExcludePrefixes = append(m.ExcludePrefixes, x)
			}
		}
	}
	slices.SortFunc(m.ExcludePrefixes, comparePrefixes)
	return m
}

// recordCNATSnat makes the merged parts the applied ones and remembers
// what VPP holds now.
func recordCNATSnat(v core.AppliedView, op driverapi.Op) {
	m, ok := op.Item.(*CNATSnatConfig)
	if !ok {
		return
	}
	keys := make([]Key, 0, len(m.Merged))
	for _, p := range m.Merged {
		keys = append(keys, cnatSnatConfigKey(p))
	}
	v.Replace(func(it Item) bool {
		_, ok := it.(*CNATSnatConfig)
		return ok
	}, keys)
	cnatSnatStateOf(v.State()).sent = m
}
