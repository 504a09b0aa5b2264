package renderertest

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/vppcfg"
)

func TestClientTransactions(t *testing.T) {
	c := NewClient("r")
	acl := renderer.PermitAllACL()
	bind := renderer.PermitAllBinding("tap0")
	require.NoError(t, c.Txn().Put(acl, bind).Commit(context.Background()))
	require.NoError(t, c.Txn().Delete(bind.Key()).Commit(context.Background()))
	assert.Equal(t, []string{
		"txn put=[acl-binding/tap0/input/vppsvc-permit-all acl/vppsvc-permit-all] del=[]",
		"txn put=[] del=[acl-binding/tap0/input/vppsvc-permit-all]",
	}, commitStrings(c.TakeCommits()))
	assert.True(t, EqualItems(c.Items(), []vppcfg.Item{acl}))

	boom := errors.New("boom")
	c.FailNextCommit(boom)
	assert.ErrorIs(t, c.Txn().Put(bind).Commit(context.Background()), boom)
	assert.Empty(t, c.TakeCommits(), "a failed commit is not logged")
	assert.True(t, EqualItems(c.Items(), []vppcfg.Item{acl}), "a failed commit changes nothing")

	require.NoError(t, c.ResyncTxn().Commit(context.Background()))
	assert.Empty(t, c.Items(), "a resync replaces everything")
	c.TakeCommits()

	// As in the VPP layer's Txn, the last operation on a key wins.
	require.NoError(t, c.Txn().Put(acl, acl).Commit(context.Background()), "put twice")
	require.NoError(t, c.Txn().Put(acl).Delete(acl.Key()).Commit(context.Background()), "put, then delete")
	assert.Empty(t, c.Items())
	require.NoError(t, c.Txn().Delete(acl.Key()).Put(acl).Commit(context.Background()), "delete, then put")
	assert.True(t, EqualItems(c.Items(), []vppcfg.Item{acl}))
	assert.Equal(t, []string{
		"txn put=[acl/vppsvc-permit-all] del=[]",
		"txn put=[] del=[acl/vppsvc-permit-all]",
		"txn put=[acl/vppsvc-permit-all] del=[]",
	}, commitStrings(c.TakeCommits()))
	assert.ErrorIs(t, c.Txn().Put(nil).Commit(context.Background()), vppcfg.ErrInvalid, "nil item")
}

// TestClientRejectsWhatTheVPPLayerRejects: the double asks vppcfg, so it
// rejects what a real Txn rejects; before it did, it accepted each of these.
func TestClientRejectsWhatTheVPPLayerRejects(t *testing.T) {
	ap := netip.MustParseAddrPort
	pfx := netip.MustParsePrefix
	tests := []struct {
		name  string
		owner string
		items []vppcfg.Item
		err   error
	}{
		{"an ACL rule with host bits set", "r",
			[]vppcfg.Item{&vppcfg.ACL{Name: "r-x", Rules: []vppcfg.ACLRule{{Src: pfx("10.1.2.3/24"), Dst: pfx("0.0.0.0/0")}}}}, vppcfg.ErrInvalid},
		{"LB weights past VPP's 8-bit sum", "r", []vppcfg.Item{&vppcfg.NAT44Global{}, &vppcfg.NAT44LBMapping{External: ap("10.96.0.1:80"), Protocol: vppcfg.ProtoTCP,
			Locals: []vppcfg.NAT44LBLocal{{Addr: ap("10.1.2.2:80"), Probability: 200}, {Addr: ap("10.1.2.3:80"), Probability: 100}}}}, vppcfg.ErrInvalid},
		{"an output-feature interface that is also inside", "r", []vppcfg.Item{&vppcfg.NAT44Global{},
			&vppcfg.NAT44Interface{Interface: "eth0", Role: vppcfg.NAT44Output}, &vppcfg.NAT44Interface{Interface: "eth0", Role: vppcfg.NAT44Inside}}, vppcfg.ErrConflict},
		{"an owner name VPP tags cannot carry", "r:1", []vppcfg.Item{&vppcfg.NAT44Global{}}, vppcfg.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewClient(tt.owner)
			assert.ErrorIs(t, c.Txn().Put(tt.items...).Commit(context.Background()), tt.err)
			assert.Empty(t, c.Items())
			assert.Empty(t, c.TakeCommits())
		})
	}
}

func commitStrings(commits []Commit) []string {
	out := make([]string, len(commits))
	for i, m := range commits {
		out[i] = m.String()
	}
	return out
}

func TestCheckVPPFindsBrokenStates(t *testing.T) {
	ap := netip.MustParseAddrPort
	pfx := netip.MustParsePrefix
	lb := &vppcfg.NAT44LBMapping{External: ap("10.96.0.1:80"), Protocol: vppcfg.ProtoTCP}
	static := &vppcfg.NAT44StaticMapping{External: ap("10.96.0.1:80"), Protocol: vppcfg.ProtoTCP, Local: ap("10.1.2.2:80")}
	filter := &vppcfg.ACL{Name: "r-filter-00", Rules: []vppcfg.ACLRule{{Src: pfx("0.0.0.0/0"), Dst: pfx("::/0")}}}
	tests := []struct {
		name  string
		items []vppcfg.Item
		want  []string
	}{
		{"LB mapping without locals, sharing its external key, without the plugin",
			[]vppcfg.Item{lb, static}, []string{"an LB mapping needs at least one", "share the VPP external key", "without nat44-global"}},
		{"LB mapping with a zero weight", []vppcfg.Item{&vppcfg.NAT44Global{}, &vppcfg.NAT44LBMapping{External: ap("10.96.0.1:80"), Protocol: vppcfg.ProtoTCP,
			Locals: []vppcfg.NAT44LBLocal{{Addr: ap("10.1.2.2:80"), Probability: 1}, {Addr: ap("10.1.2.3:80")}}}}, []string{"local 10.1.2.3:80 has probability 0"}},
		{"cnat translation without paths",
			[]vppcfg.Item{&vppcfg.CNATTranslation{VIP: ap("[fd00:96::1]:80"), Protocol: vppcfg.ProtoTCP}}, []string{"Paths: empty"}},
		{"empty ACL", []vppcfg.Item{&vppcfg.ACL{Name: "r-filter-01"}}, []string{"no rules"}},
		{"mixed-family rule", []vppcfg.Item{filter}, []string{"different families"}},
		{"filter ACL bound without the permit-all ACL, binding of an ACL nobody desires",
			[]vppcfg.Item{filter, &vppcfg.ACLBinding{Interface: "tap0", Direction: vppcfg.ACLInput, ACL: filter.Name, Priority: renderer.ServiceACLPriority},
				&vppcfg.ACLBinding{Interface: "tap0", Direction: vppcfg.ACLInput, ACL: "ghost", Priority: renderer.ServiceACLPriority}},
			[]string{"no permit-all ACL", `ACL "ghost" not desired`}},
		{"a permit-all ACL that differs from the shared one",
			[]vppcfg.Item{&vppcfg.ACL{Name: renderer.PermitAllACLName, Rules: renderer.PermitAllACL().Rules[:1]}}, []string{"differs from renderer.PermitAllACL"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := map[vppcfg.Key]vppcfg.Item{}
			for _, it := range tt.items {
				m[it.Key()] = it
			}
			got := strings.Join(CheckVPP(m), "\n")
			for _, w := range tt.want {
				assert.Contains(t, got, w)
			}
		})
	}
	ok := map[vppcfg.Key]vppcfg.Item{}
	for _, it := range (renderer.ACLShards{Renderer: "r", Count: 2, Family: renderer.IPv4}).Bindings([]string{"tap0"}) {
		ok[it.Key()] = it
	}
	for i := range 2 {
		acl := renderer.ACLShards{Renderer: "r", Count: 2, Family: renderer.IPv4}.ACL(i, nil)
		ok[acl.Key()] = acl
	}
	assert.Empty(t, CheckVPP(ok), "a renderer's filter items without services are valid")
}
