package renderertest

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"

	"github.com/vppsvc/vppsvc/model"
)

// world is a random cluster as the processor presents it to renderers.
// Values are drawn from small pools of both address families so that
// sequences hit the cases renderers must get right: services sharing an
// external IP and port, an external IP that becomes a node IP, ports losing
// their last endpoint, terminating endpoints, single- and dual-stack
// services, SCTP ports and loadBalancerSourceRanges. Every value is valid
// processor output: addresses of the families of the ClusterIPs only,
// masked and sorted source ranges, backends sorted and unique by IP:port.
type world struct {
	rng      *rand.Rand
	services map[model.ServiceID]*model.ContivService
	node     model.ResyncEventData // node context only; Services unused
}

func newWorld(rng *rand.Rand) *world {
	w := &world{rng: rng, services: map[model.ServiceID]*model.ContivService{}}
	w.node.NodeIPs = ips("192.168.16.1", "192.168.16.2", "fd00:16::1", "fd00:16::2")
	w.node.FrontendIfs = model.NewInterfaces("uplink0", "host0", "tap1")
	w.node.BackendIfs = model.NewInterfaces("tap1")
	return w
}

// event is the Resync event of the current state.
func (w *world) event() *model.ResyncEventData {
	ev := &model.ResyncEventData{NodeIPs: w.node.NodeIPs, FrontendIfs: w.node.FrontendIfs, BackendIfs: w.node.BackendIfs}
	for _, s := range w.services {
		ev.Services = append(ev.Services, s)
	}
	ev.SortServices()
	return ev
}

func (w *world) pick(n int) int    { return w.rng.IntN(n) }
func (w *world) chance(n int) bool { return w.rng.IntN(n) == 0 }

var (
	ip  = netip.MustParseAddr
	pfx = netip.MustParsePrefix
	ips = IPs
)

// subset returns a random subset of addrs in the families of fam.
func (w *world) subset(fam model.IPAddresses, addrs ...string) model.IPAddresses {
	var out []netip.Addr
	for _, a := range addrs {
		if w.chance(2) && hasFamilyOf(fam, ip(a)) {
			out = append(out, ip(a))
		}
	}
	return model.NewIPAddresses(out...)
}

func hasFamilyOf(set model.IPAddresses, a netip.Addr) bool {
	return slices.ContainsFunc(set, func(b netip.Addr) bool { return b.Is4() == a.Is4() })
}

// serviceID picks one of eight IDs, so that services come and go.
func (w *world) serviceID() model.ServiceID {
	return model.ServiceID{Namespace: []string{"default", "other"}[w.pick(2)], Name: fmt.Sprint("svc", w.pick(4))}
}

// randomService draws a service value for id.
func (w *world) randomService(id model.ServiceID) *model.ContivService {
	n := int(id.Name[len(id.Name)-1]-'0') + 4*boolInt(id.Namespace == "other")
	v4, v6 := fmt.Sprintf("10.96.0.%d", 10+n), fmt.Sprintf("fd00:96::%x", 0x10+n)
	s := &model.ContivService{ID: id}
	switch w.pick(4) {
	case 0:
		s.ClusterIPs = ips(v4)
	case 1:
		s.ClusterIPs = ips(v6)
	default:
		s.ClusterIPs = ips(v4, v6)
	}
	if w.chance(2) {
		s.ExternalTrafficPolicy = model.TrafficPolicyLocal
	}
	if w.chance(4) {
		s.InternalTrafficPolicy = model.TrafficPolicyLocal
	}
	if w.chance(3) {
		s.SessionAffinityTimeout = 600
	}
	// 192.168.16.3 and fd00:16::3 are sometimes node IPs.
	s.ExternalIPs = w.subset(s.ClusterIPs, "203.0.113.1", "203.0.113.2", "192.168.16.3", "2001:db8:e::1", "2001:db8:e::2", "fd00:16::3")
	s.LoadBalancerIPs = w.subset(s.ClusterIPs, "198.51.100.1", "203.0.113.2", "2001:db8:1b::1", "2001:db8:e::2")
	if len(s.LoadBalancerIPs) > 0 && w.chance(2) {
		ranges := []netip.Prefix{pfx("100.64.1.0/24"), pfx("2001:db8:c:1::/64"), pfx("::ffff:100.64.2.0/120")}
		for _, p := range ranges {
			if w.chance(2) {
				s.LoadBalancerSourceRanges = append(s.LoadBalancerSourceRanges, p)
			}
		}
		slices.SortFunc(s.LoadBalancerSourceRanges, comparePrefixes)
	}
	protos := []model.Protocol{model.ProtocolTCP, model.ProtocolTCP, model.ProtocolUDP, model.ProtocolSCTP}
	for i, name := range []string{"a", "b"}[:1+w.pick(2)] {
		p := model.ServicePort{Protocol: protos[w.pick(len(protos))], Port: uint16(80 + i)}
		if w.chance(2) {
			p.NodePort = uint16(30000 + 10*n + i)
		}
		s.SetPort(name, p)
		if bs := w.backends(s.ClusterIPs); len(bs) > 0 {
			s.SetBackends(name, bs)
		}
	}
	return s
}

// backends draws the endpoints of one port: pods on this node and another,
// a host-network endpoint on this node, some terminating.
func (w *world) backends(fam model.IPAddresses) []model.ServiceBackend {
	var out []model.ServiceBackend
	add := func(addr string, local, hostNet bool) {
		if w.chance(2) && hasFamilyOf(fam, ip(addr)) {
			out = append(out, model.ServiceBackend{IP: ip(addr), Port: 8080, Local: local, HostNetwork: hostNet, Terminating: w.chance(4)})
		}
	}
	for j := range 3 {
		add(fmt.Sprintf("10.1.1.%d", 2+j), true, false)
		add(fmt.Sprintf("10.1.2.%d", 2+j), false, false)
		add(fmt.Sprintf("fd00:1:1::%d", 2+j), true, false)
		add(fmt.Sprintf("fd00:1:2::%d", 2+j), false, false)
	}
	add("192.168.16.1", true, true)
	add("fd00:16::1", true, true)
	slices.SortFunc(out, model.CompareBackends)
	return out
}

func comparePrefixes(a, b netip.Prefix) int {
	if c := a.Addr().Compare(b.Addr()); c != 0 {
		return c
	}
	return a.Bits() - b.Bits()
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// randomNodeIPs draws the node IPs of the cluster.
func (w *world) randomNodeIPs() model.IPAddresses {
	out := ips("192.168.16.1", "fd00:16::1") // this node's
	for _, a := range []string{"192.168.16.2", "192.168.16.3", "fd00:16::2", "fd00:16::3"} {
		if w.chance(2) {
			out = out.Union(ips(a))
		}
	}
	return out
}

// randomTaps draws the interfaces of local pods.
func (w *world) randomTaps() []string {
	var out []string
	for i := range 3 {
		if w.chance(2) {
			out = append(out, fmt.Sprint("tap", i))
		}
	}
	return out
}
