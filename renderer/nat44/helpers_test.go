package nat44

// Test address plan, shared by every test of this package:
//
//	192.168.16.1       this node (uplink0), also the twice-NAT address
//	192.168.16.2       another node
//	fd00:16::1         an IPv6 node IP (ignored by this renderer)
//	10.1.1.0/24        pods on this node (tap interfaces)
//	10.1.2.0/24        pods on the other node
//	10.96.0.0/12       ClusterIPs; fd00:96::/112 their IPv6 twins
//	203.0.113.0/24     external IPs
//	198.51.100.0/24    LoadBalancer ingress IPs
//	100.64.0.0/16      external clients

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer/renderertest"
	"github.com/vppsvc/vppsvc/vppcfg"
)

var (
	nodeIP      = netip.MustParseAddr("192.168.16.1")
	otherNodeIP = netip.MustParseAddr("192.168.16.2")
	nodeIP6     = netip.MustParseAddr("fd00:16::1")
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

// testConfig is DefaultConfig with the twice-NAT address of the plan.
func testConfig() Config {
	cfg := DefaultConfig()
	cfg.TwiceNATAddress = nodeIP
	return cfg
}

// testNode is this node with the plan's node IPs, uplink0 and host0 as
// frontend interfaces plus one tap per local pod.
func testNode() Node {
	return Node{
		IPs:         ips("192.168.16.1", "192.168.16.2", "fd00:16::1"),
		FrontendIfs: model.NewInterfaces("uplink0", "host0", "tap1", "tap2"),
		BackendIfs:  model.NewInterfaces("tap1"),
	}
}

func withoutDefaultPort(s *model.ContivService) { s.DeletePort("") }

// itemLines renders items one per line, for readable diffs.
func itemLines(items []vppcfg.Item) string {
	var b strings.Builder
	for _, it := range items {
		b.WriteString(it.Key().String() + " = " + it.String() + "\n")
	}
	return b.String()
}

func assertItems(t *testing.T, got, want []vppcfg.Item) {
	t.Helper()
	ok := len(got) == len(want)
	for i := 0; ok && i < len(got); i++ {
		ok = got[i].Key() == want[i].Key() && got[i].Equal(want[i])
	}
	if !ok {
		t.Fatalf("items differ\n--- got\n%s--- want\n%s", itemLines(got), itemLines(want))
	}
}
