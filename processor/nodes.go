package processor

import (
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/vppsvc/vppsvc/model"
)

// nodeInfo is what the processor keeps of a Node: its service-relevant
// addresses and its zone. Everything else in a Node (conditions, heartbeats)
// changes often and must not cost a recomputation.
type nodeInfo struct {
	ips  []netip.Addr // InternalIP and ExternalIP, sorted, no duplicates
	zone string       // topology.kubernetes.io/zone label
	// primary is the node's primary IP of each family (IPv4, IPv6), as
	// kube-proxy picks it: the first InternalIP of the family, else the
	// first ExternalIP.
	primary [2]netip.Addr
}

func (n nodeInfo) equal(o nodeInfo) bool {
	return n.zone == o.zone && n.primary == o.primary && slices.Equal(n.ips, o.ips)
}

// parseNode extracts the InternalIP and ExternalIP addresses and the zone of a
// node. Other address types (Hostname, InternalDNS) carry no IP to serve on.
func parseNode(n *corev1.Node) (nodeInfo, []Problem) {
	var info nodeInfo
	var probs []Problem
	var external [2]netip.Addr
	for _, a := range n.Status.Addresses {
		if a.Type != corev1.NodeInternalIP && a.Type != corev1.NodeExternalIP {
			continue
		}
		ip, ok := parseIP(a.Address)
		if !ok {
			probs = append(probs, Problem{Kind: KindNode, Object: n.Name, Field: "status.addresses[].address", Value: a.Address, Reason: "not an IP address; skipped"})
			continue
		}
		info.ips = append(info.ips, ip)
		fam := 0
		if ip.Is6() {
			fam = 1
		}
		first := &info.primary[fam]
		if a.Type == corev1.NodeExternalIP {
			first = &external[fam]
		}
		if !first.IsValid() {
			*first = ip
		}
	}
	for fam := range info.primary {
		if !info.primary[fam].IsValid() {
			info.primary[fam] = external[fam]
		}
	}
	info.ips = model.NewIPAddresses(info.ips...)
	info.zone = n.Labels[corev1.LabelTopologyZone]
	return info, probs
}

// nodeCache holds the addresses of every node the processor is told about,
// reference-counted so that an IP shared by two nodes stays a node IP until
// both are gone. k8swatch tells it about this node only, as kube-proxy
// watches only its own Node (k8swatch.Options.AllNodes: every node).
type nodeCache struct {
	self   string
	nodes  map[string]nodeInfo
	ipRefs map[netip.Addr]int
	ips    model.IPAddresses // the keys of ipRefs, as a set
}

func newNodeCache(self string) *nodeCache {
	return &nodeCache{self: self, nodes: map[string]nodeInfo{}, ipRefs: map[netip.Addr]int{}}
}

// zone returns this node's zone, "" while this node is unknown.
func (c *nodeCache) zone() string { return c.nodes[c.self].zone }

// nodeChange says what a node update changed for services.
type nodeChange struct {
	// changedIPs are node IPs that appeared in or disappeared from the set of
	// all node IPs; endpoints on them changed their HostNetwork flag.
	changedIPs []netip.Addr
	// zoneChanged is set when this node's zone changed, which may change the
	// outcome of topology hints for every hinted service.
	zoneChanged bool
}

// set stores the info of a node; an unchanged node costs one comparison.
func (c *nodeCache) set(name string, info nodeInfo) nodeChange {
	old, had := c.nodes[name]
	if had && old.equal(info) {
		return nodeChange{}
	}
	c.nodes[name] = info
	return c.apply(name, old.ips, info.ips, old.zone != info.zone)
}

// remove forgets a node.
func (c *nodeCache) remove(name string) nodeChange {
	old, had := c.nodes[name]
	if !had {
		return nodeChange{}
	}
	delete(c.nodes, name)
	return c.apply(name, old.ips, nil, old.zone != "")
}

func (c *nodeCache) apply(name string, oldIPs, newIPs []netip.Addr, zoneDiffers bool) nodeChange {
	var ch nodeChange
	for _, ip := range oldIPs {
		if !slices.Contains(newIPs, ip) {
			if c.ipRefs[ip]--; c.ipRefs[ip] == 0 {
				delete(c.ipRefs, ip)
				ch.changedIPs = append(ch.changedIPs, ip)
			}
		}
	}
	for _, ip := range newIPs {
		if !slices.Contains(oldIPs, ip) {
			if c.ipRefs[ip]++; c.ipRefs[ip] == 1 {
				ch.changedIPs = append(ch.changedIPs, ip)
			}
		}
	}
	if len(ch.changedIPs) > 0 {
		all := make([]netip.Addr, 0, len(c.ipRefs))
		for ip := range c.ipRefs {
			all = append(all, ip)
		}
		c.ips = model.NewIPAddresses(all...)
	}
	ch.zoneChanged = name == c.self && zoneDiffers
	return ch
}
