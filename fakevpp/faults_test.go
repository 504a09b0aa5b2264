package fakevpp

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/acl"
	"go.fd.io/govpp/binapi/acl_types"
)

func (e *env) tryACL(tag string) error {
	_, err := e.acl.ACLAddReplace(e.ctx, &acl.ACLAddReplace{ACLIndex: ^uint32(0), Tag: tag,
		R: []acl_types.ACLRule{rule(permit, "0.0.0.0/0", "0.0.0.0/0", 0, 0)}})
	return err
}

func TestFailNth(t *testing.T) {
	e := newEnv(t)
	e.v.FailNth(2, int32(api.UNSPECIFIED))
	e.ok(e.tryACL("a"))
	e.expect(api.UNSPECIFIED, e.tryACL("b"))
	e.ok(e.tryACL("c"))
	d := e.aclDump(^uint32(0))
	require.Len(t, d, 2, "a failed request changes nothing")
	assert.Equal(t, []string{"a", "c"}, []string{d[0].Tag, d[1].Tag})
	assert.Equal(t, 3, e.v.Calls()["acl_add_replace"], "failed requests are counted")
	assert.Equal(t, 1, e.v.Calls()["acl_dump"])
	e.v.ResetCalls()
	assert.Empty(t, e.v.Calls())
}

func TestFailMessage(t *testing.T) {
	e := newEnv(t)
	e.v.FailMessage("ACLAddReplace", int32(api.EAGAIN))
	e.v.FailMessage("acl_dump", -1) // dumps cannot fail: ignored
	e.expect(api.EAGAIN, e.tryACL("a"))
	e.expect(api.EAGAIN, e.tryACL("b"))
	assert.Empty(t, e.aclDump(^uint32(0)))
	e.v.ClearFaults()
	e.ok(e.tryACL("c"))
}

func TestFailRandom(t *testing.T) {
	run := func() []bool {
		e := newEnv(t)
		e.v.FailRandom(0.3, 42, int32(api.EAGAIN))
		var failed []bool
		for i := 0; i < 200; i++ {
			failed = append(failed, e.tryACL("x") != nil)
		}
		return failed
	}
	a, b := run(), run()
	assert.Equal(t, a, b, "deterministic per seed")
	n := 0
	for _, f := range a {
		if f {
			n++
		}
	}
	assert.InDelta(t, 60, n, 25)
}
