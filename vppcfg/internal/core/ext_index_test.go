package core

import (
	"errors"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
)

func extKeys(x extIndex, ext string) []Key {
	return extKeysHeld(x, ext, func(Key) bool { return false })
}

func extKeysHeld(x extIndex, ext string, holds func(Key) bool) []Key {
	var out []Key
	_ = x.each(ext, holds, func(k Key) error { out = append(out, k); return nil })
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
	err := x.each("f", func(Key) bool { return false }, func(k Key) error { seen = append(seen, k); return stop })
	assert.ErrorIs(t, err, stop)
	assert.Equal(t, []Key{a}, seen, "each stops at the first error")
}

// TestExtIndexNamedKeys: a key named by its external key is not held, only
// its kind; each finds it through the lookup, before the held keys, and
// only where the lookup says the store holds it.
func TestExtIndexNamedKeys(t *testing.T) {
	x := newExtIndex()
	lb := Key{Kind: driverapi.KindNAT44LBMapping, Name: "10.96.0.1:80/TCP"}
	static := Key{Kind: driverapi.KindNAT44StaticMapping, Name: "10.96.0.1:80/TCP"}
	identity := Key{Kind: driverapi.KindNAT44IdentityMapping, Name: "10.96.0.1:80/TCP/vrf0"}
	x.add(lb.Name, lb)
	x.add(static.Name, static)
	x.add(lb.Name, identity)
	assert.Equal(t, map[string]Key{lb.Name: identity}, x.first, "only the key not named by its external key is held")
	held := map[Key]bool{lb: true, static: true}
	holds := func(k Key) bool { return held[k] }
	want := []Key{lb, static, identity}
	slices.SortFunc(want[:2], func(a, b Key) int { return int(a.Kind) - int(b.Kind) })
	assert.Equal(t, want, extKeysHeld(x, lb.Name, holds))

	x.remove(lb.Name, lb)
	delete(held, lb)
	assert.Equal(t, []Key{static, identity}, extKeysHeld(x, lb.Name, holds))
	assert.Empty(t, extKeysHeld(x, "10.96.0.2:80/TCP", holds), "nothing on another external key")
}
