package engine

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
)

// sameList reports whether two owner lists are one list in memory.
func sameList(a, b []string) bool {
	return len(a) > 0 && len(b) > 0 && unsafe.SliceData(a) == unsafe.SliceData(b)
}

// TestStoreSharesOneOwnerLists: the keys of one owner share one owner list;
// a second owner on one key gives that key a list of its own without
// changing the others' (a list is never changed in place), and when the
// second owner lets go the key shares the one-owner list again. A
// ResyncTxn without an index by owner still removes exactly that owner's
// keys.
func TestStoreSharesOneOwnerLists(t *testing.T) {
	s := core.NewStore()
	x, y, z := acl("x", 1), acl("y", 2), acl("z", 3)
	require.NoError(t, s.Commit("a", puts(x, y), false))
	require.NoError(t, s.Commit("b", puts(z), false))
	_, ox, _ := s.Get(x.Key())
	_, oy, _ := s.Get(y.Key())
	_, oz, _ := s.Get(z.Key())
	assert.Equal(t, []string{"a"}, ox)
	assert.True(t, sameList(ox, oy), "the keys of one owner share its list")
	assert.Equal(t, []string{"b"}, oz)

	require.NoError(t, s.Commit("0", puts(x), false)) // sorts before "a"
	_, ox2, _ := s.Get(x.Key())
	_, oy, _ = s.Get(y.Key())
	assert.Equal(t, []string{"0", "a"}, ox2)
	assert.Equal(t, []string{"a"}, oy, "another key's list is not changed")
	assert.Equal(t, []string{"a"}, ox, "nor the list a reader was given before")

	require.NoError(t, s.Commit("a", puts(y), true)) // a lets go of x
	_, ox3, _ := s.Get(x.Key())
	assert.Equal(t, []string{"0"}, ox3)
	assert.Equal(t, []string{"0", "a"}, ox2, "a list a reader holds stays as it was")
	_, oy, _ = s.Get(y.Key())
	assert.True(t, s.OwnedBy(y.Key(), "a"))
	assert.False(t, s.OwnedBy(x.Key(), "a"))
	assert.True(t, s.OwnedBy(z.Key(), "b"), "b's key is untouched by a's resync")

	require.NoError(t, s.Commit("0", nil, true))
	_, _, ok := s.Get(x.Key())
	assert.False(t, ok, "the last owner's resync removes the key")
	assert.Len(t, s.Items, 2)
	_, oy2, _ := s.Get(y.Key())
	assert.True(t, sameList(oy, oy2))
}
