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
	"github.com/vppsvc/vppsvc/vppcfg"
)

var (
	nodeIP      = netip.MustParseAddr("192.168.16.1")
	otherNodeIP = netip.MustParseAddr("192.168.16.2")
	nodeIP6     = netip.MustParseAddr("fd00:16::1")
)

func ip(s string) netip.Addr     { return netip.MustParseAddr(s) }
func ap(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }
func pfx(s string) netip.Prefix  { return netip.MustParsePrefix(s) }
func ips(s ...string) model.IPAddresses {
	out := make([]netip.Addr, len(s))
	for i, a := range s {
		out[i] = ip(a)
	}
	return model.NewIPAddresses(out...)
}

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

// be builds a backend from "ip:port" plus flags "local", "hostnet", "term".
func be(addr string, flags ...string) model.ServiceBackend {
	a := ap(addr)
	b := model.ServiceBackend{IP: a.Addr(), Port: a.Port()}
	for _, f := range flags {
		switch f {
		case "local":
			b.Local = true
		case "hostnet":
			b.HostNetwork = true
		case "term":
			b.Terminating = true
		default:
			panic("unknown backend flag " + f)
		}
	}
	return b
}

// service builds a ClusterIP service "default/<name>" with one unnamed TCP
// port 80 and the given mutators applied.
func service(name, clusterIP string, mutate ...func(*model.ContivService)) *model.ContivService {
	s := &model.ContivService{
		ID:         model.ServiceID{Namespace: "default", Name: name},
		ClusterIPs: ips(clusterIP),
		Ports:      map[string]model.ServicePort{"": {Protocol: model.ProtocolTCP, Port: 80}},
		Backends:   map[string][]model.ServiceBackend{},
	}
	for _, m := range mutate {
		m(s)
	}
	return s
}

func withBackends(port string, bs ...model.ServiceBackend) func(*model.ContivService) {
	return func(s *model.ContivService) { s.Backends[port] = bs }
}

func withPort(name string, proto model.Protocol, port, nodePort uint16) func(*model.ContivService) {
	return func(s *model.ContivService) {
		s.Ports[name] = model.ServicePort{Protocol: proto, Port: port, NodePort: nodePort}
	}
}

func withoutDefaultPort(s *model.ContivService) { delete(s.Ports, "") }

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
