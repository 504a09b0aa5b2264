package core_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
)

// Every key of a sole owner shares that owner's one list; a key that gains
// an owner gets a list of its own, sorted, and the others keep theirs.
func TestOwnersAreSharedAndNeverChanged(t *testing.T) {
	s := core.NewStore()
	a, b := &vppcfg.ACL{Name: "a"}, &vppcfg.ACL{Name: "b"}
	s.Hold(a.Key(), "nat44", a)
	s.Hold(b.Key(), "nat44", b)
	la, lb := s.Items[a.Key()].Owners.Names(), s.Items[b.Key()].Owners.Names()
	assert.Equal(t, []string{"nat44"}, la)
	assert.Same(t, &la[0], &lb[0], "one list for every key of a sole owner")

	s.Hold(b.Key(), "ipv6", b)
	assert.Equal(t, []string{"ipv6", "nat44"}, s.Items[b.Key()].Owners.Names())
	assert.Equal(t, []string{"nat44"}, s.Items[a.Key()].Owners.Names(), "the shared list is not changed")
	assert.True(t, s.Items[b.Key()].Owners.Has("ipv6"))
	assert.Equal(t, "ipv6", s.Items[b.Key()].Owners.First())

	s.Release(b.Key(), "ipv6")
	lb = s.Items[b.Key()].Owners.Names()
	assert.Same(t, &la[0], &lb[0], "back to the sole owner's list")
	assert.Equal(t, 0, core.Owners{}.Len())
	assert.Empty(t, core.Owners{}.First())
}
