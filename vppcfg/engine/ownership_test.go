package engine

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
	"github.com/vppsvc/vppsvc/vppcfg/internal/acllists"
	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
	"github.com/vppsvc/vppsvc/vppcfg/vppcfgtest"
)

func TestTag(t *testing.T) {
	assert.Equal(t, "vppsvc:nat44:default/web", core.Tag("nat44", "default/web"))
	label := "some-namespace-with-a-long-name/a-service-with-an-even-longer-name:http"
	long := core.Tag("nat44", label)
	assert.Len(t, long, core.MaxTagLen)
	assert.Contains(t, long, "~")
	assert.NotEqual(t, long, core.Tag("nat44", label+"s"), "labels differing after the cut must still get different tags")
	assert.Equal(t, long, core.Tag("nat44", label), "deterministic")
	owner, parsed, ok := core.ParseTag(long)
	assert.True(t, ok)
	assert.Equal(t, "nat44", owner)
	assert.True(t, strings.HasPrefix(label, parsed[:len(parsed)-9]))

	owner, parsed, ok = core.ParseTag("vppsvc:nat44:default/web")
	assert.True(t, ok)
	assert.Equal(t, "nat44", owner)
	assert.Equal(t, "default/web", parsed)
	for _, foreign := range []string{"", "calico:foo", "vppsvc:", "vppsvc:nocolon"} {
		_, _, ok = core.ParseTag(foreign)
		assert.False(t, ok, foreign)
	}
	utf := core.Tag("o", strings.Repeat("ünïcödé-", 10))
	assert.LessOrEqual(t, len(utf), core.MaxTagLen)
	assert.NotContains(t, utf, "\uFFFD", "multi-byte runes are never cut in half")
	assert.False(t, strings.ContainsRune(strings.ToValidUTF8(utf, "\uFFFD"), '\uFFFD'))
}

func TestValidateOwner(t *testing.T) {
	assert.NoError(t, core.ValidateOwner("nat44"))
	for _, bad := range []string{"", "a:b", "a b", strings.Repeat("x", vppcfg.MaxOwnerLen+1)} {
		assert.Error(t, core.ValidateOwner(bad), bad)
	}
}

// TestClassify maps a dump back to owners: ours by tag (also shortened
// tags, matched against the tags of the desired state), foreign tags,
// untagged objects desired, claimed or left alone, and ACL lists.
func TestClassify(t *testing.T) {
	s := core.NewStore()
	longName := strings.Repeat("long-acl-name-", 6)
	desiredLB := lb("10.96.0.10:80", "10.1.1.1:80", "10.1.1.2:80")
	require.NoError(t, s.Commit("nat44", []core.TxnOp{{Put: desiredLB}, {Put: acl(longName)}, {Put: global},
		{Put: binding("tap0", vppcfg.ACLInput, longName, 7)}}, true))

	orphanLB := lb("10.96.0.11:80", "10.1.1.1:80", "10.1.1.2:80")
	foreignLB := lb("10.97.0.1:80", "10.1.1.1:80", "10.1.1.2:80")
	claimed := cnat("10.96.5.5:80", vppcfg.CNATLBDefault, "10.1.1.9:80")
	stray := cnat("192.168.1.1:80", vppcfg.CNATLBDefault, "10.1.1.9:80")
	st := &driverapi.State{
		Interfaces: map[string]uint32{"tap0": 1},
		Objects: []driverapi.Observed{
			// Listed first: the lists are read once the ACLs are known.
			{Item: &driverapi.ACLAssignment{Interface: "tap0", InputIndexes: []uint32{9, 4}}},
			{Item: core.WithLabel(desiredLB, ""), Tag: core.Tag("nat44", "svc")},
			{Item: core.WithLabel(orphanLB, ""), Tag: core.Tag("ipv6", "old-svc")},
			{Item: core.WithLabel(foreignLB, ""), Tag: "calico:x"},
			{Item: &vppcfg.ACL{}, Tag: core.Tag("nat44", longName), Handle: 4},
			{Item: &vppcfg.ACL{}, Tag: "", Handle: 9},
			{Item: &vppcfg.NAT44Global{SessionLimit: 64512}},
			{Item: claimed, Handle: 1},
			{Item: stray, Handle: 2},
		},
	}
	c := classify(st, viewOf(s), map[string]vppcfg.UntaggedClaimFunc{"ipv6": func(it vppcfg.Item) bool {
		tr, ok := it.(*vppcfg.CNATTranslation)
		return ok && pfx("10.96.0.0/16").Contains(tr.VIP.Addr())
	}})

	a := c.applied[desiredLB.Key()]
	require.NotNil(t, a)
	assert.True(t, desiredLB.Equal(a.Item), "label recovered from the tag")
	assert.Equal(t, "nat44", a.Owner.String())
	assert.False(t, a.Orphan)

	o := c.applied[orphanLB.Key()]
	require.NotNil(t, o)
	assert.Equal(t, "ipv6", o.Owner.String())
	assert.True(t, o.Orphan)
	assert.Equal(t, "old-svc", o.Item.(*vppcfg.NAT44LBMapping).Label)

	assert.Contains(t, c.foreign, foreignLB.Key())
	assert.NotContains(t, c.applied, foreignLB.Key())

	acl := c.applied[vppcfg.ACLKey(longName)]
	require.NotNil(t, acl, "a shortened tag is matched against the desired ACLs' tags")
	assert.Equal(t, uint32(4), acl.Handle)
	lists := c.merged[vppcfg.KindACLBinding].(*acllists.Lists)
	assert.Equal(t, acllists.Indexes{Input: []uint32{9}}, lists.Front["tap0"], "the untagged ACL is foreign and stays in front")
	assert.Equal(t, acllists.Names{Input: []string{longName}}, lists.Order["tap0"])
	b := c.applied[vppcfgtest.ACLBindingKey("tap0", vppcfg.ACLInput, longName)]
	require.NotNil(t, b)
	assert.Equal(t, int32(7), b.Item.(*vppcfg.ACLBinding).Priority, "VPP keeps no priority: taken from the desired binding")

	assert.Equal(t, "nat44", c.applied[vppcfg.NAT44GlobalKey()].Owner.String(), "an untagged object at a desired key is adopted")
	assert.True(t, c.applied[claimed.Key()].Orphan)
	assert.Equal(t, "ipv6", c.applied[claimed.Key()].Owner.String(), "claimed by predicate")
	assert.Contains(t, c.unowned, stray.Key(), "unclaimed untagged objects are left alone")
}
