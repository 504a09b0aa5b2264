package processor

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
)

func TestParseNode(t *testing.T) {
	n := makeNode("node-b", "192.168.0.2", "zone-b", func(n *corev1.Node) {
		n.Status.Addresses = append(n.Status.Addresses,
			corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: "203.0.113.2"},
			corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "fd00:192::2"},
			corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "192.168.0.2"},
			corev1.NodeAddress{Type: corev1.NodeHostName, Address: "node-b"},
			corev1.NodeAddress{Type: corev1.NodeInternalDNS, Address: "node-b.cluster.local"},
			corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: "203.0.113.x"},
		)
	})
	info, probs := parseNode(n)
	assert.Equal(t, []netip.Addr{ip("192.168.0.2"), ip("203.0.113.2"), ip("fd00:192::2")}, info.ips)
	assert.Equal(t, "zone-b", info.zone)
	assert.Equal(t, []Problem{{Kind: KindNode, Object: "node-b", Field: "status.addresses[].address", Value: "203.0.113.x", Reason: "not an IP address; skipped"}}, probs)
}

func TestNodeCache(t *testing.T) {
	c := newNodeCache(thisNode)
	info := func(zone string, addrs ...string) nodeInfo {
		return nodeInfo{ips: ips(addrs...), zone: zone}
	}
	assert.Equal(t, nodeChange{changedIPs: []netip.Addr{ip("192.168.0.2")}}, c.set("node-b", info("zone-b", "192.168.0.2")))
	assert.Equal(t, nodeChange{}, c.set("node-b", info("zone-b", "192.168.0.2")), "unchanged")
	assert.Equal(t, nodeChange{}, c.set("node-b", info("zone-x", "192.168.0.2")), "another node's zone is not ours")
	assert.Equal(t, nodeChange{changedIPs: []netip.Addr{ip("192.168.0.1")}, zoneChanged: true}, c.set(thisNode, info(thisZone, "192.168.0.1")))
	assert.Equal(t, thisZone, c.zone())
	assert.Equal(t, nodeChange{}, c.set("node-c", info("", "192.168.0.2")), "shared IP already counted")
	assert.Equal(t, ips("192.168.0.1", "192.168.0.2"), c.ips)
	assert.Equal(t, nodeChange{}, c.remove("node-b"), "node-c still holds the IP")
	assert.Equal(t, nodeChange{changedIPs: []netip.Addr{ip("192.168.0.2")}}, c.remove("node-c"))
	assert.Equal(t, nodeChange{}, c.remove("node-c"), "unknown node")
	assert.Equal(t, nodeChange{changedIPs: []netip.Addr{ip("192.168.0.1"), ip("192.168.0.3")}}, c.set(thisNode, info(thisZone, "192.168.0.3")))
	assert.Equal(t, nodeChange{changedIPs: []netip.Addr{ip("192.168.0.3")}, zoneChanged: true}, c.remove(thisNode))
	assert.Empty(t, c.ips)
	assert.Equal(t, "", c.zone())
}
