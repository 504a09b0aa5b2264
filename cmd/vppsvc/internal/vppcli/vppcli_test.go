package vppcli

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/vppcfg"
)

var (
	ap = netip.MustParseAddrPort
	ip = netip.MustParseAddr
	pf = netip.MustParsePrefix
)

func TestLinesInCreationOrder(t *testing.T) {
	items := []vppcfg.Item{
		&vppcfg.ACLBinding{Interface: "uplink0", Direction: vppcfg.ACLInput, ACL: "vppsvc-permit-all", Priority: 1000},
		&vppcfg.NAT44LBMapping{External: ap("10.96.0.10:80"), Protocol: vppcfg.ProtoTCP, Out2InOnly: true, TwiceNAT: vppcfg.TwiceNATSelf, Affinity: 60,
			Locals: []vppcfg.NAT44LBLocal{{Addr: ap("10.1.1.2:8080"), Probability: 1}, {Addr: ap("10.1.2.2:8080"), Probability: 1}}, Label: "default/web"},
		&vppcfg.NAT44StaticMapping{External: ap("192.168.16.1:30080"), Protocol: vppcfg.ProtoTCP, Local: ap("10.1.1.2:8080"), Out2InOnly: true, TwiceNAT: vppcfg.TwiceNATAlways},
		&vppcfg.NAT44Interface{Interface: "tap-x", Role: vppcfg.NAT44Inside},
		&vppcfg.NAT44Interface{Interface: "uplink0", Role: vppcfg.NAT44Output},
		&vppcfg.NAT44Address{Addr: ip("192.168.16.1"), TwiceNAT: true, VRF: vppcfg.AnyVRF},
		&vppcfg.NAT44Global{Forwarding: true, Timeouts: vppcfg.NAT44Timeouts{UDP: 30}},
		&vppcfg.NAT44IdentityMapping{Addr: ip("192.168.16.1"), Port: 4789, Protocol: vppcfg.ProtoUDP},
		&vppcfg.ACL{Name: "vppsvc-permit-all", Rules: []vppcfg.ACLRule{{Action: vppcfg.ACLPermit, Src: pf("0.0.0.0/0"), Dst: pf("0.0.0.0/0")}}},
		&vppcfg.ACL{Name: "nat44-web", Rules: []vppcfg.ACLRule{{Action: vppcfg.ACLDeny, Src: pf("0.0.0.0/0"), Dst: pf("10.96.0.18/32"), Protocol: vppcfg.ProtoTCP, DstPorts: vppcfg.SinglePort(80)}}},
	}
	assert.Equal(t, []string{
		"nat44 plugin enable inside-vrf 0 outside-vrf 0",
		"nat44 forwarding enable",
		"set nat timeout udp 30",
		"nat44 add address 192.168.16.1 twice-nat",
		"set interface nat44 in tap-x",
		"set interface nat44 out uplink0 output-feature",
		"nat44 add static mapping tcp local 10.1.1.2 8080 external 192.168.16.1 30080 vrf 0 twice-nat out2in-only",
		"nat44 add identity mapping 192.168.16.1 udp 4789 vrf 0",
		"nat44 add load-balancing static mapping protocol tcp external 10.96.0.10:80 local 10.1.1.2:8080 vrf 0 probability 1 local 10.1.2.2:8080 vrf 0 probability 1 self-twice-nat out2in-only affinity 60  # api: tag for default/web",
		"set acl-plugin acl deny src 0.0.0.0/0 dst 10.96.0.18/32 proto 6 sport 0-65535 dport 80 tag nat44-web",
		"set acl-plugin acl permit src 0.0.0.0/0 dst 0.0.0.0/0 tag vppsvc-permit-all",
		"binary-api acl_interface_set_acl_list uplink0 input 1",
	}, Lines(items))
}

// A service ACL whose name sorts after the permit-all ACL must still be bound
// before it: VPP evaluates an interface's list in the order it is given.
// The bindings of an interface are one list, input then output.
func TestBindingsInPriorityOrder(t *testing.T) {
	items := []vppcfg.Item{
		&vppcfg.ACL{Name: "a-permit-all", Rules: []vppcfg.ACLRule{{Action: vppcfg.ACLPermit, Src: pf("0.0.0.0/0"), Dst: pf("0.0.0.0/0")}}},
		&vppcfg.ACL{Name: "z-service", Rules: []vppcfg.ACLRule{{Action: vppcfg.ACLDeny, Src: pf("0.0.0.0/0"), Dst: pf("10.96.0.18/32")}}},
		&vppcfg.ACLBinding{Interface: "uplink0", Direction: vppcfg.ACLInput, ACL: "a-permit-all", Priority: 1 << 30},
		&vppcfg.ACLBinding{Interface: "uplink0", Direction: vppcfg.ACLInput, ACL: "z-service", Priority: 1000},
		&vppcfg.ACLBinding{Interface: "uplink0", Direction: vppcfg.ACLOutput, ACL: "a-permit-all", Priority: 1},
		&vppcfg.ACLBinding{Interface: "host0", Direction: vppcfg.ACLInput, ACL: "missing", Priority: 1},
	}
	assert.Equal(t, []string{
		"set acl-plugin acl permit src 0.0.0.0/0 dst 0.0.0.0/0 tag a-permit-all",
		"set acl-plugin acl deny src 0.0.0.0/0 dst 10.96.0.18/32 tag z-service",
		"binary-api acl_interface_set_acl_list host0 input <index of missing>",
		"binary-api acl_interface_set_acl_list uplink0 input 1 0 output 0",
	}, Lines(items))
}

// Empty filter shards are introduced once, by a comment that says why
// they hold a rule; shards with rules are printed as they are.
func TestPlaceholderShards(t *testing.T) {
	shards := renderer.ACLShards{Renderer: "nat44", Count: 4, Family: renderer.IPv4}
	deny := vppcfg.ACLRule{Action: vppcfg.ACLDeny, Src: pf("0.0.0.0/0"), Dst: pf("10.96.0.18/32"), Protocol: vppcfg.ProtoTCP, DstPorts: vppcfg.SinglePort(80)}
	items := []vppcfg.Item{shards.ACL(0, nil), shards.ACL(1, nil), shards.ACL(2, []vppcfg.ACLRule{deny}), shards.ACL(3, nil)}
	six := renderer.ACLShards{Renderer: "ipv6", Count: 1, Family: renderer.IPv6}.ACL(0, nil)
	assert.True(t, six.IsPlaceholder(), "the IPv6 placeholder")
	assert.False(t, items[2].(*vppcfg.ACL).IsPlaceholder())
	assert.False(t, (&vppcfg.ACL{Name: "two", Rules: []vppcfg.ACLRule{shards.Placeholder(), shards.Placeholder()}}).IsPlaceholder())
	got := Lines(items)
	assert.Equal(t, []string{
		"# 3 empty filter shards have no rules. VPP denies everything on an ACL without rules, so each holds",
		"#   one placeholder permit-nothing rule (docs/glossary.md#filter-shard): nat44-filter-00,",
		"#   nat44-filter-01, nat44-filter-03",
		"set acl-plugin acl permit src 0.0.0.0/32 dst 0.0.0.0/32 proto 6 sport 0-65535 dport 0-65535 tag nat44-filter-00  # placeholder",
		"set acl-plugin acl permit src 0.0.0.0/32 dst 0.0.0.0/32 proto 6 sport 0-65535 dport 0-65535 tag nat44-filter-01  # placeholder",
		"set acl-plugin acl deny src 0.0.0.0/0 dst 10.96.0.18/32 proto 6 sport 0-65535 dport 80 tag nat44-filter-02",
		"set acl-plugin acl permit src 0.0.0.0/32 dst 0.0.0.0/32 proto 6 sport 0-65535 dport 0-65535 tag nat44-filter-03  # placeholder",
	}, got)
}

func TestNameRanges(t *testing.T) {
	tests := []struct {
		names []string
		want  string
	}{
		{nil, ""},
		{[]string{"a-00", "a-01", "a-02", "a-04"}, "a-00…02, a-04"},
		{[]string{"a-00", "a-01"}, "a-00, a-01"},
		{[]string{"a-08", "a-09", "a-10", "b-11", "x"}, "a-08…10, b-11, x"},
		{[]string{"a-8", "a-9", "a-10"}, "a-8, a-9, a-10"}, // widths differ: not one run
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, nameRanges(tt.names), "%v", tt.names)
	}
}

func TestWrap(t *testing.T) {
	assert.Equal(t, []string{"# one two", "#   three"}, Wrap("# ", "#   ", "one two three", 10))
	assert.Equal(t, []string{"# "}, Wrap("# ", "#   ", "", 10), "nothing to wrap")
	assert.Equal(t, []string{"# a", "#   waytoolongword", "#   b"}, Wrap("# ", "#   ", "a waytoolongword b", 10),
		"a word longer than the line is not cut")
	assert.Equal(t, []string{"→ → →"}, Wrap("", "", "→ → →", 5), "characters, not bytes")
}

func TestCNATLines(t *testing.T) {
	items := []vppcfg.Item{
		&vppcfg.CNATTranslation{VIP: ap("[fd00:96::10]:80"), Protocol: vppcfg.ProtoTCP, LBType: vppcfg.CNATLBMaglev, FlowHash: vppcfg.CNATHashSrcIP, Paths: []vppcfg.CNATPath{
			{Dst: ap("[fd00:1:1::2]:8080")}, {Src: ap("[2001:db8:16::1]:0"), Dst: ap("[fd00:1:2::2]:8080")}}, AllocPort: true},
		&vppcfg.CNATSnatConfig{SnatIP6: ip("2001:db8:16::1"), Policy: vppcfg.CNATSnatPolicyK8s, ExcludePrefixes: []netip.Prefix{pf("fd00:96::/108")}},
		&vppcfg.CNATSnatInterface{Interface: "tap-x", Table: vppcfg.CNATSnatPod},
		&vppcfg.InterfaceFeature{Interface: "tap-x", Arc: "ip6-unicast", Feature: "cnat-snat-ip6"},
		// A flow keeper: protocol 253 under the name VPP's CLI parses.
		&vppcfg.CNATTranslation{VIP: ap("[fd00:96::11]:0"), Protocol: vppcfg.ProtoExperiment, Paths: []vppcfg.CNATPath{{Dst: ap("[fd00:1:2::2]:8080")}}},
	}
	assert.Equal(t, []string{
		"set cnat snat-policy addr 2001:db8:16::1",
		"set cnat snat-policy k8s",
		"set cnat snat-policy prefix fd00:96::/108",
		"set cnat snat-policy if table k8s tap-x",
		"set interface feature tap-x cnat-snat-ip6 arc ip6-unicast",
		"cnat translation add proto tcp vip fd00:96::10 80 to ->fd00:1:1::2 8080 to 2001:db8:16::1 0->fd00:1:2::2 8080 maglev  # api: flags alloc-port, flow-hash-config 0x1",
		"cnat translation add proto exp1 vip fd00:96::11 0 to ->fd00:1:2::2 8080",
	}, Lines(items))
}
