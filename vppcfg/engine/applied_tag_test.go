package engine

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
)

func TestIsTagAgreesWithTag(t *testing.T) {
	long := strings.Repeat("l", core.MaxTagLen)
	for _, c := range []struct{ owner, label string }{
		{"svc", "default/web"}, {"svc", ""}, {"svc", long}, {"a", "b:c"},
	} {
		tag := core.Tag(c.owner, c.label)
		assert.True(t, isTag(tag, c.owner, c.label), "%q", tag)
		assert.False(t, isTag(tag, c.owner+"x", c.label), "%q, other owner", tag)
		assert.False(t, isTag(tag, c.owner, c.label+"x"), "%q, other label", tag)
		assert.False(t, isTag(tag+"x", c.owner, c.label), "%q, longer tag", tag)
	}
	assert.False(t, isTag("svc:default/web", "svc", "default/web"), "no prefix")
}

// sticky is an LB mapping with an affinity (which VPP does not report).
func sticky(ext string, affinity uint32) *vppcfg.NAT44LBMapping {
	m := lb(ext, "10.1.1.1:8080", "10.1.1.2:8080")
	m.Affinity = affinity
	return m
}

// both is an LB mapping for both directions; changing that recreates it.
func both(ext string, both bool) *vppcfg.NAT44LBMapping {
	m := lb(ext, "10.1.1.1:8080", "10.1.1.2:8080")
	m.Out2InOnly = !both
	return m
}

// The layer names an object by the tag VPP holds, also when that is not the
// tag it would write for the item now: the fake driver fails an update or
// delete that names another.
func TestOpsCarryTheTagVPPHolds(t *testing.T) {
	f := newFakeDriver()
	f.objs[global.Key()] = driverapi.Observed{Item: global}
	// Written by owner b, shared with a (the first owner) after a restart.
	shared := both("10.96.0.10:80", false)
	f.objs[shared.Key()] = driverapi.Observed{Item: shared, Tag: core.Tag("b", "svc")}
	// An orphan whose tag was shortened: its label is not recoverable.
	long := static("10.96.0.11:80", "10.1.1.1:8080")
	long.Label = strings.Repeat("n", core.MaxTagLen)
	f.objs[long.Key()] = driverapi.Observed{Item: long, Tag: core.Tag("svc", long.Label)}

	r := NewReconciler(f, testOptions())
	commit(t, r.Client("base").ResyncTxn(), global)
	changed := both("10.96.0.10:80", true)
	commit(t, r.Client("a").ResyncTxn(), changed)
	commit(t, r.Client("b").ResyncTxn(), changed)
	start(t, r)
	recreated := []string{"delete nat44-lb-mapping/10.96.0.10:80/tcp", "create nat44-lb-mapping/10.96.0.10:80/tcp"}
	assert.Equal(t, recreated, f.takeLog())
	assert.Equal(t, StateApplied, state(t, r, changed.Key()))
	assert.Equal(t, core.Tag("a", "svc"), f.objs[changed.Key()].Tag, "created anew for the first owner")

	// An orphan of c (not resynced yet) that a comes to desire is a's now, under c's tag.
	later := both("10.96.0.12:80", false)
	f.objs[later.Key()] = driverapi.Observed{Item: later, Tag: core.Tag("c", "svc")}
	require.NoError(t, r.Resync(t.Context()))
	f.takeLog()
	commit(t, r.Client("a").Txn(), both("10.96.0.12:80", true))
	assert.Equal(t, []string{"delete nat44-lb-mapping/10.96.0.12:80/tcp", "create nat44-lb-mapping/10.96.0.12:80/tcp"}, f.takeLog())

	commit(t, r.Client("svc").ResyncTxn())
	assert.Equal(t, []string{"delete nat44-static-mapping/10.96.0.11:80/tcp"}, f.takeLog())
	_, left := f.objs[long.Key()]
	require.False(t, left, "the orphan is deleted by its tag")
}
