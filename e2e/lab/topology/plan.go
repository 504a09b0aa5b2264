// Package topology is the lab's address plan and the names of everything it
// creates: pure values, shared by the lab's control plane, its node agents and
// its tests.
package topology

import (
	"fmt"
	"net/netip"
)

// The lab's address plan; every address is unique in the lab.
var (
	// Uplink is the segment of the Linux bridge every node's uplink and the
	// external client join.
	UplinkV4 = netip.MustParsePrefix("192.168.77.0/24")
	UplinkV6 = netip.MustParsePrefix("fd00:77::/64")
	// ExternalClientV4/V6 are the external client's addresses on the bridge.
	ExternalClientV4 = netip.MustParseAddr("192.168.77.100")
	ExternalClientV6 = netip.MustParseAddr("fd00:77::100")
	// RefusedClientV4/V6 are a second address of the external client, used as
	// the source a LoadBalancer's source ranges do not allow.
	RefusedClientV4 = netip.MustParseAddr("192.168.77.200")
	RefusedClientV6 = netip.MustParseAddr("fd00:77::200")

	// ServiceCIDRs are the API server's service ranges.
	ServiceCIDRV4 = netip.MustParsePrefix("10.96.0.0/16")
	ServiceCIDRV6 = netip.MustParsePrefix("fd00:96::/112")

	// LoadBalancerPoolV4/V6 are what the lab's LoadBalancer allocator hands
	// out (as MetalLB would from its pool); the external client routes them
	// to the first node.
	LoadBalancerPoolV4 = netip.MustParsePrefix("192.168.78.0/24")
	LoadBalancerPoolV6 = netip.MustParsePrefix("fd00:78::/112")
	// ExternalIPsV4/V6 is where tests pick Service externalIPs from; routed
	// like the pool.
	ExternalIPsV4 = netip.MustParsePrefix("192.168.79.0/24")
	ExternalIPsV6 = netip.MustParsePrefix("fd00:79::/112")

	// PodGatewayV4/V6 is the next hop every pod routes through: a static
	// neighbour with the MAC of the pod's VPP interface, so neither ARP nor
	// ND has to cross VPP's unnumbered pod interfaces.
	PodGatewayV4 = netip.MustParseAddr("169.254.1.1")
	PodGatewayV6 = netip.MustParseAddr("fe80::1")
)

// NodePortRange is the API server's --service-node-port-range.
const NodePortRange = "30000-30999"

// A VPP node's kernel sends its own traffic to its node IPs on a node
// port to VPP (policy rules at NodePortRulePref, table NodePortTable: a
// default route via VPP's host link), except the health-check node ports,
// which its node agent exempts at HealthCheckRulePref (back to the local
// table); the local table's own rule moves to LocalRulePref, after them.
const (
	HealthCheckRulePref = 80
	NodePortRulePref    = 90
	LocalRulePref       = 100
	NodePortTable       = 90
)

// Node is one lab node's place in the plan.
type Node struct {
	Name  string
	Index int // 1-based
	Kind  Kind
}

// NodeName is the Kubernetes name of node i (1-based).
func NodeName(i int) string { return fmt.Sprintf("node-%c", 'a'+i-1) }

// IPs are the node's addresses on the uplink: InternalIPs, on VPP's uplink0.
func (n Node) IPs() []netip.Addr {
	return []netip.Addr{nth(UplinkV4, 10+n.Index), nth(UplinkV6, 10+n.Index)}
}

// PodCIDRs are the node's pod ranges, one per family.
func (n Node) PodCIDRs() []netip.Prefix {
	return []netip.Prefix{
		netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 244, byte(n.Index), 0}), 24),
		netip.PrefixFrom(netip.MustParseAddr(fmt.Sprintf("fd00:244:%x::", n.Index)), 64),
	}
}

// PodIPs are the addresses of the pod in slot k of the node (k ≥ 1).
func (n Node) PodIPs(k int) []netip.Addr {
	c := n.PodCIDRs()
	return []netip.Addr{nth(c[0], 10+k), nth(c[1], 10+k)}
}

// PodSlot is the inverse of PodIPs: the slot of a pod IP of this node, or 0.
func (n Node) PodSlot(ip netip.Addr) int {
	for _, c := range n.PodCIDRs() {
		if !c.Contains(ip) {
			continue
		}
		b := ip.As16()
		k := int(b[15]) - 10
		if ip.Is4() {
			k = int(ip.As4()[3]) - 10
		}
		if k >= 1 && k <= MaxPodsPerNode {
			return k
		}
	}
	return 0
}

// MaxPodsPerNode bounds the slots (and the names they make).
const MaxPodsPerNode = 200

// HostLinks are the node's links between VPP (host0, .1 and ::1) and its
// own kernel (.2 and ::2), one prefix per family. Each node has its own,
// routed by the other nodes to it: vppsvc keeps the source address of the
// node's own traffic to a ClusterIP (it does not masquerade it to the node
// IP as kube-proxy does), so an endpoint on another node answers the host
// link's address, and that address must lead back to this node.
func (n Node) HostLinks() []netip.Prefix {
	return []netip.Prefix{
		netip.PrefixFrom(netip.AddrFrom4([4]byte{172, 30, byte(n.Index), 0}), 24),
		netip.PrefixFrom(netip.MustParseAddr(fmt.Sprintf("fd00:ffff:%x::", n.Index)), 64),
	}
}

// HostIPs are the node kernel's addresses on its host link.
func (n Node) HostIPs() []netip.Addr {
	l := n.HostLinks()
	return []netip.Addr{nth(l[0], 2), nth(l[1], 2)}
}

// VPPHostLinkPrefixes are VPP's addresses on the node's host0.
func (n Node) VPPHostLinkPrefixes() []netip.Prefix {
	l := n.HostLinks()
	return []netip.Prefix{netip.PrefixFrom(nth(l[0], 1), l[0].Bits()), netip.PrefixFrom(nth(l[1], 1), l[1].Bits())}
}

// nth is the address n above the prefix's base.
func nth(p netip.Prefix, n int) netip.Addr {
	a := p.Masked().Addr()
	b := a.AsSlice()
	carry := n
	for i := len(b) - 1; i >= 0 && carry > 0; i-- {
		s := int(b[i]) + carry
		b[i] = byte(s & 0xff)
		carry = s >> 8
	}
	out, _ := netip.AddrFromSlice(b)
	return out
}

// Nth is the address n above the prefix's base (for tests choosing
// external IPs from ExternalIPsV4/V6).
func Nth(p netip.Prefix, n int) netip.Addr { return nth(p, n) }
