package renderer

import (
	"fmt"
	"net/netip"
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

// A resync hashes each entry's ID and claims where it makes the entry,
// before the tables are sized, and fills the index with those hashes
// (putEntry); it must end as an index filled one service at a time
// (setService) does, and both as the rule says (the smallest ID wins a
// claim), whatever the claims' hash: the real one, every claim alike, or
// two values. Services contest claims, and one is listed twice (its
// second entry replaces the first).
func TestIndexFilledWithHashesMadeFirst(t *testing.T) {
	shards := ACLShards{Renderer: "t", Count: 1, Family: IPv4}
	proto := vppcfg.ProtoTCP
	ext := func(i int) netip.AddrPort {
		return netip.AddrPortFrom(netip.MustParseAddr("203.0.113.1"), uint16(80+i))
	}
	// Service i claims one to three of 8 externals; the last is service 3 again.
	type rendered struct {
		id    model.ServiceID
		items []vppcfg.Item
	}
	var services []rendered
	for i := range 24 {
		name := fmt.Sprintf("s%02d", i)
		if i == 23 {
			name = "s03"
		}
		var items []vppcfg.Item
		for j := range 1 + i%3 {
			items = append(items, &vppcfg.NAT44StaticMapping{External: ext((i*5 + j*3) % 8), Protocol: proto,
				Local: netip.AddrPortFrom(netip.MustParseAddr("10.1.0.1"), uint16(1000+i))})
		}
		services = append(services, rendered{model.ServiceID{Namespace: "default", Name: name}, items})
	}
	// The rule, worked out apart: a claim's claimants are the services
	// whose last listing renders it, and the smallest ID wins.
	want := map[vppcfg.Key]ownership{}
	wantItem := map[vppcfg.Key]vppcfg.Item{}
	last := map[model.ServiceID]rendered{}
	for _, s := range services {
		last[s.id] = s
	}
	for _, s := range last {
		for _, it := range s.items {
			k := it.Key()
			o := want[k]
			if o.n == 0 || s.id.Compare(o.winner) < 0 {
				o.winner, wantItem[k] = s.id, it
			}
			o.n++
			want[k] = o
		}
	}
	if len(want) != 8 {
		t.Fatalf("the services claim %d externals, want all 8", len(want))
	}
	for _, tc := range claimHashes {
		t.Run(tc.name, func(t *testing.T) {
			bulk := newIndexSized(nil, shards, 0, 0)
			bulk.winners.hash = tc.hash
			var entries []*serviceEntry
			var hashes []entryHashes
			for _, s := range services {
				e := bulk.newEntry(svc(s.id.Name), Rendering{Items: s.items}, false)
				entries, hashes = append(entries, e), append(hashes, bulk.hashesOf(e))
			}
			bulk.winners.reserve(64)
			for i, e := range entries {
				bulk.putEntry(e, &hashes[i])
			}

			one := newIndex(nil, shards)
			one.winners.hash = tc.hash
			for _, s := range services {
				one.setService(s.id, one.newEntry(svc(s.id.Name), Rendering{Items: s.items}, false))
			}

			for k, o := range want {
				for name, ix := range map[string]*index{"resync": bulk, "one at a time": one} {
					if got := ix.ownership(k); got != o {
						t.Errorf("%s, %s: owned by %v, want %v", name, k, got, o)
					}
					if got := ix.effective(k); got != wantItem[k] {
						t.Errorf("%s, %s: effective %v, want %v", name, k, got, wantItem[k])
					}
				}
			}
			for _, s := range services {
				if got, want := bulk.services.Get(s.id), one.services.Get(s.id); got == nil || want == nil || len(got.items) != len(want.items) {
					t.Errorf("%s: entry %v, want one like %v", s.id, got, want)
				}
			}
			if bulk.services.Len() != 23 || one.services.Len() != 23 {
				t.Errorf("services: %d and %d, want 23", bulk.services.Len(), one.services.Len())
			}
		})
	}
}
