package renderer_test

import (
	"fmt"
	"testing"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/vppcfg"
)

func TestACLShardNamesAndHash(t *testing.T) {
	s := renderer.ACLShards{Renderer: "nat44", Count: 64, Family: renderer.IPv4}
	if s.Name(7) != "nat44-filter-07" || len(renderer.ACLShards{Renderer: "sixteen-byte-pfx", Count: renderer.MaxACLShards}.Name(renderer.MaxACLShards-1)) > renderer.MaxLabelLen {
		t.Fatalf("Name(7) = %q", s.Name(7))
	}
	id := model.ServiceID{Namespace: "kube-system", Name: "kube-dns"}
	// FNV-1a is fixed by its specification: the shard of a service must not
	// change between versions, or an upgrade would move every rule.
	if got := s.Of(id); got != 56 {
		t.Fatalf("Of(%s) = %d, want 56 (fnv32a of the ID modulo 64)", id, got)
	}
	used := map[int]int{}
	for i := range 6400 {
		used[s.Of(model.ServiceID{Namespace: "ns", Name: fmt.Sprint("svc-", i)})]++
	}
	for i := range s.Count {
		if used[i] < 50 || used[i] > 150 {
			t.Fatalf("shard %d holds %d of 6400 services, want about 100", i, used[i])
		}
	}
}

func TestEmptyShardHoldsAHarmlessPlaceholder(t *testing.T) {
	for _, fam := range []renderer.Family{renderer.IPv4, renderer.IPv6} {
		s := renderer.ACLShards{Renderer: "r", Count: 2, Family: fam}
		acl := s.ACL(1, nil)
		if acl.Name != "r-filter-01" || len(acl.Rules) != 1 {
			t.Fatalf("%s: empty shard = %s, want one placeholder rule", fam, acl)
		}
		r := acl.Rules[0]
		// A permit whose destination no frontend has changes no verdict:
		// the permit-all ACL after the shards would permit the packet too.
		if r.Action != vppcfg.ACLPermit || !r.Dst.Addr().IsUnspecified() || r.Dst.Bits() != r.Dst.Addr().BitLen() || !fam.Has(r.Src.Addr()) {
			t.Fatalf("%s: placeholder %s", fam, r)
		}
		rules := []vppcfg.ACLRule{renderer.FrontendRule(vppcfg.ACLDeny, pfx("0.0.0.0/0"), fe(renderer.ClusterIPFrontend, "10.96.0.1:80"))}
		if got := s.ACL(0, rules); len(got.Rules) != 1 || got.Rules[0] != rules[0] {
			t.Fatalf("%s: shard with rules = %s", fam, got)
		}
	}
}

func TestShardBindingsComeBeforePermitAll(t *testing.T) {
	s := renderer.ACLShards{Renderer: "r", Count: 2, Family: renderer.IPv4}
	items := s.Bindings(model.NewInterfaces("tap0", "uplink0"))
	want := map[vppcfg.Key]vppcfg.Item{vppcfg.ACLKey(renderer.PermitAllACLName): renderer.PermitAllACL()}
	for _, ifName := range []string{"tap0", "uplink0"} {
		for i := range 2 {
			b := &vppcfg.ACLBinding{Interface: ifName, Direction: vppcfg.ACLInput, ACL: s.Name(i), Priority: renderer.ServiceACLPriority}
			want[b.Key()] = b
		}
		want[renderer.PermitAllBinding(ifName).Key()] = renderer.PermitAllBinding(ifName)
	}
	if len(items) != len(want) {
		t.Fatalf("%d items, want %d", len(items), len(want))
	}
	for _, it := range items {
		if w := want[it.Key()]; w == nil || !w.Equal(it) {
			t.Fatalf("unexpected %s", it)
		}
	}
}

func TestValidateACLShards(t *testing.T) {
	for n, ok := range map[int]bool{0: false, 1: true, 64: true, renderer.MaxACLShards: true, renderer.MaxACLShards + 1: false} {
		if err := renderer.ValidateACLShards("aclShards", n); (err == nil) != ok {
			t.Errorf("ValidateACLShards(%d) = %v", n, err)
		}
	}
}
