package vppcfg

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func puts(its ...Item) []txnOp {
	ops := make([]txnOp, len(its))
	for i, it := range its {
		ops[i] = txnOp{put: it}
	}
	return ops
}

func TestStoreOwnership(t *testing.T) {
	s := newStore()
	shared, onlyA := acl("permit-all"), acl("only-a")
	require.NoError(t, s.commit("a", puts(shared, onlyA), false))
	require.NoError(t, s.commit("b", puts(shared), false))
	_, owners, _ := s.get(shared.Key())
	assert.Equal(t, []string{"a", "b"}, owners)

	// A ResyncTxn replaces the owner's whole set; shared items stay for b.
	require.NoError(t, s.commit("a", nil, true))
	assert.True(t, s.resynced["a"])
	_, owners, ok := s.get(shared.Key())
	assert.True(t, ok)
	assert.Equal(t, []string{"b"}, owners)
	_, _, ok = s.get(onlyA.Key())
	assert.False(t, ok)

	// Deleting a key one does not own is a no-op.
	require.NoError(t, s.commit("a", []txnOp{{del: shared.Key()}}, false))
	_, _, ok = s.get(shared.Key())
	assert.True(t, ok)

	// The last operation on a key in one transaction wins.
	require.NoError(t, s.commit("c", []txnOp{{put: acl("x", 1)}, {del: ACLKey("x")}, {put: acl("y", 1)}, {put: acl("y", 2)}}, false))
	_, _, ok = s.get(ACLKey("x"))
	assert.False(t, ok)
	y, _, _ := s.get(ACLKey("y"))
	assert.True(t, acl("y", 2).Equal(y))
}

func TestStoreConflicts(t *testing.T) {
	s := newStore()
	require.NoError(t, s.commit("a", puts(acl("x", 80), static("10.96.0.10:80", "10.1.1.1:80"),
		&NAT44Interface{Interface: "tap0", Role: NAT44Outside},
		&NAT44IdentityMapping{Addr: addr("1.1.1.1"), Port: 22, Protocol: ProtoTCP, VRF: 0}), false))

	err := s.commit("b", puts(acl("x", 81)), false)
	require.ErrorIs(t, err, ErrConflict)
	assert.ErrorContains(t, err, `owner "b" puts`)
	assert.ErrorContains(t, err, `owner "a" holds`)

	err = s.commit("b", puts(lb("10.96.0.10:80", "10.1.1.1:80", "10.1.1.2:80")), false)
	require.ErrorIs(t, err, ErrConflict, "static and LB mappings share VPP's external key")

	require.NoError(t, s.commit("b", puts(&NAT44IdentityMapping{Addr: addr("1.1.1.1"), Port: 22, Protocol: ProtoTCP, VRF: 1}), false),
		"identity mappings may share an external key in several VRFs")

	err = s.commit("b", puts(&NAT44Interface{Interface: "tap0", Role: NAT44Output}), false)
	require.ErrorIs(t, err, ErrConflict)

	// The owner itself switches static to LB in one transaction.
	require.NoError(t, s.commit("a", []txnOp{{del: NAT44MappingKey(KindNAT44StaticMapping, ap("10.96.0.10:80"), ProtoTCP)},
		{put: lb("10.96.0.10:80", "10.1.1.1:80", "10.1.1.2:80")}}, false))
	// And switches the interface to output-only by a resync.
	require.NoError(t, s.commit("a", puts(&NAT44Interface{Interface: "tap0", Role: NAT44Output}), true))

	// A rejected commit changes nothing.
	before := len(s.items)
	require.ErrorIs(t, s.commit("c", puts(acl("new"), &NAT44Interface{Interface: "tap0", Role: NAT44Inside}), false), ErrConflict)
	assert.Len(t, s.items, before)
}

// TestPutNilRejectsTheTransaction: a nil item is an invalid Put, not a
// delete of the zero key, and nothing of the transaction is recorded.
func TestPutNilRejectsTheTransaction(t *testing.T) {
	r := NewReconciler(newFakeDriver(), testOptions())
	err := r.Client("a").Txn().Put(acl("x", 1), nil).Commit(context.Background())
	require.ErrorIs(t, err, ErrInvalid)
	assert.Empty(t, r.Statuses())
}
