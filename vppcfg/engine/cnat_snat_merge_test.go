package engine

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc/vppcfg"
)

var (
	snat4 = &vppcfg.CNATSnatConfig{Part: vppcfg.CNATSnatIPv4, SnatIP4: addr("192.168.16.1"), Policy: vppcfg.CNATSnatPolicyK8s}
	snat6 = &vppcfg.CNATSnatConfig{Part: vppcfg.CNATSnatIPv6, SnatIP6: addr("fd00:16::1"), Policy: vppcfg.CNATSnatPolicyK8s}
)

// snatSent is cnat's SNAT settings as the fake VPP holds them.
func snatSent(f *fakeDriver) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.snat == nil {
		return "none"
	}
	return f.snat.String()
}

// TestCNATSnatPartsMerge: two owners each desire their family's part of
// cnat's one set of SNAT settings; VPP gets one value with both addresses,
// each owner's part is applied under its own key, and an owner letting go
// clears only its address.
func TestCNATSnatPartsMerge(t *testing.T) {
	f := newFakeDriver()
	f.pid = 1
	r := NewReconciler(f, testOptions())
	start(t, r)
	commit(t, r.Client("cnat4").ResyncTxn(), snat4)
	assert.Equal(t, "cnat snat ip4 192.168.16.1 ip6 invalid IP policy k8s exclude []", snatSent(f))
	commit(t, r.Client("ipv6").ResyncTxn(), snat6)
	assert.Equal(t, "cnat snat ip4 192.168.16.1 ip6 fd00:16::1 policy k8s exclude []", snatSent(f))
	assert.Equal(t, []string{"update cnat-snat-config/global", "update cnat-snat-config/global"}, f.takeLog())
	for _, s := range r.Statuses() {
		assert.Equal(t, StateApplied, s.State, s.String())
	}
	assert.Equal(t, 2, r.Stats().Applied)

	// Unchanged parts send nothing, on a commit or a resync (VPP kept its
	// settings: the layer remembers what it sent) ...
	commit(t, r.Client("cnat4").Txn(), snat4)
	require.NoError(t, r.Resync(context.Background()))
	assert.Empty(t, f.takeLog())
	// ... unless VPP restarted: then every setting is sent again.
	f.pid = 2
	require.NoError(t, r.Resync(context.Background()))
	assert.Equal(t, []string{"update cnat-snat-config/global"}, f.takeLog())
	assert.Equal(t, "cnat snat ip4 192.168.16.1 ip6 fd00:16::1 policy k8s exclude []", snatSent(f))

	// The IPv4 owner leaves: the IPv6 address stays.
	commit(t, r.Client("cnat4").ResyncTxn())
	assert.Equal(t, "cnat snat ip4 invalid IP ip6 fd00:16::1 policy k8s exclude []", snatSent(f))
	_, ok := r.Status(snat4.Key())
	assert.False(t, ok, "the IPv4 part is gone")
	assert.Equal(t, StateApplied, state(t, r, snat6.Key()))

	// The last part goes: the settings are cleared.
	commit(t, r.Client("ipv6").ResyncTxn())
	assert.Equal(t, "cnat snat ip4 invalid IP ip6 invalid IP policy none exclude []", snatSent(f))
	assert.Zero(t, r.Stats().Applied)
}

// TestCNATSnatPartsOfAnAgentRestart: a new agent does not know what VPP
// holds (no dump), so its first merge sends the settings again; a part
// whose owner has not resynced yet is not known to the new agent either, so
// the first owner's commit sets only its own family until the other
// resyncs.
func TestCNATSnatPartsOfAnAgentRestart(t *testing.T) {
	f := newFakeDriver()
	r1 := NewReconciler(f, testOptions())
	start(t, r1)
	commit(t, r1.Client("cnat4").ResyncTxn(), snat4)
	commit(t, r1.Client("ipv6").ResyncTxn(), snat6)
	f.takeLog()

	r2 := NewReconciler(f, testOptions())
	start(t, r2)
	assert.Empty(t, f.takeLog(), "nothing desired yet, nothing sent")
	commit(t, r2.Client("ipv6").ResyncTxn(), snat6)
	commit(t, r2.Client("cnat4").ResyncTxn(), snat4)
	assert.Equal(t, []string{"update cnat-snat-config/global", "update cnat-snat-config/global"}, f.takeLog())
	assert.Equal(t, "cnat snat ip4 192.168.16.1 ip6 fd00:16::1 policy k8s exclude []", snatSent(f))
}

// TestCNATSnatPartsValidate: a part holds only its family's address, and
// Merged is the layer's.
func TestCNATSnatPartsValidate(t *testing.T) {
	c := NewReconciler(newFakeDriver(), testOptions()).Client("x")
	for _, bad := range []*vppcfg.CNATSnatConfig{
		{Part: vppcfg.CNATSnatIPv4, SnatIP4: addr("192.168.16.1"), SnatIP6: addr("fd00:16::1")},
		{Part: vppcfg.CNATSnatIPv6, SnatIP4: addr("0.0.0.0"), SnatIP6: addr("fd00:16::1")},
		{Part: 7},
		{Merged: []vppcfg.CNATSnatPart{vppcfg.CNATSnatIPv4}},
	} {
		assert.Error(t, c.Txn().Put(bad).Commit(context.Background()), "%s", bad)
	}
}
