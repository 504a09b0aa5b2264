package processor

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/vppsvc/vppsvc/model"
)

// NodePortAddressesPrimary is kube-proxy's special --nodeport-addresses value:
// NodePorts are answered on the node's primary IP of each family only.
const NodePortAddressesPrimary = "primary"

// NodePortAddresses selects the addresses of this node on which NodePorts
// are answered, with kube-proxy's --nodeport-addresses meaning. Its zero
// value is "primary", the default of kube-proxy's nftables mode. NodePorts
// on other nodes' addresses are never intercepted here: a packet from this
// node to another node's NodePort goes to that node, as with kube-proxy.
type NodePortAddresses struct {
	// cidrs, when set, select every address of this node inside one of
	// them; nil means the primary IP of each family.
	cidrs []netip.Prefix
}

// ParseNodePortAddresses reads kube-proxy's --nodeport-addresses values:
// CIDRs, or the single word "primary"; none means "primary". An error names
// the value and why it is wrong, not where it came from: the caller says
// that once (the flag, or the config file and its field).
func ParseNodePortAddresses(values []string) (NodePortAddresses, error) {
	var n NodePortAddresses
	for _, v := range values {
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		if v == NodePortAddressesPrimary {
			if len(values) > 1 {
				return NodePortAddresses{}, fmt.Errorf("%q cannot be combined with CIDRs", NodePortAddressesPrimary)
			}
			return NodePortAddresses{}, nil
		}
		p, err := netip.ParsePrefix(v)
		if err != nil {
			why := err.Error()
			if _, after, ok := strings.Cut(why, "): "); ok {
				why = after // netip quotes the value again before this
			}
			return NodePortAddresses{}, fmt.Errorf("%q is neither a CIDR nor %q: %s", v, NodePortAddressesPrimary, why)
		}
		n.cidrs = append(n.cidrs, p.Masked())
	}
	return n, nil
}

// String prints the value as the flag takes it.
func (n NodePortAddresses) String() string {
	if n.cidrs == nil {
		return NodePortAddressesPrimary
	}
	s := make([]string, len(n.cidrs))
	for i, p := range n.cidrs {
		s[i] = p.String()
	}
	return strings.Join(s, ",")
}

// selectFrom returns the addresses of node on which NodePorts are answered.
func (n NodePortAddresses) selectFrom(node nodeInfo) model.IPAddresses {
	if n.cidrs == nil {
		var out []netip.Addr
		for _, ip := range node.primary {
			if ip.IsValid() && !ip.IsLoopback() {
				out = append(out, ip)
			}
		}
		return model.NewIPAddresses(out...)
	}
	var out []netip.Addr
	for _, ip := range node.ips {
		for _, p := range n.cidrs {
			if p.Contains(ip) {
				out = append(out, ip)
				break
			}
		}
	}
	return model.NewIPAddresses(out...)
}
