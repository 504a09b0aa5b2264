package topology

import (
	"fmt"
	"net/netip"
	"strings"
)

// Kind is how a lab node forwards: through VPP programmed by vppsvc, or
// through its Linux kernel programmed by kube-proxy in nftables mode.
type Kind string

const (
	// KindVPP is a node whose data plane is VPP, programmed by vppsvc (the
	// zero Kind is one too).
	KindVPP Kind = "vpp"
	// KindKernel is a node whose pods sit on a Linux bridge in the node's
	// own namespace (a plain bridge CNI) and whose Services are kube-proxy's
	// nftables rules.
	KindKernel Kind = "kernel"
)

// EnvKinds names the node kinds of the lab the tests bring up
// ("vpp,kernel"); unset, two VPP nodes.
const EnvKinds = "VPPSVC_LAB_KINDS"

// DefaultKinds are the kinds of a lab given none: two VPP nodes.
var DefaultKinds = []Kind{KindVPP, KindVPP}

// ParseKinds reads a comma-separated list of node kinds, one per node in
// order ("vpp,kernel"); the empty string is DefaultKinds.
func ParseKinds(s string) ([]Kind, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return append([]Kind(nil), DefaultKinds...), nil
	}
	var out []Kind
	for _, f := range strings.Split(s, ",") {
		switch k := Kind(strings.ToLower(strings.TrimSpace(f))); k {
		case KindVPP, KindKernel:
			out = append(out, k)
		default:
			return nil, fmt.Errorf("node kind %q: want %q or %q", f, KindVPP, KindKernel)
		}
	}
	return out, nil
}

// FormatKinds is the inverse of ParseKinds.
func FormatKinds(kinds []Kind) string {
	s := make([]string, len(kinds))
	for i, k := range kinds {
		if k == "" {
			k = KindVPP
		}
		s[i] = string(k)
	}
	return strings.Join(s, ",")
}

// IsKernel says whether the node is a kube-proxy node.
func (n Node) IsKernel() bool { return n.Kind == KindKernel }

// KindName is the node's kind as written ("vpp" for the zero Kind).
func (n Node) KindName() string {
	if n.Kind == "" {
		return string(KindVPP)
	}
	return string(n.Kind)
}

// PodGateways are a kernel node's addresses on its pods' bridge (the first
// address of each pod CIDR), the pods' default gateways.
func (n Node) PodGateways() []netip.Prefix {
	var out []netip.Prefix
	for _, c := range n.PodCIDRs() {
		out = append(out, netip.PrefixFrom(nth(c, 1), c.Bits()))
	}
	return out
}

// ClusterCIDRs hold every node's pod CIDR (kube-proxy's --cluster-cidr).
var ClusterCIDRs = []netip.Prefix{
	netip.MustParsePrefix("10.244.0.0/16"),
	netip.MustParsePrefix("fd00:244::/32"),
}

// KernelBridge is the bridge of a kernel node's pods, inside the node's
// namespace; KernelPodLink the node's end of the veth of the pod in slot k.
const KernelBridge = "cbr0"

func KernelPodLink(k int) string { return fmt.Sprintf("veth%d", k) }
