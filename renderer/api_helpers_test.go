package renderer_test

import (
	"net/netip"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/renderer/renderertest"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// Test address plan: 10.96.0.0/16 and fd00:96::/112 ClusterIPs,
// 198.51.100.0/24 and 2001:db8:1b::/64 LoadBalancer IPs, 192.168.16.0/24
// and fd00:16::/64 node IPs, 10.1.1.0/24 and fd00:1:1::/64 pods on this
// node, 10.1.2.0/24 and fd00:1:2::/64 pods elsewhere.

var (
	ap  = netip.MustParseAddrPort
	pfx = netip.MustParsePrefix
	ips = renderertest.IPs
	be  = renderertest.Backend
)

// svc builds service default/<name> with an unnamed TCP port 80 and the
// given ClusterIPs, changed by the mutators.
func svc(name string, clusterIPs model.IPAddresses, mutate ...func(*model.ContivService)) *model.ContivService {
	s := renderertest.Service(name, "10.96.0.1")
	s.ClusterIPs = clusterIPs
	for _, m := range mutate {
		m(s)
	}
	return s
}

func fe(kind renderer.FrontendKind, addr string) renderer.Frontend {
	return renderer.Frontend{Kind: kind, Addr: ap(addr), Protocol: vppcfg.ProtoTCP}
}
