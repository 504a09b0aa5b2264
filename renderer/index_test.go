package renderer

import (
	"testing"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/vppcfg"
)

func TestIndexSmallestIDWinsAndNodeItemsShadow(t *testing.T) {
	ix := newIndex(nil, ACLShards{Renderer: "t", Count: 4, Family: IPv4})
	ext := ap("203.0.113.1:80")
	mk := func(name, local string) (model.ServiceID, *serviceEntry) {
		id := model.ServiceID{Namespace: "default", Name: name}
		return id, ix.newEntry(svc(name), Rendering{Items: []vppcfg.Item{
			&vppcfg.NAT44StaticMapping{External: ext, Protocol: vppcfg.ProtoTCP, Local: ap(local)}}}, false)
	}
	key := vppcfg.NAT44MappingKey(vppcfg.KindNAT44StaticMapping, ext, vppcfg.ProtoTCP)
	local := func() string { return ix.effective(key).(*vppcfg.NAT44StaticMapping).Local.String() }
	b, eb := mk("b", "10.1.2.2:80")
	a, ea := mk("a", "10.1.2.1:80")
	ix.setService(b, eb)
	ix.setService(a, ea)
	if local() != "10.1.2.1:80" || ix.ownership(key) != (ownership{a, 2}) {
		t.Fatalf("winner %s (%v), want a's", local(), ix.ownership(key))
	}
	prev := ix.setService(a, nil)
	if local() != "10.1.2.2:80" {
		t.Fatalf("after a left, winner %s, want b's", local())
	}
	ix.setService(a, prev)
	if local() != "10.1.2.1:80" {
		t.Fatalf("restoring a: winner %s", local())
	}
	if _, all := ix.allOf([]*serviceEntry{eb, ea}, 2); len(all) != 1 || all[0] != ix.effective(key) {
		t.Fatalf("all items = %v, want a's mapping alone", all)
	}
	ix.node = ix.claimMap([]vppcfg.Item{&vppcfg.NAT44StaticMapping{External: ext, Protocol: vppcfg.ProtoTCP, Local: ap("10.9.9.9:80")}})
	if local() != "10.9.9.9:80" {
		t.Fatalf("a node item does not shadow the services: %s", local())
	}
	n := 0
	_, all := ix.allOf([]*serviceEntry{eb, ea}, 2)
	for _, it := range all {
		if it.Key() == key {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d items at %s, want 1", n, key)
	}
}

func TestIndexComposesShardsInServiceOrder(t *testing.T) {
	shards := ACLShards{Renderer: "t", Count: 1, Family: IPv4}
	ix := newIndex(nil, shards)
	rule := func(addr string) vppcfg.ACLRule {
		return FrontendRule(vppcfg.ACLDeny, pfx("0.0.0.0/0"), fe(ClusterIPFrontend, addr))
	}
	add := func(name string, rules ...vppcfg.ACLRule) {
		s := svc(name)
		ix.setService(s.ID, ix.newEntry(s, Rendering{Rules: rules}, false))
		ix.composeShard(0)
	}
	add("b", rule("10.96.0.2:80"), rule("10.96.0.2:81"))
	add("a", rule("10.96.0.1:80"))
	add("c") // no rules: not a member
	two := newIndex(nil, ACLShards{Renderer: "t", Count: 2, Family: IPv4})
	for _, name := range []string{"a", "b", "c", "d"} {
		s := svc(name)
		two.setService(s.ID, two.newEntry(s, Rendering{Rules: []vppcfg.ACLRule{rule("10.96.0.1:80")}}, false))
		if two.shards.Of(s.ID) == 0 {
			two.setService(s.ID, nil) // keep shard 0 empty
		}
	}
	two.composeShard(0)
	if got := two.acls[0]; got == nil || len(got.Rules) != 1 || got.Rules[0] != two.shards.Placeholder() {
		t.Fatalf("empty shard while another filters = %v, want the placeholder", got)
	}
	want := []vppcfg.ACLRule{rule("10.96.0.1:80"), rule("10.96.0.2:80"), rule("10.96.0.2:81")}
	if got := ix.acls[0]; len(got.Rules) != 3 || got.Rules[0] != want[0] || got.Rules[1] != want[1] || got.Rules[2] != want[2] {
		t.Fatalf("shard = %s, want a's rules then b's, each in order", got)
	}
	ix.setService(model.ServiceID{Namespace: "default", Name: "a"}, nil)
	ix.setService(model.ServiceID{Namespace: "default", Name: "b"}, nil)
	ix.composeShard(0)
	if got := ix.acls[0]; got != nil {
		t.Fatalf("shard = %s without any filtered service, want none", got)
	}
}
