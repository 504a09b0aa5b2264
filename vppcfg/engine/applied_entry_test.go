package engine

import (
	"context"
	"errors"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
)

// The applied view holds its entries by value; each costs its map slot.
func TestAppliedEntryStaysCompact(t *testing.T) {
	assert.LessOrEqual(t, unsafe.Sizeof(appliedEntry{}), uintptr(32))
}

func TestOwnerRefsShareOneName(t *testing.T) {
	refs := ownerRefs{}
	a := refs.of("nat44")
	assert.Same(t, a.name, refs.of(string([]byte("nat44"))).name)
	assert.NotSame(t, a.name, refs.of("cnat").name)
	assert.Equal(t, "nat44", a.String())
	assert.Equal(t, ownerRef{}, refs.of(""), "no owner is the zero value")
	assert.Empty(t, ownerRef{}.String())
}

// An update in place is recorded in the applied view: the item reads as
// applied and the next commit does not send it again.
func TestUpdateIsRecorded(t *testing.T) {
	f := newFakeDriver()
	r := NewReconciler(f, testOptions())
	c := r.Client("acl")
	commit(t, c.ResyncTxn(), acl("a", 80))
	start(t, r)
	f.takeLog()

	commit(t, c.Txn(), acl("a", 81))
	assert.Equal(t, []string{"update acl/a"}, f.takeLog())
	assert.Equal(t, StateApplied, state(t, r, vppcfg.ACLKey("a")))
	commit(t, c.Txn(), acl("a", 81), acl("b", 82))
	assert.Equal(t, []string{"create acl/b"}, f.takeLog())
}

// affinityHidingDriver dumps LB mappings without their affinity, as VPP
// does, for a VPP process that does not restart.
type affinityHidingDriver struct{ *fakeDriver }

func (d affinityHidingDriver) Dump(ctx context.Context) (*driverapi.State, error) {
	st, err := d.fakeDriver.Dump(ctx)
	if err != nil {
		return nil, err
	}
	st.VPPPID = 1
	for i, o := range st.Objects {
		if m, ok := o.Item.(*vppcfg.NAT44LBMapping); ok {
			c := *m
			c.Affinity = 0
			st.Objects[i].Item = &c
		}
	}
	return st, nil
}

// A resync keeps the affinity the layer last wrote, not the desired one: a
// change whose write failed is sent again instead of read as applied.
func TestResyncRecallsWhatWasWritten(t *testing.T) {
	f := newFakeDriver()
	r := NewReconciler(affinityHidingDriver{f}, testOptions())
	c := r.Client("svc")
	commit(t, c.ResyncTxn(), global, sticky("10.96.0.10:80", 10))
	start(t, r)
	f.takeLog()

	f.mu.Lock()
	f.fail = func(op driverapi.Op) error {
		if op.Type == driverapi.OpDelete {
			return errors.New("injected")
		}
		return nil
	}
	f.mu.Unlock()
	commit(t, c.Txn(), global, sticky("10.96.0.10:80", 20))
	assert.Equal(t, []string{"delete nat44-lb-mapping/10.96.0.10:80/tcp FAILED"}, f.takeLog())

	f.mu.Lock()
	f.fail = nil
	f.mu.Unlock()
	require.NoError(t, r.Resync(context.Background()))
	assert.Equal(t, []string{"delete nat44-lb-mapping/10.96.0.10:80/tcp", "create nat44-lb-mapping/10.96.0.10:80/tcp"}, f.takeLog())
	assert.Equal(t, uint32(20), f.objs[sticky("10.96.0.10:80", 20).Key()].Item.(*vppcfg.NAT44LBMapping).Affinity)
}
