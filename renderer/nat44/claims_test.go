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

func TestLosesAffinityTarget(t *testing.T) {
	lb := func(affinity uint32, locals ...string) *vppcfg.NAT44LBMapping {
		m := &vppcfg.NAT44LBMapping{External: ap("10.96.0.1:80"), Protocol: tcp, Affinity: affinity, Out2InOnly: true}
		for _, l := range locals {
			m.Locals = append(m.Locals, loc(l, 1))
		}
		return m
	}
	static := &vppcfg.NAT44StaticMapping{External: ap("10.96.0.1:80"), Protocol: tcp, Local: ap("10.1.2.2:80"), Out2InOnly: true}
	tests := []struct {
		name          string
		before, after vppcfg.Item
		want          bool
	}{
		{"static to LB", static, lb(60, "10.1.2.2:80", "10.1.2.3:80"), false},
		{"local removed without affinity", lb(0, "10.1.2.2:80", "10.1.2.3:80", "10.1.2.4:80"), lb(0, "10.1.2.2:80", "10.1.2.3:80"), false},
		{"local added with affinity", lb(60, "10.1.2.2:80", "10.1.2.3:80"), lb(60, "10.1.2.2:80", "10.1.2.3:80", "10.1.2.4:80"), false},
		{"local removed with affinity", lb(60, "10.1.2.2:80", "10.1.2.3:80", "10.1.2.4:80"), lb(60, "10.1.2.2:80", "10.1.2.3:80"), true},
		{"local replaced with affinity", lb(60, "10.1.2.2:80", "10.1.2.3:80"), lb(60, "10.1.2.2:80", "10.1.2.4:80"), true},
		{"weight changed with affinity", lb(60, "10.1.2.2:80", "10.1.2.3:80"), func() vppcfg.Item {
			m := lb(60, "10.1.2.2:80", "10.1.2.3:80")
			m.Locals[0].Probability = 2
			return m
		}(), true},
		{"affinity changed (the layer re-creates)", lb(60, "10.1.2.2:80", "10.1.2.3:80"), lb(30, "10.1.2.2:80"), false},
	}
	for _, tt := range tests {
		if got := losesAffinityTarget(tt.before, tt.after); got != tt.want {
			t.Errorf("%s: %t, want %t", tt.name, got, tt.want)
		}
	}
}
