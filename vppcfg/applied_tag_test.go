package vppcfg

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIsTagAgreesWithTag(t *testing.T) {
	long := strings.Repeat("l", MaxTagLen)
	for _, c := range []struct{ owner, label string }{
		{"svc", "default/web"}, {"svc", ""}, {"svc", long}, {"a", "b:c"},
	} {
		tag := Tag(c.owner, c.label)
		assert.True(t, isTag(tag, c.owner, c.label), "%q", tag)
		assert.False(t, isTag(tag, c.owner+"x", c.label), "%q, other owner", tag)
		assert.False(t, isTag(tag, c.owner, c.label+"x"), "%q, other label", tag)
		assert.False(t, isTag(tag+"x", c.owner, c.label), "%q, longer tag", tag)
	}
	assert.False(t, isTag("svc:default/web", "svc", "default/web"), "no prefix")
}

// The layer names an object by the tag VPP holds, also when that is not the
// tag it would write for the item now: the fake driver fails an update or
// delete that names another.
func TestOpsCarryTheTagVPPHolds(t *testing.T) {
	f := newFakeDriver()
	f.objs[global.Key()] = Observed{Item: global}
	// Written by owner b, shared with a (the first owner) after a restart.
	shared := lb("10.96.0.10:80", "10.1.1.1:8080")
	f.objs[shared.Key()] = Observed{Item: shared, Tag: Tag("b", "svc")}
	// An orphan whose tag was shortened: its label is not recoverable.
	long := static("10.96.0.11:80", "10.1.1.1:8080")
	long.Label = strings.Repeat("n", MaxTagLen)
	f.objs[long.Key()] = Observed{Item: long, Tag: Tag("svc", long.Label)}

	r := NewReconciler(f, testOptions())
	commit(t, r.Client("base").ResyncTxn(), global)
	grown := lb("10.96.0.10:80", "10.1.1.1:8080", "10.1.1.2:8080")
	commit(t, r.Client("a").ResyncTxn(), grown)
	commit(t, r.Client("b").ResyncTxn(), grown)
	start(t, r)
	assert.Equal(t, []string{"add-local nat44-lb-mapping/10.96.0.10:80/tcp 10.1.1.2:8080"}, f.takeLog())
	assert.Equal(t, StateApplied, state(t, r, grown.Key()))
	assert.Equal(t, Tag("b", "svc"), f.objs[grown.Key()].Tag)

	// An orphan of c (not resynced yet) that a comes to desire is a's now, under c's tag.
	later := lb("10.96.0.12:80", "10.1.1.1:8080")
	f.objs[later.Key()] = Observed{Item: later, Tag: Tag("c", "svc")}
	require.NoError(t, r.Resync(t.Context()))
	f.takeLog()
	commit(t, r.Client("a").Txn(), lb("10.96.0.12:80", "10.1.1.1:8080", "10.1.1.2:8080"))
	assert.Equal(t, []string{"add-local nat44-lb-mapping/10.96.0.12:80/tcp 10.1.1.2:8080"}, f.takeLog())

	commit(t, r.Client("svc").ResyncTxn())
	assert.Equal(t, []string{"delete nat44-static-mapping/10.96.0.11:80/tcp"}, f.takeLog())
	_, left := f.objs[long.Key()]
	require.False(t, left, "the orphan is deleted by its tag")
}
