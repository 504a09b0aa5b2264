package processor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// TestSliceSet: slices come and go by name, from none to one (inline) to
// several (a list) and back, a slice of a known name replaces the old one.
func TestSliceSet(t *testing.T) {
	var s sliceSet
	names := func() []string {
		var buf [1]*discoveryv1.EndpointSlice
		var out []string
		for _, x := range s.list(&buf) {
			out = append(out, x.Name)
		}
		return out
	}
	assert.Zero(t, s.len())
	assert.Nil(t, s.first())
	assert.Empty(t, names())

	a := makeSlice("default", "a", "svc")
	s.set(a)
	assert.Equal(t, []string{"a"}, names())
	assert.Nil(t, s.many, "one slice is held inline")
	a2 := makeSlice("default", "a", "svc")
	s.set(a2)
	assert.Same(t, a2, s.first(), "a slice of the same name replaces it")
	assert.Equal(t, 1, s.len())

	s.set(makeSlice("default", "b", "svc"))
	s.set(makeSlice("default", "c", "svc"))
	b2 := makeSlice("default", "b", "svc")
	s.set(b2)
	assert.ElementsMatch(t, []string{"a", "b", "c"}, names())
	assert.True(t, s.has("b"))
	assert.False(t, s.has("d"))
	s.delete("d")
	assert.Equal(t, 3, s.len())

	s.delete("a")
	s.delete("c")
	assert.Equal(t, []string{"b"}, names())
	assert.Nil(t, s.many, "back to inline")
	assert.Same(t, b2, s.first())
	s.delete("b")
	assert.Zero(t, s.len())
	assert.False(t, s.has("b"))
}
