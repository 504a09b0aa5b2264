package nat44

import (
	"testing"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/vppcfg"
)

func TestClaimsShareVPPExternalKeys(t *testing.T) {
	lb := &vppcfg.NAT44LBMapping{External: ap("192.168.16.1:4789"), Protocol: udp}
	static := &vppcfg.NAT44StaticMapping{External: ap("192.168.16.1:4789"), Protocol: udp}
	identity := &vppcfg.NAT44IdentityMapping{Addr: nodeIP, Port: 4789, Protocol: udp}
	if claimOf(lb) != claimOf(static) || claimOf(lb) != claimOf(identity) {
		t.Fatalf("claims differ: %s %s %s", claimOf(lb), claimOf(static), claimOf(identity))
	}
	acl := &vppcfg.ACL{Name: "x"}
	if claimOf(acl) != acl.Key() {
		t.Fatal("other items claim their own key")
	}
}

func TestDesiredStateSmallestIDWins(t *testing.T) {
	st := newDesiredState()
	mk := func(name, local string) (model.ServiceID, *serviceEntry) {
		id := model.ServiceID{Namespace: "default", Name: name}
		return id, newServiceEntry(nil, []vppcfg.Item{&vppcfg.NAT44StaticMapping{External: ap("203.0.113.1:80"), Protocol: tcp, Local: ap(local)}})
	}
	b, eb := mk("b", "10.1.2.2:80")
	a, ea := mk("a", "10.1.2.1:80")
	claim := vppcfg.NAT44MappingKey(vppcfg.KindNAT44LBMapping, ap("203.0.113.1:80"), tcp)
	local := func() string {
		return st.effective(claim).(*vppcfg.NAT44StaticMapping).Local.String()
	}
	st.setService(b, eb)
	st.setService(a, ea)
	if local() != "10.1.2.1:80" {
		t.Fatalf("winner %s, want a's", local())
	}
	prev := st.setService(a, nil)
	if local() != "10.1.2.2:80" {
		t.Fatalf("after a left, winner %s, want b's", local())
	}
	st.setService(a, prev)
	if local() != "10.1.2.1:80" || len(st.all()) != 1 {
		t.Fatalf("restoring a: winner %s, %d items", local(), len(st.all()))
	}
	st.node = claimMap([]vppcfg.Item{&vppcfg.NAT44IdentityMapping{Addr: ip("203.0.113.1"), Port: 80, Protocol: tcp}})
	if _, ok := st.effective(claim).(*vppcfg.NAT44IdentityMapping); !ok || len(st.all()) != 1 {
		t.Fatalf("a node item does not shadow the services: %v", st.all())
	}
}
