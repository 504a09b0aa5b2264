package simnode

import (
	"bytes"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc/cmd/vppsvc/internal/clusterfile"
	"github.com/vppsvc/vppsvc/cmd/vppsvc/internal/sample"
	"github.com/vppsvc/vppsvc/dataplane"
)

func sampleCluster(t *testing.T) *clusterfile.Cluster {
	c, err := clusterfile.Parse("sample", bytes.NewReader(sample.ClusterYAML))
	require.NoError(t, err)
	return c
}

func TestBuildDefaultsToFirstNode(t *testing.T) {
	c := sampleCluster(t)
	p, err := Build(c.Nodes, c.Pods, "")
	require.NoError(t, err)
	assert.Equal(t, "node-a", p.Node)
	assert.Equal(t, []netip.Addr{netip.MustParseAddr("192.168.16.1"), netip.MustParseAddr("2001:db8:16::1")}, p.NodeIPs)

	var pods []string
	for _, lp := range p.LocalPods {
		pods = append(pods, lp.Namespace+"/"+lp.Name+"@"+lp.Interface)
	}
	assert.Equal(t, []string{
		"default/web-a1@tap-default-web-a1",
		"kube-system/dns-a1@tap-kube-system-dns-a1",
		"default/client-a1@tap-default-client-a1",
	}, pods)
	assert.Contains(t, p.Routes, dataplane.Route{Dst: netip.MustParsePrefix("10.1.1.2/32"), Interface: "tap-default-web-a1"})
	assert.Contains(t, p.Routes, dataplane.Route{Dst: netip.MustParsePrefix("fd00:1:1::2/128"), Interface: "tap-default-web-a1"})
	assert.Equal(t, []netip.Prefix{netip.MustParsePrefix("192.168.16.1/24"), netip.MustParsePrefix("2001:db8:16::1/64")}, p.Interfaces[0].Addrs)

	// Pods' taps have no address: they borrow host0's, which has both
	// families, so that VPP enables IPv4 and IPv6 on them.
	unnumbered := map[string]string{}
	for _, ifc := range p.Interfaces {
		unnumbered[ifc.Name] = ifc.UnnumberedTo
	}
	assert.Equal(t, map[string]string{
		UplinkInterface:          "",
		HostInterface:            "",
		"tap-default-web-a1":     HostInterface,
		"tap-kube-system-dns-a1": HostInterface,
		"tap-default-client-a1":  HostInterface,
	}, unnumbered)
}

func TestBuildUnknownNode(t *testing.T) {
	c := sampleCluster(t)
	_, err := Build(c.Nodes, c.Pods, "node-z")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown node "node-z" (nodes: node-a, node-b, node-c)`)
	_, err = Build(nil, nil, "")
	assert.Error(t, err)
}

func TestIngressFor(t *testing.T) {
	c := sampleCluster(t)
	p, err := Build(c.Nodes, c.Pods, "node-b")
	require.NoError(t, err)
	for src, want := range map[string]string{
		"10.1.2.2":       "tap-default-web-b1",
		"10.1.1.2":       UplinkInterface, // a pod of node-a is remote from node-b
		"172.30.255.2":   HostInterface,
		"192.168.16.2":   HostInterface,
		"198.51.100.7":   UplinkInterface,
		"fd00:1:2::2":    "tap-default-web-b1",
		"2001:db8:16::9": UplinkInterface,
	} {
		assert.Equal(t, want, p.IngressFor(netip.MustParseAddr(src)), src)
	}
}

func TestPodInterfaceNameBounded(t *testing.T) {
	long := PodInterfaceName("a-very-long-namespace-name-indeed", "and-a-pod-name-that-goes-on-and-on")
	assert.Len(t, long, 63)
}

// The node IPs are VPP's (uplink0); the node's kernel sends from its own
// address on host0, of the same family. Other sources are not rewritten.
func TestKernelSource(t *testing.T) {
	c := sampleCluster(t)
	p, err := Build(c.Nodes, c.Pods, "node-a")
	require.NoError(t, err)
	for _, tc := range []struct {
		src  string
		want string // "" when not a node IP
	}{
		{"192.168.16.1", "172.30.255.2"},
		{"::ffff:192.168.16.1", "172.30.255.2"},
		{"2001:db8:16::1", "fd00:ffff::2"},
		{"192.168.16.2", ""}, // node-b's IP: another node
		{"172.30.255.2", ""}, // already the kernel's
		{"10.1.1.9", ""},
	} {
		got, ok := p.KernelSource(netip.MustParseAddr(tc.src))
		if tc.want == "" {
			assert.False(t, ok, tc.src)
			continue
		}
		assert.True(t, ok, tc.src)
		assert.Equal(t, netip.MustParseAddr(tc.want), got, tc.src)
	}
}
