package engine

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
)

func puts(its ...vppcfg.Item) []core.TxnOp {
	ops := make([]core.TxnOp, len(its))
	for i, it := range its {
		ops[i] = core.TxnOp{Put: it}
	}
	return ops
}

func TestStoreOwnership(t *testing.T) {
	s := core.NewStore()
	shared, onlyA := acl("permit-all"), acl("only-a")
	require.NoError(t, s.Commit("a", puts(shared, onlyA), false))
	require.NoError(t, s.Commit("b", puts(shared), false))
	_, owners, _ := s.Get(shared.Key())
	assert.Equal(t, []string{"a", "b"}, owners)

	// A ResyncTxn replaces the owner's whole set; shared items stay for b.
	require.NoError(t, s.Commit("a", nil, true))
	assert.True(t, s.Resynced["a"])
	_, owners, ok := s.Get(shared.Key())
	assert.True(t, ok)
	assert.Equal(t, []string{"b"}, owners)
	_, _, ok = s.Get(onlyA.Key())
	assert.False(t, ok)

	// Deleting a key one does not own is a no-op.
	require.NoError(t, s.Commit("a", []core.TxnOp{{Del: shared.Key()}}, false))
	_, _, ok = s.Get(shared.Key())
	assert.True(t, ok)

	// The last operation on a key in one transaction wins.
	require.NoError(t, s.Commit("c", []core.TxnOp{{Put: acl("x", 1)}, {Del: vppcfg.ACLKey("x")}, {Put: acl("y", 1)}, {Put: acl("y", 2)}}, false))
	_, _, ok = s.Get(vppcfg.ACLKey("x"))
	assert.False(t, ok)
	y, _, _ := s.Get(vppcfg.ACLKey("y"))
	assert.True(t, acl("y", 2).Equal(y))
}

func TestStoreConflicts(t *testing.T) {
	s := core.NewStore()
	require.NoError(t, s.Commit("a", puts(acl("x", 80), static("10.96.0.10:80", "10.1.1.1:80"),
		&vppcfg.NAT44Interface{Interface: "tap0", Role: vppcfg.NAT44Outside},
		&vppcfg.NAT44IdentityMapping{Addr: addr("1.1.1.1"), Port: 22, Protocol: vppcfg.ProtoTCP, VRF: 0}), false))

	err := s.Commit("b", puts(acl("x", 81)), false)
	require.ErrorIs(t, err, vppcfg.ErrConflict)
	assert.ErrorContains(t, err, `owner "b" puts`)
	assert.ErrorContains(t, err, `owner "a" holds`)

	err = s.Commit("b", puts(lb("10.96.0.10:80", "10.1.1.1:80", "10.1.1.2:80")), false)
	require.ErrorIs(t, err, vppcfg.ErrConflict, "static and LB mappings share VPP's external key")

	require.NoError(t, s.Commit("b", puts(&vppcfg.NAT44IdentityMapping{Addr: addr("1.1.1.1"), Port: 22, Protocol: vppcfg.ProtoTCP, VRF: 1}), false),
		"identity mappings may share an external key in several VRFs")

	err = s.Commit("b", puts(&vppcfg.NAT44Interface{Interface: "tap0", Role: vppcfg.NAT44Output}), false)
	require.ErrorIs(t, err, vppcfg.ErrConflict)

	// The owner itself switches static to LB in one transaction.
	require.NoError(t, s.Commit("a", []core.TxnOp{{Del: vppcfg.NAT44MappingKey(vppcfg.KindNAT44StaticMapping, ap("10.96.0.10:80"), vppcfg.ProtoTCP)},
		{Put: lb("10.96.0.10:80", "10.1.1.1:80", "10.1.1.2:80")}}, false))
	// And switches the interface to output-only by a resync.
	require.NoError(t, s.Commit("a", puts(&vppcfg.NAT44Interface{Interface: "tap0", Role: vppcfg.NAT44Output}), true))

	// A rejected commit changes nothing.
	before := len(s.Items)
	require.ErrorIs(t, s.Commit("c", puts(acl("new"), &vppcfg.NAT44Interface{Interface: "tap0", Role: vppcfg.NAT44Inside}), false), vppcfg.ErrConflict)
	assert.Len(t, s.Items, before)
}

// TestPutNilRejectsTheTransaction: a nil item is an invalid Put, not a
// delete of the zero key, and nothing of the transaction is recorded.
func TestPutNilRejectsTheTransaction(t *testing.T) {
	r := NewReconciler(newFakeDriver(), testOptions())
	err := r.Client("a").Txn().Put(acl("x", 1), nil).Commit(context.Background())
	require.ErrorIs(t, err, vppcfg.ErrInvalid)
	assert.Empty(t, r.Statuses())
}
