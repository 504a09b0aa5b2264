package engine

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/internal/acllists"
	"github.com/vppsvc/vppsvc/vppcfg/vppcfgtest"
)

func TestDiff(t *testing.T) {
	ifs := map[string]uint32{"tap0": 1, "tap1": 2, "eth0": 3}
	tap0in := &vppcfg.NAT44Interface{Interface: "tap0", Role: vppcfg.NAT44Inside}
	pool := &vppcfg.NAT44Address{Addr: addr("1.1.1.1"), VRF: vppcfg.AnyVRF}
	lbABC := lb("10.96.0.10:80", "10.1.1.1:8080", "10.1.1.2:8080", "10.1.1.3:8080")
	tests := []struct {
		name        string
		desired     map[vppcfg.Key]vppcfg.Item
		applied     map[vppcfg.Key]appliedEntry
		ifaces      map[string]uint32
		aclOrder    map[string]acllists.Names
		foreign     map[vppcfg.Key]vppcfg.Item
		resynced    map[string]bool
		want        []string
		wantPending map[vppcfg.Key]string
		wantBlocked []vppcfg.Key
		natReset    bool
	}{
		{
			name:    "cold start creates in kind order",
			desired: items(binding("tap0", vppcfg.ACLInput, "a", 0), acl("a", 80), lbABC, tap0in, pool, global),
			want: []string{
				"create nat44-global/global",
				"create nat44-address/pool/1.1.1.1",
				"create nat44-interface/tap0/in",
				"create nat44-lb-mapping/10.96.0.10:80/tcp",
				"create acl/a",
				"set-acls tap0 in=[a] out=[]",
			},
		},
		{
			name:     "removing everything deletes in reverse kind order, NAT44 disabled last",
			applied:  applied(binding("tap0", vppcfg.ACLInput, "a", 0), acl("a", 80), lbABC, tap0in, pool, global),
			aclOrder: map[string]acllists.Names{"tap0": {Input: []string{"a"}}},
			want: []string{
				"set-acls tap0 in=[] out=[]",
				"delete acl/a",
				"delete nat44-lb-mapping/10.96.0.10:80/tcp",
				"delete nat44-interface/tap0/in",
				"delete nat44-address/pool/1.1.1.1",
				"delete nat44-global/global",
			},
		},
		{
			name:    "equal state makes no op",
			desired: items(global, lbABC),
			applied: applied(&vppcfg.NAT44Global{SessionLimit: 64512, Timeouts: vppcfg.NAT44Timeouts{UDP: 300, TCPEstablished: 7440, TCPTransitory: 240, ICMP: 60}}, lbABC),
			want:    []string{},
		},
		{
			name:    "LB local set changes one local at a time, adds before deletes",
			desired: items(global, lb("10.96.0.10:80", "10.1.1.1:8080", "10.1.1.3:8080", "10.1.1.4:8080")),
			applied: applied(global, lbABC),
			want: []string{
				"add-local nat44-lb-mapping/10.96.0.10:80/tcp 10.1.1.4:8080",
				"del-local nat44-lb-mapping/10.96.0.10:80/tcp 10.1.1.2:8080",
			},
		},
		{
			name:    "LB of one local is padded with the placeholder: no op when VPP holds both",
			desired: items(global, lb("10.96.0.10:80", "10.1.1.1:8080")),
			applied: applied(global, lb("10.96.0.10:80", "0.0.0.0:80@0", "10.1.1.1:8080")),
			want:    []string{},
		},
		{
			name:    "LB one local to two: the new local in, then the placeholder out",
			desired: items(global, lb("10.96.0.10:80", "10.1.1.1:8080", "10.1.1.2:8080")),
			applied: applied(global, lb("10.96.0.10:80", "0.0.0.0:80@0", "10.1.1.1:8080")),
			want: []string{
				"add-local nat44-lb-mapping/10.96.0.10:80/tcp 10.1.1.2:8080",
				"del-local nat44-lb-mapping/10.96.0.10:80/tcp 0.0.0.0:80",
			},
		},
		{
			name:    "LB two locals to one: the placeholder in, then the gone local out",
			desired: items(global, lb("10.96.0.10:80", "10.1.1.1:8080")),
			applied: applied(global, lb("10.96.0.10:80", "10.1.1.1:8080", "10.1.1.2:8080")),
			want: []string{
				"add-local nat44-lb-mapping/10.96.0.10:80/tcp 0.0.0.0:80",
				"del-local nat44-lb-mapping/10.96.0.10:80/tcp 10.1.1.2:8080",
			},
		},
		{
			name: "LB with affinity, one local to two: in place (no record points at the placeholder)",
			desired: items(global, func() vppcfg.Item {
				m := lb("10.96.0.10:80", "10.1.1.1:8080", "10.1.1.2:8080")
				m.Affinity = 10
				return m
			}()),
			applied: applied(global, func() vppcfg.Item {
				m := lb("10.96.0.10:80", "0.0.0.0:80@0", "10.1.1.1:8080")
				m.Affinity = 10
				return m
			}()),
			want: []string{
				"add-local nat44-lb-mapping/10.96.0.10:80/tcp 10.1.1.2:8080",
				"del-local nat44-lb-mapping/10.96.0.10:80/tcp 0.0.0.0:80",
			},
		},
		{
			name:    "LB weight change with 3 locals is del+add of that local",
			desired: items(global, lb("10.96.0.10:80", "10.1.1.1:8080", "10.1.1.2:8080@50", "10.1.1.3:8080")),
			applied: applied(global, lbABC),
			want: []string{
				"del-local nat44-lb-mapping/10.96.0.10:80/tcp 10.1.1.2:8080",
				"add-local nat44-lb-mapping/10.96.0.10:80/tcp 10.1.1.2:8080",
			},
		},
		{
			name:    "LB weight change with 2 locals recreates",
			desired: items(global, lb("10.96.0.10:80", "10.1.1.1:8080", "10.1.1.2:8080@50")),
			applied: applied(global, lb("10.96.0.10:80", "10.1.1.1:8080", "10.1.1.2:8080")),
			want: []string{
				"delete nat44-lb-mapping/10.96.0.10:80/tcp",
				"create nat44-lb-mapping/10.96.0.10:80/tcp",
			},
		},
		{
			name:    "LB weight change with 2 locals plus a new one goes in place",
			desired: items(global, lb("10.96.0.10:80", "10.1.1.1:8080", "10.1.1.2:8080@50", "10.1.1.3:8080")),
			applied: applied(global, lb("10.96.0.10:80", "10.1.1.1:8080", "10.1.1.2:8080")),
			want: []string{
				"add-local nat44-lb-mapping/10.96.0.10:80/tcp 10.1.1.3:8080",
				"del-local nat44-lb-mapping/10.96.0.10:80/tcp 10.1.1.2:8080",
				"add-local nat44-lb-mapping/10.96.0.10:80/tcp 10.1.1.2:8080",
			},
		},
		{
			name: "LB affinity change recreates",
			desired: items(global, func() vppcfg.Item {
				m := lb("10.96.0.10:80", "10.1.1.1:8080", "10.1.1.2:8080")
				m.Affinity = 10
				return m
			}()),
			applied: applied(global, lb("10.96.0.10:80", "10.1.1.1:8080", "10.1.1.2:8080")),
			want: []string{
				"delete nat44-lb-mapping/10.96.0.10:80/tcp",
				"create nat44-lb-mapping/10.96.0.10:80/tcp",
			},
		},
		{
			name:    "static to LB for one external key deletes first",
			desired: items(global, lb("10.96.0.10:80", "10.1.1.1:8080", "10.1.1.2:8080")),
			applied: applied(global, static("10.96.0.10:80", "10.1.1.1:8080")),
			want: []string{
				"delete nat44-static-mapping/10.96.0.10:80/tcp",
				"create nat44-lb-mapping/10.96.0.10:80/tcp",
			},
		},
		{
			name:    "LB to static for one external key deletes first",
			desired: items(global, static("10.96.0.10:80", "10.1.1.1:8080")),
			applied: applied(global, lb("10.96.0.10:80", "10.1.1.1:8080", "10.1.1.2:8080")),
			want: []string{
				"delete nat44-lb-mapping/10.96.0.10:80/tcp",
				"create nat44-static-mapping/10.96.0.10:80/tcp",
			},
		},
		{
			name:    "static mapping change recreates",
			desired: items(global, static("10.96.0.10:80", "10.1.1.2:8080")),
			applied: applied(global, static("10.96.0.10:80", "10.1.1.1:8080")),
			want: []string{
				"delete nat44-static-mapping/10.96.0.10:80/tcp",
				"create nat44-static-mapping/10.96.0.10:80/tcp",
			},
		},
		{
			name:     "ACL rules replaced in place",
			desired:  items(acl("a", 80, 443), binding("tap0", vppcfg.ACLInput, "a", 0)),
			applied:  applied(acl("a", 80), binding("tap0", vppcfg.ACLInput, "a", 0)),
			aclOrder: map[string]acllists.Names{"tap0": {Input: []string{"a"}}},
			want:     []string{"update acl/a"},
		},
		{
			name:    "cnat path change updates in place",
			desired: items(cnat("10.96.0.20:80", vppcfg.CNATLBDefault, "10.1.1.2:8080", "10.1.1.3:8080")),
			applied: applied(cnat("10.96.0.20:80", vppcfg.CNATLBDefault, "10.1.1.1:8080", "10.1.1.2:8080")),
			want:    []string{"update cnat-translation/10.96.0.20:80/tcp"},
		},
		{
			name:    "cnat LB type change recreates",
			desired: items(cnat("10.96.0.20:80", vppcfg.CNATLBMaglev, "10.1.1.1:8080")),
			applied: applied(cnat("10.96.0.20:80", vppcfg.CNATLBDefault, "10.1.1.1:8080")),
			want: []string{
				"delete cnat-translation/10.96.0.20:80/tcp",
				"create cnat-translation/10.96.0.20:80/tcp",
			},
		},
		{
			name:        "interface-bound item waits for its interface",
			desired:     items(global, &vppcfg.NAT44Interface{Interface: "tap9", Role: vppcfg.NAT44Inside}),
			applied:     applied(global),
			want:        []string{},
			wantPending: map[vppcfg.Key]string{vppcfgtest.NAT44InterfaceKey("tap9", vppcfg.NAT44Inside): `interface "tap9" not found`},
		},
		{
			name:        "NAT44 items wait for a nat44-global item",
			desired:     items(pool),
			want:        []string{},
			wantPending: map[vppcfg.Key]string{pool.Key(): "NAT44 is not enabled (no nat44-global item)"},
		},
		{
			name:        "NAT44 stays enabled while NAT44 items remain",
			desired:     items(pool),
			applied:     applied(global, pool),
			want:        []string{},
			wantPending: map[vppcfg.Key]string{vppcfg.NAT44GlobalKey(): "kept: nat44-address/pool/1.1.1.1 needs it and is still desired"},
		},
		{
			name:     "NAT44 VRF change re-enables and re-creates all NAT44 items",
			desired:  items(&vppcfg.NAT44Global{InsideVRF: 1}, pool, lbABC, acl("a", 80)),
			applied:  applied(global, pool, lbABC, acl("a", 80)),
			natReset: true,
			want: []string{
				"delete nat44-global/global",
				"create nat44-global/global",
				"create nat44-address/pool/1.1.1.1",
				"create nat44-lb-mapping/10.96.0.10:80/tcp",
			},
		},
		{
			name:    "NAT44 forwarding change updates in place",
			desired: items(&vppcfg.NAT44Global{Forwarding: true}),
			applied: applied(global),
			want:    []string{"update nat44-global/global"},
		},
		{
			name:    "pool address VRF change recreates",
			desired: items(global, &vppcfg.NAT44Address{Addr: addr("1.1.1.1"), VRF: 0}),
			applied: applied(global, pool),
			want: []string{
				"delete nat44-address/pool/1.1.1.1",
				"create nat44-address/pool/1.1.1.1",
			},
		},
		{
			name: "ACL bindings of all owners merge by priority then name; foreign stay in front",
			desired: items(acl("a", 80), acl("b", 81), acl("permit-all"),
				binding("tap0", vppcfg.ACLInput, "b", 10), binding("tap0", vppcfg.ACLInput, "a", 10),
				binding("tap0", vppcfg.ACLInput, "permit-all", 1000), binding("tap0", vppcfg.ACLOutput, "b", 0)),
			applied:  applied(acl("a", 80), acl("b", 81), acl("permit-all")),
			aclOrder: map[string]acllists.Names{},
			want:     []string{"set-acls tap0 in=[a,b,permit-all] out=[b]"},
		},
		{
			name:    "binding of a removed ACL goes before the ACL; a new ACL before its binding",
			desired: items(acl("b", 81), binding("tap0", vppcfg.ACLInput, "b", 0)),
			applied: func() map[vppcfg.Key]appliedEntry {
				m := applied(acl("a", 80), binding("tap0", vppcfg.ACLInput, "a", 0))
				return m
			}(),
			aclOrder: map[string]acllists.Names{"tap0": {Input: []string{"a"}}},
			want: []string{
				"set-acls tap0 in=[] out=[]",
				"delete acl/a",
				"create acl/b",
				"set-acls tap0 in=[b] out=[]",
			},
		},
		{
			name:     "binding priority change reorders",
			desired:  items(acl("a"), acl("b"), binding("tap0", vppcfg.ACLInput, "a", 5), binding("tap0", vppcfg.ACLInput, "b", 1)),
			applied:  applied(acl("a"), acl("b"), binding("tap0", vppcfg.ACLInput, "a", 0), binding("tap0", vppcfg.ACLInput, "b", 1)),
			aclOrder: map[string]acllists.Names{"tap0": {Input: []string{"a", "b"}}},
			want:     []string{"set-acls tap0 in=[b,a] out=[]"},
		},
		{
			name:        "binding waits for its ACL",
			desired:     items(binding("tap0", vppcfg.ACLInput, "nope", 0)),
			want:        []string{},
			wantPending: map[vppcfg.Key]string{vppcfgtest.ACLBindingKey("tap0", vppcfg.ACLInput, "nope"): `waiting for acl "nope"`},
		},
		{
			name:    "orphan of an owner that has not resynced is kept",
			desired: items(global),
			applied: map[vppcfg.Key]appliedEntry{
				global.Key(): {Item: global, Owner: newOwnerRef("a")},
				lbABC.Key():  {Item: lbABC, Owner: newOwnerRef("b"), Orphan: true},
			},
			want:        []string{},
			wantPending: map[vppcfg.Key]string{lbABC.Key(): `kept: not desired, but owner "b" has not resynced`},
		},
		{
			// An agent restart: owner a resynced first; b's bindings, still in
			// VPP ahead of the shared permit-all, must not be moved behind it.
			name: "bindings of an owner that has not resynced keep their place",
			desired: items(acl("a1", 80), acl("zz", 81), binding("tap0", vppcfg.ACLInput, "a1", 10),
				binding("tap0", vppcfg.ACLInput, "zz", 1000)),
			applied: map[vppcfg.Key]appliedEntry{
				vppcfg.ACLKey("a1"): {Item: acl("a1", 80), Owner: newOwnerRef("a")},
				vppcfg.ACLKey("b1"): {Item: acl("b1", 82), Owner: newOwnerRef("b"), Orphan: true},
				vppcfg.ACLKey("zz"): {Item: acl("zz", 81), Owner: newOwnerRef("a")},
				vppcfgtest.ACLBindingKey("tap0", vppcfg.ACLInput, "a1"): {Item: binding("tap0", vppcfg.ACLInput, "a1", 10), Owner: newOwnerRef("a")},
				vppcfgtest.ACLBindingKey("tap0", vppcfg.ACLInput, "b1"): {Item: binding("tap0", vppcfg.ACLInput, "b1", 0), Owner: newOwnerRef("b"), Orphan: true},
				vppcfgtest.ACLBindingKey("tap0", vppcfg.ACLInput, "zz"): {Item: binding("tap0", vppcfg.ACLInput, "zz", 1000), Owner: newOwnerRef("a")},
			},
			aclOrder: map[string]acllists.Names{"tap0": {Input: []string{"a1", "b1", "zz"}}},
			want:     []string{},
		},
		{
			name:    "orphan of a resynced owner is deleted",
			desired: items(global),
			applied: map[vppcfg.Key]appliedEntry{
				global.Key(): {Item: global, Owner: newOwnerRef("a")},
				lbABC.Key():  {Item: lbABC, Owner: newOwnerRef("b"), Orphan: true},
			},
			resynced: map[string]bool{"b": true},
			want:     []string{"delete nat44-lb-mapping/10.96.0.10:80/tcp"},
		},
		{
			name:        "foreign object at the external key blocks the item",
			desired:     items(global, lbABC),
			applied:     applied(global),
			foreign:     items(static("10.96.0.10:80", "10.9.9.9:80")),
			want:        []string{},
			wantBlocked: []vppcfg.Key{lbABC.Key()},
		},
		{
			name:    "bound item of a vanished interface is not deleted through VPP",
			applied: applied(global, &vppcfg.NAT44Interface{Interface: "tap9", Role: vppcfg.NAT44Inside}),
			desired: items(global),
			want:    []string{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := diffInput{Desired: desiredOf(tc.desired), Applied: tc.applied, Interfaces: tc.ifaces,
				Foreign: tc.foreign, Resynced: tc.resynced,
				Merged: mergedStates{vppcfg.KindACLBinding: &acllists.Lists{Front: map[string]acllists.Indexes{}, Order: tc.aclOrder}}}
			if in.Applied == nil {
				in.Applied = map[vppcfg.Key]appliedEntry{}
			}
			if in.Interfaces == nil {
				in.Interfaces = ifs
			}
			p := planOps(in)
			assert.Equal(t, tc.want, opStrings(p.Ops))
			for k, reason := range tc.wantPending {
				assert.Equal(t, reason, p.Pending[k], "pending reason of %s", k)
			}
			for _, k := range tc.wantBlocked {
				assert.Error(t, p.Blocked[k], "blocked %s", k)
			}
			assert.Equal(t, tc.natReset, p.Reset[vppcfg.KindNAT44Global])

			// An incremental diff scoped to every key plans the same.
			in.Scope = map[vppcfg.Key]bool{}
			for k := range in.Desired {
				in.Scope[k] = true
			}
			for k := range in.Applied {
				in.Scope[k] = true
			}
			assert.Equal(t, tc.want, opStrings(planOps(in).Ops), "scoped")

			// With the reconciler's binding indexes, instead of walks of
			// every item, it plans the same too.
			in.DesiredBindings, in.AppliedBindings = map[vppcfg.Key]bool{}, map[vppcfg.Key]bool{}
			for k := range in.Desired {
				if k.Kind == vppcfg.KindACLBinding {
					in.DesiredBindings[k] = true
				}
			}
			for k := range in.Applied {
				if k.Kind == vppcfg.KindACLBinding {
					in.AppliedBindings[k] = true
				}
			}
			assert.Equal(t, tc.want, opStrings(planOps(in).Ops), "scoped, with binding indexes")
		})
	}
}

// TestDiffIsPure checks Diff does not modify its input.
func TestDiffIsPure(t *testing.T) {
	old := lb("10.96.0.10:80", "10.1.1.1:8080", "10.1.1.2:8080", "10.1.1.3:8080")
	in := diffInput{
		Desired:    desiredOf(items(global, lb("10.96.0.10:80", "10.1.1.1:8080", "10.1.1.4:8080"))),
		Applied:    applied(global, old),
		Interfaces: map[string]uint32{},
	}
	before := old.String()
	p1, p2 := planOps(in), planOps(in)
	assert.Equal(t, opStrings(p1.Ops), opStrings(p2.Ops))
	assert.Equal(t, before, old.String())
	assert.Len(t, in.Applied, 2)
}

// BenchmarkDiffSteadyState measures the diff every commit runs: 20,000 LB
// mappings of 10 locals, desired equal to applied except one mapping that
// loses 8 locals; full and scoped to the changed key.
func BenchmarkDiffSteadyState(b *testing.B) {
	desired, applied := map[vppcfg.Key]vppcfg.Item{global.Key(): global}, map[vppcfg.Key]appliedEntry{global.Key(): {Item: global}}
	for i := range 20000 {
		var locals []string
		for j := range 10 {
			locals = append(locals, fmt.Sprintf("10.1.%d.%d:8080", j, 1+i%250))
		}
		m := lb(fmt.Sprintf("10.96.%d.%d:80", i>>8, i&255), locals...)
		desired[m.Key()] = m
		applied[m.Key()] = appliedEntry{Item: m}
	}
	changed := lb("10.96.0.1:80", "10.1.0.2:8080", "10.1.1.2:8080")
	desired[changed.Key()] = changed
	for _, scoped := range []bool{false, true} {
		in := diffInput{Desired: desiredOf(desired), Applied: applied, Interfaces: map[string]uint32{}}
		if scoped {
			in.Scope = map[vppcfg.Key]bool{changed.Key(): true}
		}
		b.Run(fmt.Sprintf("scoped=%t", scoped), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if p := planOps(in); len(p.Ops) != 8 {
					b.Fatalf("ops %v", opStrings(p.Ops))
				}
			}
		})
	}
}

// OrphanOwners lets a diff skip the walk over applied items for external
// keys held by not-yet-resynced owners, once none such can exist.
func TestDiffOrphanOwnersHint(t *testing.T) {
	held := lb("10.96.0.10:80", "10.1.1.1:8080", "10.1.1.2:8080")
	mine := static("10.96.0.10:80", "10.1.1.9:8080")
	in := func(owners map[string]bool, resynced map[string]bool) diffInput {
		return diffInput{
			Desired:      desiredOf(items(global, mine)),
			Applied:      map[vppcfg.Key]appliedEntry{global.Key(): {Item: global, Owner: newOwnerRef("a")}, held.Key(): {Item: held, Owner: newOwnerRef("b"), Orphan: true}},
			Interfaces:   map[string]uint32{},
			Resynced:     resynced,
			OrphanOwners: owners,
		}
	}
	for _, tc := range []struct {
		name        string
		owners      map[string]bool
		resynced    map[string]bool
		wantBlocked bool
	}{
		{name: "hint unknown: walk applied", owners: nil, wantBlocked: true},
		{name: "orphan owner has not resynced: walk applied", owners: map[string]bool{"b": true}, wantBlocked: true},
		{name: "orphan owner resynced: the orphan goes, nothing is held", owners: map[string]bool{"b": true}, resynced: map[string]bool{"b": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := planOps(in(tc.owners, tc.resynced))
			_, blocked := p.Blocked[mine.Key()]
			assert.Equal(t, tc.wantBlocked, blocked)
		})
	}
}
