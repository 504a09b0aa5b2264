package core

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
)

func extKeys(x extIndex, ext string) []Key {
	var out []Key
	_ = x.each(ext, func(k Key) error { out = append(out, k); return nil })
	return out
}

// TestExtIndex: keys on one external key come back in the order they were
// added, whichever is removed (the first one too), without duplicates; an
// external key whose last key goes leaves nothing behind.
func TestExtIndex(t *testing.T) {
	x := newExtIndex()
	a, b, c := Key{Kind: driverapi.KindACL, Name: "a"}, Key{Kind: driverapi.KindACL, Name: "b"}, Key{Kind: driverapi.KindACL, Name: "c"}
	x.add("e", a)
	x.add("e", a)
	assert.Equal(t, []Key{a}, extKeys(x, "e"))
	assert.Empty(t, x.more, "one key per external key needs no list")
	x.add("e", b)
	x.add("e", c)
	x.add("e", b)
	assert.Equal(t, []Key{a, b, c}, extKeys(x, "e"))
	kept := x.more["e"]

	x.remove("e", b)
	assert.Equal(t, []Key{a, c}, extKeys(x, "e"))
	assert.Equal(t, []Key{b, c}, kept, "a list is not changed in place")
	x.remove("e", a)
	assert.Equal(t, []Key{c}, extKeys(x, "e"), "the next key becomes the first")
	x.remove("e", a)
	assert.Equal(t, []Key{c}, extKeys(x, "e"), "removing an absent key is a no-op")
	x.remove("e", c)
	assert.Empty(t, extKeys(x, "e"))
	assert.Empty(t, x.first)
	assert.Empty(t, x.more)

	x.add("f", a)
	x.add("f", b)
	stop := errors.New("stop")
	var seen []Key
	err := x.each("f", func(k Key) error { seen = append(seen, k); return stop })
	assert.ErrorIs(t, err, stop)
	assert.Equal(t, []Key{a}, seen, "each stops at the first error")
}
