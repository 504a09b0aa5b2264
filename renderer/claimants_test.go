package renderer

import (
	"slices"
	"testing"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/vppcfg"
)

func TestClaimantsKeepIDOrder(t *testing.T) {
	entry := func(name string) *serviceEntry { return &serviceEntry{svc: svc(name)} }
	a, b, c := entry("a"), entry("b"), entry("c")
	var cl claimants
	for _, e := range []*serviceEntry{b, c, a} {
		cl = cl.insert(e)
	}
	ids := func() []string {
		var out []string
		for _, id := range cl.ids() {
			out = append(out, id.Name)
		}
		return out
	}
	if got := ids(); !slices.Equal(got, []string{"a", "b", "c"}) || cl.len() != 3 {
		t.Fatalf("claimants %v, want a b c", got)
	}
	cl = cl.remove(b.svc.ID)
	if got := ids(); !slices.Equal(got, []string{"a", "c"}) {
		t.Fatalf("after b left: %v", got)
	}
	cl = cl.remove(a.svc.ID)
	if cl.first != c || cl.more != nil {
		t.Fatalf("after a left, c must win alone: %v", ids())
	}
	cl = cl.remove(model.ServiceID{Namespace: "default", Name: "x"})
	if cl.first != c {
		t.Fatal("removing a non-claimant changed the winner")
	}
	if cl = cl.remove(c.svc.ID); cl.len() != 0 || cl.ids() != nil {
		t.Fatalf("after the last left: %v", ids())
	}
}

func TestNewEntryKeepsTheFirstItemOfAClaim(t *testing.T) {
	ix := newIndex(nil, ACLShards{Renderer: "t", Count: 1, Family: IPv4})
	ext := ap("203.0.113.1:80")
	first := &vppcfg.NAT44StaticMapping{External: ext, Protocol: vppcfg.ProtoTCP, Local: ap("10.1.2.1:80")}
	second := &vppcfg.NAT44StaticMapping{External: ext, Protocol: vppcfg.ProtoTCP, Local: ap("10.1.2.2:80")}
	other := &vppcfg.NAT44StaticMapping{External: ap("203.0.113.0:80"), Protocol: vppcfg.ProtoTCP, Local: ap("10.1.2.3:80")}
	e := ix.newEntry(svc("a"), Rendering{Items: []vppcfg.Item{first, second, other}})
	if len(e.items) != 2 || e.item(first.Key()) != first || e.item(other.Key()) != other {
		t.Fatalf("entry items %v, want the first of the two with one claim and the other", e.items)
	}
	if e.item(vppcfg.NAT44GlobalKey()) != nil {
		t.Fatal("an unclaimed key has an item")
	}
}
