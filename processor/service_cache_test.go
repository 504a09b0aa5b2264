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
	assert.Empty(t, c.entries[a].slices)
	assert.Len(t, c.entries[b].slices, 1)

	// An entry with neither service nor slices disappears once its value is set.
	c.setValue(a, nil)
	assert.NotContains(t, c.entries, a)

	owner, had := c.deleteSlice(key)
	assert.True(t, had)
	assert.Equal(t, b, owner)
	_, had = c.deleteSlice(key)
	assert.False(t, had)
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
	assert.Empty(t, c.entries)
	assert.Zero(t, c.byBackendIP.len())
	assert.Empty(t, c.byBackendIP.v4.more)
}
