package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc/vppcfg"
)

// Stats.WaitingForInterface counts the pending items that wait for an
// interface, and only those: a NAT role and an ACL binding on a missing tap
// wait; the ACL itself does not. They stop counting once the interface is
// there, and count again when it goes.
func TestStatsCountItemsWaitingForAnInterface(t *testing.T) {
	f := newFakeDriver()
	r := NewReconciler(f, testOptions())
	role := &vppcfg.NAT44Interface{Interface: "tap1", Role: vppcfg.NAT44Inside}
	commit(t, r.Client("nat44").ResyncTxn(), global, role, acl("a", 80), binding("tap1", vppcfg.ACLOutput, "a", 0))
	start(t, r)
	st := r.Stats()
	assert.Equal(t, 2, st.WaitingForInterface, "the role and the binding")
	assert.Equal(t, 2, st.Pending)

	f.addInterface("tap1")
	require.Eventually(t, func() bool { return r.Stats().WaitingForInterface == 0 }, 2*time.Second, time.Millisecond)
	assert.Zero(t, r.Stats().Pending)

	f.deleteInterface("tap1")
	require.Eventually(t, func() bool { return r.Stats().WaitingForInterface == 2 }, 2*time.Second, time.Millisecond)
}
