package nodeagent

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/vppsvc/vppsvc/e2e/lab/topology"
)

func TestKubeProxyArgs(t *testing.T) {
	for i := 1; i <= 2; i++ {
		node := topology.Node{Name: topology.NodeName(i), Index: i, Kind: topology.KindKernel}
		args := KubeProxyArgs(node, "/x/kubeconfig")
		flags := map[string]string{}
		for _, a := range args {
			k, v, ok := strings.Cut(a, "=")
			if !ok || !strings.HasPrefix(k, "--") {
				t.Fatalf("%s: argument %q is not --flag=value", node.Name, a)
			}
			if _, dup := flags[k]; dup {
				t.Errorf("%s: %s given twice", node.Name, k)
			}
			flags[k] = v
		}
		// Every node's pods are inside the cluster CIDR kube-proxy is given
		// (traffic from them is not masqueraded).
		var given []netip.Prefix
		for _, s := range strings.Split(flags["--cluster-cidr"], ",") {
			p, err := netip.ParsePrefix(s)
			if err != nil {
				t.Fatalf("%s: --cluster-cidr %q: %v", node.Name, flags["--cluster-cidr"], err)
			}
			given = append(given, p)
		}
		for j := 1; j <= 3; j++ {
			for _, c := range (topology.Node{Index: j}).PodCIDRs() {
				if !slices.ContainsFunc(given, func(p netip.Prefix) bool { return p.Contains(c.Addr()) && p.Bits() <= c.Bits() }) {
					t.Errorf("%s: pod CIDR %s outside --cluster-cidr %v", node.Name, c, given)
				}
			}
		}
		for k, want := range map[string]string{
			"--proxy-mode":           "nftables",
			"--hostname-override":    node.Name,
			"--kubeconfig":           "/x/kubeconfig",
			"--healthz-bind-address": KubeProxyHealthz,
			"--metrics-bind-address": KubeProxyMetrics,
		} {
			if flags[k] != want {
				t.Errorf("%s: %s=%q, want %q", node.Name, k, flags[k], want)
			}
		}
		for _, k := range []string{"--healthz-bind-address", "--metrics-bind-address"} {
			if !strings.HasPrefix(flags[k], "127.0.0.1:") {
				t.Errorf("%s: %s=%q is not on loopback", node.Name, k, flags[k])
			}
		}
	}
}
