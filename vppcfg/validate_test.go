package vppcfg

import (
	"math/rand/v2"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
)

func TestValidation(t *testing.T) {
	tests := []struct {
		name  string
		item  Item
		field string
	}{
		{"LB without locals", lb("10.96.0.10:80"), "Locals"},
		{"LB unspecified local drawn", lb("10.96.0.10:80", "0.0.0.0:80", "10.1.1.1:80"), "Locals[0].Addr"},
		{"LB all-zero weights", lb("10.96.0.10:80", "10.1.1.1:80@0", "10.1.1.2:80@0"), "all probabilities are 0"},
		{"LB weights past VPP's 8-bit sum", lb("10.96.0.10:80", "10.1.1.1:80@200", "10.1.1.2:80@56"), "sum to 256, over 255"},
		{"LB duplicate local", lb("10.96.0.10:80", "10.1.1.1:80", "10.1.1.1:80@5"), "Locals[1]"},
		{"LB IPv6", &NAT44LBMapping{External: ap("[fd00::1]:80"), Protocol: ProtoTCP, Locals: lb("1.1.1.1:1", "10.1.1.1:80", "10.1.1.2:80").Locals}, "External"},
		{"cnat without paths", cnat("10.96.0.20:80", CNATLBDefault), "Paths"},
		{"cnat path of other family", cnat("10.96.0.20:80", CNATLBDefault, "[fd00::2]:80"), "Paths[0].Dst"},
		{"cnat path port 0", cnat("10.96.0.20:80", CNATLBDefault, "10.1.1.1:0"), "port 0"},
		{"ACL families differ", &ACL{Name: "x", Rules: []ACLRule{{Src: pfx("0.0.0.0/0"), Dst: pfx("::/0")}}}, "different families"},
		{"ACL host bits", &ACL{Name: "x", Rules: []ACLRule{{Src: pfx("10.1.1.5/24"), Dst: pfx("0.0.0.0/0")}}}, "Rules[0].Src: host bits set"},
		{"ACL port range", &ACL{Name: "x", Rules: []ACLRule{{Src: pfx("0.0.0.0/0"), Dst: pfx("0.0.0.0/0"), Protocol: ProtoTCP, DstPorts: PortRange{90, 80}}}}, "Rules[0].DstPorts"},
		{"ACL without name", &ACL{}, "Name"},
		{"addr-only with ports", &NAT44StaticMapping{External: ap("1.1.1.1:80"), Local: ap("10.1.1.1:0"), AddrOnly: true}, "AddrOnly"},
		{"addr-only with twice-NAT", &NAT44StaticMapping{External: ap("1.1.1.1:0"), Local: ap("10.1.1.1:0"), AddrOnly: true, TwiceNAT: TwiceNATAlways}, "TwiceNAT"},
		{"static with SCTP", &NAT44StaticMapping{External: ap("1.1.1.1:80"), Local: ap("10.1.1.1:80"), Protocol: ProtoSCTP}, "Protocol"},
		{"identity addr-only with port", &NAT44IdentityMapping{Addr: addr("1.1.1.1"), Port: 22, AddrOnly: true}, "AddrOnly"},
		{"binding without ACL", &ACLBinding{Interface: "tap0", Direction: ACLInput}, "ACL"},
		{"interface without name", &NAT44Interface{Role: NAT44Inside}, "Interface"},
		{"snat table", &CNATSnatInterface{Interface: "tap0", Table: 9}, "Table"},
		{"exclude prefix host bits", &CNATSnatConfig{ExcludePrefixes: []netip.Prefix{pfx("10.0.0.1/8")}}, "ExcludePrefixes[0]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := core.Validate(tc.item)
			require.ErrorIs(t, err, ErrInvalid)
			assert.ErrorContains(t, err, tc.field)
			err = core.ValidateSet("a", []Item{tc.item})
			require.ErrorIs(t, err, ErrInvalid, "as a commit checks it")
			assert.ErrorContains(t, err, tc.field)
		})
	}
}

func TestCanonical(t *testing.T) {
	m := &NAT44LBMapping{External: ap("10.96.0.10:80"), Protocol: ProtoTCP, Locals: []NAT44LBLocal{
		{Addr: ap("10.1.1.3:80"), Probability: 1}, {Addr: ap("10.1.1.2:80"), Probability: 1}}}
	c := core.Canonical(m).(*NAT44LBMapping)
	assert.Equal(t, "10.1.1.2:80", c.Locals[0].Addr.String())
	assert.Equal(t, "10.1.1.3:80", m.Locals[0].Addr.String(), "the caller's value is not modified")
	sorted := lb("10.96.0.10:80", "10.1.1.1:80", "10.1.1.2:80")
	assert.Same(t, sorted, core.Canonical(sorted), "no copy when already canonical")

	a := core.Canonical(&ACL{Name: "x", Rules: []ACLRule{
		{Src: pfx("0.0.0.0/0"), Dst: pfx("0.0.0.0/0")},
		{Src: pfx("0.0.0.0/0"), Dst: pfx("0.0.0.0/0"), Protocol: ProtoICMP, SrcPorts: AnyPort},
	}}).(*ACL)
	assert.Equal(t, AnyPort, a.Rules[0].SrcPorts, "zero range is stored as VPP dumps it")
	assert.Equal(t, PortRange{0, 255}, a.Rules[1].SrcPorts, "ICMP type range is a byte")

	tr := core.Canonical(&CNATTranslation{VIP: ap("10.96.0.20:80"), Protocol: ProtoTCP, Paths: []CNATPath{
		{Src: ap("0.0.0.0:0"), Dst: ap("10.1.1.2:80")}}}).(*CNATTranslation)
	assert.Equal(t, netip.AddrPort{}, tr.Paths[0].Src, "no-SNAT source written one way")
}

// TestFirstDuplicateLocal holds the pairwise walk (up to 32 locals) and
// the set (beyond) to the definition: the first index whose address, port
// and VRF an earlier local has, in canonical order or not.
func TestFirstDuplicateLocal(t *testing.T) {
	want := func(ls []NAT44LBLocal) (int, bool) {
		for i := range ls {
			for j := range i {
				if ls[j].Addr == ls[i].Addr && ls[j].VRF == ls[i].VRF {
					return i, true
				}
			}
		}
		return 0, false
	}
	rng := rand.New(rand.NewPCG(7, 40))
	for n := range 41 { // up to past the 32 compared pairwise
		for range 200 {
			ls := make([]NAT44LBLocal, n)
			for i := range ls {
				// Few addresses, ports and VRFs: duplicates are common.
				ls[i] = NAT44LBLocal{
					Addr:        netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 1, 1, byte(rng.IntN(n + 1))}), uint16(80+rng.IntN(2))),
					Probability: uint8(1 + rng.IntN(3)),
					VRF:         uint32(rng.IntN(2)),
				}
			}
			if rng.IntN(2) == 0 {
				SortLBLocals(ls) // the renderers' canonical order
			}
			i, dup := firstDuplicateLocal(ls)
			wi, wdup := want(ls)
			if i != wi || dup != wdup {
				t.Fatalf("%v: got %d %v, want %d %v", ls, i, dup, wi, wdup)
			}
		}
	}
}
