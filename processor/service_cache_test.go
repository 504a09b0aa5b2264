package processor

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/vppsvc/vppsvc/model"
)

func TestServiceCacheSliceOwnership(t *testing.T) {
	c := newServiceCache()
	a := model.ServiceID{Namespace: "default", Name: "a"}
	b := model.ServiceID{Namespace: "default", Name: "b"}
	key := sliceKey{Namespace: "default", Name: "s1"}

	_, moved := c.setSlice(key, a, makeSlice("default", "s1", "a"))
	assert.False(t, moved)
	prev, moved := c.setSlice(key, b, makeSlice("default", "s1", "b"))
	assert.True(t, moved)
	assert.Equal(t, a, prev)
	assert.Nil(t, c.entries.Get(a), "an entry left with neither service, slices nor value goes at once")
	assert.Equal(t, 1, c.entries.Get(b).slices.len())
	old, crossed := c.setValue(a, nil)
	assert.Nil(t, old)
	assert.Empty(t, crossed)
	assert.Nil(t, c.entries.Get(a))

	owner, had := c.deleteSlice(key)
	assert.True(t, had)
	assert.Equal(t, b, owner)
	_, had = c.deleteSlice(key)
	assert.False(t, had)
}

// TestServiceCacheNamedSliceOwners: a slice named after its service
// ("<service>-<suffix>", as the EndpointSlice controller names them) is not
// kept in unnamedOwners, yet its owner is found for a move and a delete,
// among services whose names are prefixes of each other and across
// namespaces.
func TestServiceCacheNamedSliceOwners(t *testing.T) {
	id := func(ns, name string) model.ServiceID { return model.ServiceID{Namespace: ns, Name: name} }
	web, webAPI, other := id("default", "web"), id("default", "web-api"), id("other", "web")
	c := newServiceCache()
	put := func(ns, name string, owner model.ServiceID) (model.ServiceID, bool) {
		return c.setSlice(sliceKey{ns, name}, owner, makeSlice(ns, name, owner.Name))
	}
	owner := func(ns, name string) model.ServiceID {
		t.Helper()
		o, ok := c.ownerOf(sliceKey{ns, name}, model.ServiceID{})
		if !ok {
			return model.ServiceID{}
		}
		return o
	}

	put("default", "web-x1", web)
	put("default", "web-api-x2", webAPI)
	put("other", "web-x1", other)
	put("default", "legacy", web) // not named after its service
	assert.Equal(t, map[sliceKey]model.ServiceID{{"default", "legacy"}: web}, c.unnamedOwners,
		"only the slice not named after its service is kept")
	assert.Equal(t, web, owner("default", "web-x1"))
	assert.Equal(t, webAPI, owner("default", "web-api-x2"), "the longer prefix holds it")
	assert.Equal(t, other, owner("other", "web-x1"), "namespaces apart")
	assert.Equal(t, web, owner("default", "legacy"))
	assert.Equal(t, model.ServiceID{}, owner("default", "web-x9"), "a slice nobody holds")

	// web-x1 relabelled to web-api: it moves, and is kept, not being
	// named after web-api.
	prev, moved := put("default", "web-x1", webAPI)
	assert.True(t, moved)
	assert.Equal(t, web, prev)
	assert.Equal(t, webAPI, owner("default", "web-x1"))
	assert.Contains(t, c.unnamedOwners, sliceKey{"default", "web-x1"})
	assert.Equal(t, 1, c.entries.Get(web).slices.len(), "legacy only")
	// web-api-x2 relabelled to web: named after web as well ("web-…"), so
	// it is found from its name, the longer prefix no longer holding it.
	prev, moved = put("default", "web-api-x2", web)
	assert.True(t, moved)
	assert.Equal(t, webAPI, prev)
	assert.NotContains(t, c.unnamedOwners, sliceKey{"default", "web-api-x2"})
	assert.Equal(t, web, owner("default", "web-api-x2"))
	// and web-x1 back: named after its owner again, it leaves unnamedOwners.
	prev, moved = put("default", "web-x1", web)
	assert.True(t, moved)
	assert.Equal(t, webAPI, prev)
	assert.NotContains(t, c.unnamedOwners, sliceKey{"default", "web-x1"})
	assert.Equal(t, web, owner("default", "web-x1"))

	for _, k := range []sliceKey{{"default", "web-x1"}, {"default", "web-api-x2"}, {"other", "web-x1"}, {"default", "legacy"}} {
		want := owner(k.Namespace, k.Name)
		got, had := c.deleteSlice(k)
		assert.True(t, had, k.String())
		assert.Equal(t, want, got, k.String())
		_, had = c.deleteSlice(k)
		assert.False(t, had, k.String())
	}
	assert.Empty(t, c.unnamedOwners)
	assert.Zero(t, c.entries.Len(), "entries left with nothing go")
}

func TestServiceCacheIndexes(t *testing.T) {
	c := newServiceCache()
	a := model.ServiceID{Namespace: "default", Name: "a"}
	b := model.ServiceID{Namespace: "default", Name: "b"}
	c.setService(makeService("default", "a"))
	c.setService(makeService("default", "b"))
	val := func(id model.ServiceID, nodePort uint16, backends ...model.ServiceBackend) *model.ContivService {
		return &model.ContivService{ID: id, Ports: []model.NamedPort{
			{Name: "http", ServicePort: model.ServicePort{Protocol: model.ProtocolTCP, Port: 80, NodePort: nodePort}, Backends: backends}}}
	}

	_, crossed := c.setValue(a, val(a, 30080, be("10.244.2.1:80"), be("10.244.2.2:80", "zones=zone-a")))
	assert.ElementsMatch(t, []netip.Addr{ip("10.244.2.1"), ip("10.244.2.2")}, crossed)
	_, crossed = c.setValue(b, val(b, 0, be("10.244.2.1:81")))
	assert.Empty(t, crossed, "10.244.2.1 already backed a service")
	assert.Equal(t, 2, c.rendered)
	assert.Contains(t, c.nodePort, a)
	assert.NotContains(t, c.nodePort, b)
	assert.Contains(t, c.hinted, a)
	assert.NotContains(t, c.hinted, b)

	old, crossed := c.setValue(a, val(a, 0, be("10.244.2.1:80")))
	assert.NotNil(t, old)
	assert.Equal(t, []netip.Addr{ip("10.244.2.2")}, crossed)
	assert.NotContains(t, c.nodePort, a)
	assert.NotContains(t, c.hinted, a)

	c.deleteService(a)
	_, crossed = c.setValue(a, nil)
	assert.Empty(t, crossed, "b still uses 10.244.2.1")
	assert.True(t, c.isBackend(ip("10.244.2.1")))
	c.deleteService(b)
	_, crossed = c.setValue(b, nil)
	assert.Equal(t, []netip.Addr{ip("10.244.2.1")}, crossed)
	assert.False(t, c.isBackend(ip("10.244.2.1")))
	assert.Zero(t, c.rendered)
	assert.Zero(t, c.entries.Len())
	assert.Zero(t, c.byBackendIP.len())
	assert.Empty(t, c.byBackendIP.v4.more)
}

// TestServiceCacheEntryLifetime: an entry is found by its ID while it holds
// a Service, a value or a slice (the map knows it by what it holds), and
// goes when the last of them goes, whichever that is.
func TestServiceCacheEntryLifetime(t *testing.T) {
	a := model.ServiceID{Namespace: "default", Name: "a"}
	val := &model.ContivService{ID: a}
	key := sliceKey{Namespace: "default", Name: "a-1"}
	c := newServiceCache()

	c.setService(makeService("default", "a"))
	c.setValue(a, val)
	c.setSlice(key, a, makeSlice("default", "a-1", "a"))
	c.deleteService(a)
	assert.NotNil(t, c.entries.Get(a), "value and slice")
	c.deleteSlice(key)
	assert.Same(t, val, c.entries.Get(a).value, "the value alone")
	old, _ := c.setValue(a, nil)
	assert.Same(t, val, old)
	assert.Nil(t, c.entries.Get(a))
	assert.Zero(t, c.entries.Len())

	c.setSlice(key, a, makeSlice("default", "a-1", "a"))
	assert.Equal(t, 1, c.entries.Get(a).slices.len(), "a slice alone")
	c.setService(makeService("default", "a"))
	c.deleteSlice(key)
	assert.NotNil(t, c.entries.Get(a), "the Service alone")
	c.deleteService(a)
	assert.Zero(t, c.entries.Len())
}
