package nat44

import (
	"testing"

	"github.com/vppsvc/vppsvc/vppcfg"
)

func TestClaimsShareVPPExternalKeys(t *testing.T) {
	lb := &vppcfg.NAT44LBMapping{External: ap("192.168.16.1:4789"), Protocol: udp}
	static := &vppcfg.NAT44StaticMapping{External: ap("192.168.16.1:4789"), Protocol: udp}
	identity := &vppcfg.NAT44IdentityMapping{Addr: nodeIP, Port: 4789, Protocol: udp}
	if claimOf(lb) != claimOf(static) || claimOf(lb) != claimOf(identity) {
		t.Fatalf("claims differ: %s %s %s", claimOf(lb), claimOf(static), claimOf(identity))
	}
	if claimOf(lb) != lb.Key() {
		t.Fatalf("an LB mapping claims its own key, not %s", claimOf(lb))
	}
	addrOnly := &vppcfg.NAT44StaticMapping{External: ap("192.168.16.1:0"), Local: ap("10.1.1.1:0"), AddrOnly: true}
	addrOnlyIdentity := &vppcfg.NAT44IdentityMapping{Addr: nodeIP, AddrOnly: true}
	if claimOf(addrOnly) == claimOf(lb) || claimOf(addrOnlyIdentity) != claimOf(&vppcfg.NAT44IdentityMapping{Addr: nodeIP, AddrOnly: true, VRF: 2}) {
		t.Fatalf("address-only claims: %s %s", claimOf(addrOnly), claimOf(addrOnlyIdentity))
	}
	acl := &vppcfg.ACL{Name: "x"}
	if claimOf(acl) != acl.Key() {
		t.Fatal("other items claim their own key")
	}
}
