package topology

import (
	"net/netip"
	"testing"
)

// Every link name the lab makes fits the kernel's 15 bytes, for the most
// nodes and pods the plan allows.
func TestLinkNamesFitTheKernel(t *testing.T) {
	n := Names{Prefix: DefaultPrefix}
	names := []string{n.Bridge(), n.ExternalLink()}
	for i := 1; i <= 9; i++ {
		names = append(names, n.Uplink(i), n.UplinkPort(i), n.HostLink(i), n.PodLink(i, MaxPodsPerNode))
	}
	for _, name := range names {
		if len(name) > 15 {
			t.Errorf("link %q is %d bytes, over the kernel's 15", name, len(name))
		}
	}
}

// PodSlot is the inverse of PodIPs on both families, and 0 elsewhere.
func TestPodSlotInvertsPodIPs(t *testing.T) {
	for _, node := range []Node{{Name: NodeName(1), Index: 1}, {Name: NodeName(2), Index: 2}} {
		for k := 1; k <= MaxPodsPerNode; k++ {
			for _, ip := range node.PodIPs(k) {
				if got := node.PodSlot(ip); got != k {
					t.Fatalf("%s: PodSlot(%s) = %d, want %d", node.Name, ip, got, k)
				}
			}
		}
		for _, other := range []string{"10.244.9.11", "fd00:244:9::b", "192.168.77.11", "10.244.1.5"} {
			if node.Index == 1 && other == "10.244.1.5" {
				if got := node.PodSlot(netip.MustParseAddr(other)); got != 0 {
					t.Errorf("PodSlot(%s) = %d, want 0 (below the first slot)", other, got)
				}
				continue
			}
			if got := node.PodSlot(netip.MustParseAddr(other)); got != 0 {
				t.Errorf("%s: PodSlot(%s) = %d, want 0", node.Name, other, got)
			}
		}
	}
}

// Nodes' addresses never overlap: node IPs, pod CIDRs and host links are
// each node's own (a shared host link lost the replies of remote
// endpoints to the node's own traffic).
func TestNodesOwnTheirAddresses(t *testing.T) {
	seen := map[netip.Prefix]string{}
	for i := 1; i <= 9; i++ {
		n := Node{Name: NodeName(i), Index: i}
		var ps []netip.Prefix
		for _, ip := range n.IPs() {
			ps = append(ps, netip.PrefixFrom(ip, ip.BitLen()))
		}
		ps = append(ps, n.PodCIDRs()...)
		ps = append(ps, n.HostLinks()...)
		for _, p := range ps {
			for q, owner := range seen {
				if p.Overlaps(q) {
					t.Errorf("%s's %s overlaps %s's %s", n.Name, p, owner, q)
				}
			}
		}
		for _, p := range ps {
			seen[p] = n.Name
		}
	}
}
