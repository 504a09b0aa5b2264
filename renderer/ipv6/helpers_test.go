package ipv6

// Test address plan, shared by every test of this package (trace_test.go
// adds the interfaces and routes of the simulated node):
//
//	fd00:16::1          this node (uplink0), also the SNAT address
//	fd00:16::2          another node
//	192.168.16.1        an IPv4 node IP (the NAT44 renderer's)
//	fd00:1:1::/64       pods on this node (one tap each)
//	fd00:1:2::/64       pods on the other node (via uplink0)
//	fd00:96::/112       ClusterIPs; 10.96.0.0/12 their IPv4 twins
//	2001:db8:e::/64     external IPs
//	2001:db8:1b::/64    LoadBalancer ingress IPs
//	2001:db8:c::/64     external clients (via uplink0)

import (
	"net/netip"
	"testing"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer/renderertest"
	"github.com/vppsvc/vppsvc/vppcfg"
)

var (
	nodeIP6      = netip.MustParseAddr("fd00:16::1")
	otherNodeIP6 = netip.MustParseAddr("fd00:16::2")
)

const (
	tcp      = vppcfg.ProtoTCP
	udp      = vppcfg.ProtoUDP
	nodePort = 30080
)

func ap(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }
func pfx(s string) netip.Prefix  { return netip.MustParsePrefix(s) }

// Shared builders (renderertest): ips(...), be("ip:port", "local", "hostnet",
// "term"), service(name, clusterIP, mutators...), withBackends, withPort.
var (
	ip           = netip.MustParseAddr
	ips          = renderertest.IPs
	be           = renderertest.Backend
	service      = renderertest.Service
	withBackends = renderertest.WithBackends
	withPort     = renderertest.WithPort
)

// testConfig is DefaultConfig with the SNAT address of the plan.
func testConfig() Config {
	cfg := DefaultConfig()
	cfg.SNATAddress = nodeIP6
	return cfg
}

// testNode is this node with the plan's node IPs, uplink0 and host0 as
// frontend interfaces plus one tap per local pod.
func testNode() Node {
	return Node{
		IPs:         ips("fd00:16::1", "fd00:16::2", "192.168.16.1"),
		FrontendIfs: model.NewInterfaces("uplink0", "host0", "tap1", "tap2"),
	}
}

// withNodePort gives the unnamed TCP port 80 the plan's node port.
func withNodePort(s *model.ContivService) {
	s.SetPort("", model.ServicePort{Protocol: model.ProtocolTCP, Port: 80, NodePort: nodePort})
}

func withoutDefaultPort(s *model.ContivService) { s.DeletePort("") }

func externalLocal(s *model.ContivService) { s.ExternalTrafficPolicy = model.TrafficPolicyLocal }
func internalLocal(s *model.ContivService) { s.InternalTrafficPolicy = model.TrafficPolicyLocal }

// Expected-item builders.

// xlat is a translation of vip with paths; AllocPort follows the paths.
func xlat(vip string, proto vppcfg.Protocol, paths ...vppcfg.CNATPath) *vppcfg.CNATTranslation {
	t := &vppcfg.CNATTranslation{VIP: ap(vip), Protocol: proto, Paths: paths}
	for _, p := range paths {
		if p.Src.IsValid() {
			t.AllocPort = true
		}
	}
	return t
}

// keeper is the flow keeper of a service whose IPv6 ClusterIP is vip.
func keeper(vip string, dsts ...string) *vppcfg.CNATTranslation {
	t := &vppcfg.CNATTranslation{VIP: netip.AddrPortFrom(netip.MustParseAddr(vip), 0), Protocol: vppcfg.ProtoExperiment}
	for _, d := range dsts {
		t.Paths = append(t.Paths, to(d))
	}
	return t
}

// withoutKeepers returns items without the flow keepers.
func withoutKeepers(items []vppcfg.Item) []vppcfg.Item {
	var out []vppcfg.Item
	for _, it := range items {
		if t, ok := it.(*vppcfg.CNATTranslation); ok && t.Protocol == keeperProtocol {
			continue
		}
		out = append(out, it)
	}
	return out
}

// realIP marks a translation's VIP as a node address.
func realIP(t *vppcfg.CNATTranslation) *vppcfg.CNATTranslation { t.IsRealIP = true; return t }

// sticky is a translation of a service with session affinity.
func sticky(t *vppcfg.CNATTranslation) *vppcfg.CNATTranslation {
	t.LBType, t.FlowHash = vppcfg.CNATLBMaglev, vppcfg.CNATHashSrcIP
	return t
}

// to is a path without source NAT, snat one with the plan's SNAT address.
func to(dst string) vppcfg.CNATPath { return vppcfg.CNATPath{Dst: ap(dst)} }
func snat(dst string) vppcfg.CNATPath {
	return vppcfg.CNATPath{Src: netip.AddrPortFrom(nodeIP6, 0), Dst: ap(dst)}
}

func rule(action vppcfg.ACLAction, src, dst string, proto vppcfg.Protocol, dport uint16) vppcfg.ACLRule {
	return vppcfg.ACLRule{
		Action: action, Src: pfx(src), Dst: pfx(dst + "/128"), Protocol: proto,
		SrcPorts: vppcfg.AnyPort, DstPorts: vppcfg.SinglePort(dport),
	}
}

func deny(dst string, proto vppcfg.Protocol, dport uint16) vppcfg.ACLRule {
	return rule(vppcfg.ACLDeny, "::/0", dst, proto, dport)
}

var (
	itemLines  = renderertest.ItemLines
	equalItems = renderertest.EqualItems
)

func assertItems(t *testing.T, got, want []vppcfg.Item) {
	t.Helper()
	if !equalItems(got, want) {
		t.Fatalf("items differ\n--- got\n%s--- want\n%s", itemLines(got), itemLines(want))
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
