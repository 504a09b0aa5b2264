package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
)

// TestStoreEntryKeepsItemAndOwnersTogether: the store keeps a key's item
// and owners in one entry. A second owner of an equal value joins the
// entry; when the first lets go the item, its owners and its external key
// stay with the second; when the last lets go all three go; a new value
// of one owner's key keeps its shared owner list.
func TestStoreEntryKeepsItemAndOwnersTogether(t *testing.T) {
	s := core.NewStore()
	m := static("10.96.0.10:80", "10.1.1.1:8080")
	require.NoError(t, s.Commit("a", puts(m), false))
	require.NoError(t, s.Commit("b", puts(static("10.96.0.10:80", "10.1.1.1:8080")), false))
	it, owners, ok := s.Get(m.Key())
	require.True(t, ok)
	assert.True(t, it.Equal(m))
	assert.Equal(t, []string{"a", "b"}, owners)

	require.NoError(t, s.Commit("a", []core.TxnOp{{Del: m.Key()}}, false))
	it, owners, ok = s.Get(m.Key())
	require.True(t, ok, "b still desires it")
	assert.True(t, it.Equal(m))
	assert.Equal(t, []string{"b"}, owners)
	assert.ErrorIs(t, s.Commit("c", puts(lb("10.96.0.10:80", "10.1.1.1:80", "10.1.1.2:80")), false), vppcfg.ErrConflict,
		"the external key stays held while b holds the mapping")

	require.NoError(t, s.Commit("b", []core.TxnOp{{Del: m.Key()}}, false))
	_, _, ok = s.Get(m.Key())
	assert.False(t, ok)
	assert.Empty(t, s.Items)
	require.NoError(t, s.Commit("c", puts(lb("10.96.0.10:80", "10.1.1.1:80", "10.1.1.2:80")), false),
		"the last owner's delete frees the external key")

	x, x2 := acl("x", 1), acl("x", 2)
	require.NoError(t, s.Commit("a", puts(x, acl("y", 1)), false))
	require.NoError(t, s.Commit("a", puts(x2), false))
	it, ox, _ := s.Get(x.Key())
	_, oy, _ := s.Get(vppcfg.ACLKey("y"))
	assert.True(t, it.Equal(x2), "a new value replaces the old")
	assert.True(t, sameList(ox, oy), "and keeps the owner's shared list")
	assert.Equal(t, []vppcfg.Item{it}, filterACL(s.Desired(), "x"))
}

func filterACL(its []vppcfg.Item, name string) []vppcfg.Item {
	var out []vppcfg.Item
	for _, it := range its {
		if a, ok := it.(*vppcfg.ACL); ok && a.Name == name {
			out = append(out, it)
		}
	}
	return out
}
