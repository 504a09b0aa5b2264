package processor

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/vppsvc/vppsvc/model"
)

func TestBackendIndexSharedIP(t *testing.T) {
	x := newBackendIndex(0, 0)
	entry := func(name string) *serviceEntry {
		return &serviceEntry{value: &model.ContivService{ID: model.ServiceID{Namespace: "default", Name: name}}}
	}
	a, b, c := entry("a"), entry("b"), entry("c")
	shared := ip("10.244.2.1")

	assert.True(t, x.add(shared, a), "first user")
	assert.False(t, x.add(shared, b))
	assert.False(t, x.add(shared, c))
	assert.ElementsMatch(t, []model.ServiceID{a.value.ID, b.value.ID, c.value.ID}, x.ids(shared))

	assert.False(t, x.remove(shared, b), "a middle user leaves")
	assert.False(t, x.remove(shared, a), "the first user leaves, c takes its place")
	assert.Equal(t, []model.ServiceID{c.value.ID}, x.ids(shared))
	assert.Empty(t, x.v4.more, "no overflow left for one user")
	assert.False(t, x.remove(shared, a), "not a user")
	assert.True(t, x.remove(shared, c), "the last user leaves")
	assert.False(t, x.has(shared))
	assert.Nil(t, x.ids(shared))
	assert.False(t, x.remove(shared, c))
}

func TestBackendIndexFamiliesApart(t *testing.T) {
	x := newBackendIndex(0, 0)
	e := &serviceEntry{value: &model.ContivService{ID: model.ServiceID{Namespace: "default", Name: "a"}}}
	x.add(ip("10.244.2.1"), e)
	x.add(ip("fd00:10:244:2::2"), e)
	assert.True(t, x.has(ip("10.244.2.1")))
	assert.False(t, x.has(ip("fd00:10:244:2::1")))
	assert.False(t, x.has(ip("::ffff:10.244.2.2")), "an IPv4-mapped address is IPv6 here")
	assert.True(t, x.has(ip("fd00:10:244:2::2")))
	assert.Equal(t, 2, x.len())
	assert.True(t, x.remove(ip("fd00:10:244:2::2"), e))
	assert.Equal(t, []model.ServiceID{e.value.ID}, x.ids(ip("10.244.2.1")))
}
