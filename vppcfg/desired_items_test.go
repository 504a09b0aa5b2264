package vppcfg

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStoreEntryKeepsItemAndOwnersTogether: the store keeps a key's item
// and owners in one entry. A second owner of an equal value joins the
// entry; when the first lets go the item, its owners and its external key
// stay with the second; when the last lets go all three go; a new value
// of one owner's key keeps its shared owner list.
func TestStoreEntryKeepsItemAndOwnersTogether(t *testing.T) {
	s := newStore()
	m := static("10.96.0.10:80", "10.1.1.1:8080")
	require.NoError(t, s.commit("a", puts(m), false))
	require.NoError(t, s.commit("b", puts(static("10.96.0.10:80", "10.1.1.1:8080")), false))
	it, owners, ok := s.get(m.Key())
	require.True(t, ok)
	assert.True(t, it.Equal(m))
	assert.Equal(t, []string{"a", "b"}, owners)

	require.NoError(t, s.commit("a", []txnOp{{del: m.Key()}}, false))
	it, owners, ok = s.get(m.Key())
	require.True(t, ok, "b still desires it")
	assert.True(t, it.Equal(m))
	assert.Equal(t, []string{"b"}, owners)
	assert.ErrorIs(t, s.commit("c", puts(lb("10.96.0.10:80", "10.1.1.1:80", "10.1.1.2:80")), false), ErrConflict,
		"the external key stays held while b holds the mapping")

	require.NoError(t, s.commit("b", []txnOp{{del: m.Key()}}, false))
	_, _, ok = s.get(m.Key())
	assert.False(t, ok)
	assert.Empty(t, s.items)
	require.NoError(t, s.commit("c", puts(lb("10.96.0.10:80", "10.1.1.1:80", "10.1.1.2:80")), false),
		"the last owner's delete frees the external key")

	x, x2 := acl("x", 1), acl("x", 2)
	require.NoError(t, s.commit("a", puts(x, acl("y", 1)), false))
	require.NoError(t, s.commit("a", puts(x2), false))
	it, ox, _ := s.get(x.Key())
	_, oy, _ := s.get(ACLKey("y"))
	assert.True(t, it.Equal(x2), "a new value replaces the old")
	assert.True(t, sameList(ox, oy), "and keeps the owner's shared list")
	assert.Equal(t, []Item{it}, filterACL(s.desired(), "x"))
}

func filterACL(its []Item, name string) []Item {
	var out []Item
	for _, it := range its {
		if a, ok := it.(*ACL); ok && a.Name == name {
			out = append(out, it)
		}
	}
	return out
}
