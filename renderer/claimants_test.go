package renderer

import (
	"slices"
	"testing"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/vppcfg"
)

func TestClaimantsKeepIDOrder(t *testing.T) {
	ix := newIndex(nil, ACLShards{Renderer: "t", Count: 1, Family: IPv4})
	claim := vppcfg.NAT44GlobalKey()
	entry := func(name string) *serviceEntry {
		return &serviceEntry{svc: svc(name), items: []claimed{{claim: claim}}}
	}
	a, b, c := entry("a"), entry("b"), entry("c")
	for _, e := range []*serviceEntry{b, c, a} {
		ix.addClaimant(claim, e)
	}
	ids := func() []string {
		var out []string
		for _, id := range ix.claimantIDs(claim) {
			out = append(out, id.Name)
		}
		return out
	}
	if got := ids(); !slices.Equal(got, []string{"a", "b", "c"}) || ix.claimants(claim) != 3 {
		t.Fatalf("claimants %v, want a b c", got)
	}
	ix.removeClaimant(claim, b.svc.ID)
	if got := ids(); !slices.Equal(got, []string{"a", "c"}) {
		t.Fatalf("after b left: %v", got)
	}
	ix.removeClaimant(claim, a.svc.ID)
	if ix.winners.get(claim) != c || len(ix.contenders) != 0 {
		t.Fatalf("after a left, c must win alone: %v", ids())
	}
	ix.removeClaimant(claim, model.ServiceID{Namespace: "default", Name: "x"})
	if ix.winners.get(claim) != c {
		t.Fatal("removing a non-claimant changed the winner")
	}
	if ix.removeClaimant(claim, c.svc.ID); ix.claimants(claim) != 0 || ix.claimantIDs(claim) != nil || ix.winners.len() != 0 {
		t.Fatalf("after the last left: %v", ids())
	}
}

func TestNewEntryKeepsTheFirstItemOfAClaim(t *testing.T) {
	ix := newIndex(nil, ACLShards{Renderer: "t", Count: 1, Family: IPv4})
	ext := ap("203.0.113.1:80")
	first := &vppcfg.NAT44StaticMapping{External: ext, Protocol: vppcfg.ProtoTCP, Local: ap("10.1.2.1:80")}
	second := &vppcfg.NAT44StaticMapping{External: ext, Protocol: vppcfg.ProtoTCP, Local: ap("10.1.2.2:80")}
	other := &vppcfg.NAT44StaticMapping{External: ap("203.0.113.0:80"), Protocol: vppcfg.ProtoTCP, Local: ap("10.1.2.3:80")}
	e := ix.newEntry(svc("a"), Rendering{Items: []vppcfg.Item{first, second, other}}, false)
	if len(e.items) != 2 || e.item(first.Key()) != first || e.item(other.Key()) != other {
		t.Fatalf("entry items %v, want the first of the two with one claim and the other", e.items)
	}
	if e.item(vppcfg.NAT44GlobalKey()) != nil {
		t.Fatal("an unclaimed key has an item")
	}
}
