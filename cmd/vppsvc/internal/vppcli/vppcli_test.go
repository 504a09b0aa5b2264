package vppcli

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"

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
		"set acl-plugin interface uplink0 input acl 1",
	}, Lines(items))
}

// A service ACL whose name sorts after the permit-all ACL must still be bound
// before it: VPP evaluates an interface's list in the order it was built.
func TestBindingsInPriorityOrder(t *testing.T) {
	items := []vppcfg.Item{
		&vppcfg.ACL{Name: "a-permit-all", Rules: []vppcfg.ACLRule{{Action: vppcfg.ACLPermit, Src: pf("0.0.0.0/0"), Dst: pf("0.0.0.0/0")}}},
		&vppcfg.ACL{Name: "z-service", Rules: []vppcfg.ACLRule{{Action: vppcfg.ACLDeny, Src: pf("0.0.0.0/0"), Dst: pf("10.96.0.18/32")}}},
		&vppcfg.ACLBinding{Interface: "uplink0", Direction: vppcfg.ACLInput, ACL: "a-permit-all", Priority: 1 << 30},
		&vppcfg.ACLBinding{Interface: "uplink0", Direction: vppcfg.ACLInput, ACL: "z-service", Priority: 1000},
	}
	assert.Equal(t, []string{
		"set acl-plugin acl permit src 0.0.0.0/0 dst 0.0.0.0/0 tag a-permit-all",
		"set acl-plugin acl deny src 0.0.0.0/0 dst 10.96.0.18/32 tag z-service",
		"set acl-plugin interface uplink0 input acl 1",
		"set acl-plugin interface uplink0 input acl 0",
	}, Lines(items))
}

func TestCNATLines(t *testing.T) {
	items := []vppcfg.Item{
		&vppcfg.CNATTranslation{VIP: ap("[fd00:96::10]:80"), Protocol: vppcfg.ProtoTCP, LBType: vppcfg.CNATLBMaglev, FlowHash: vppcfg.CNATHashSrcIP, Paths: []vppcfg.CNATPath{
			{Dst: ap("[fd00:1:1::2]:8080")}, {Src: ap("[2001:db8:16::1]:0"), Dst: ap("[fd00:1:2::2]:8080")}}, AllocPort: true},
		&vppcfg.CNATSnatConfig{SnatIP6: ip("2001:db8:16::1"), Policy: vppcfg.CNATSnatPolicyK8s, ExcludePrefixes: []netip.Prefix{pf("fd00:96::/108")}},
		&vppcfg.CNATSnatInterface{Interface: "tap-x", Table: vppcfg.CNATSnatPod},
		&vppcfg.InterfaceFeature{Interface: "tap-x", Arc: "ip6-unicast", Feature: "cnat-snat-ip6"},
	}
	assert.Equal(t, []string{
		"set cnat snat-policy addr 2001:db8:16::1",
		"set cnat snat-policy k8s",
		"set cnat snat-policy prefix fd00:96::/108",
		"set cnat snat-policy if table k8s tap-x",
		"set interface feature tap-x cnat-snat-ip6 arc ip6-unicast",
		"cnat translation add proto tcp vip fd00:96::10 80 to ->fd00:1:1::2 8080 to 2001:db8:16::1 0->fd00:1:2::2 8080 maglev  # api: flags alloc-port, flow-hash-config 0x1",
	}, Lines(items))
}
