package agent

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	v4Node   = []netip.Addr{netip.MustParseAddr("192.168.16.1")}
	dualNode = []netip.Addr{netip.MustParseAddr("192.168.16.1"), netip.MustParseAddr("2001:db8:16::1")}
)

func configFile(t *testing.T, content string) string {
	path := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	return path
}

func TestDefaultConfigFromNodeIPs(t *testing.T) {
	c, err := LoadConfig("", dualNode)
	require.NoError(t, err)
	assert.Equal(t, "192.168.16.1", c.NAT44.TwiceNATAddress.String())
	assert.Equal(t, "2001:db8:16::1", c.IPv6.SNATAddress.String())
	assert.False(t, c.DisableIPv4 || c.DisableIPv6)

	c, err = LoadConfig("", v4Node)
	require.NoError(t, err)
	assert.True(t, c.DisableIPv6, "no IPv6 address on the node: IPv6 not rendered")

	_, err = LoadConfig("", nil)
	assert.ErrorContains(t, err, "both address families are disabled")
}

func TestConfigFile(t *testing.T) {
	// Tuning NAT44 on an IPv4-only node leaves IPv6 off, not invalid.
	c, err := LoadConfig(configFile(t, "nat44:\n  timeouts: {udp: 30}\n"), v4Node)
	require.NoError(t, err)
	assert.Equal(t, uint32(30), c.NAT44.Timeouts.UDP)
	assert.Equal(t, "192.168.16.1", c.NAT44.TwiceNATAddress.String(), "defaults kept")
	assert.True(t, c.DisableIPv6)

	// Setting an IPv6 SNAT address enables IPv6 on an IPv4-only node.
	c, err = LoadConfig(configFile(t, "ipv6:\n  snatAddress: 2001:db8:16::1\n"), v4Node)
	require.NoError(t, err)
	assert.False(t, c.DisableIPv6)

	// An explicit switch wins over a node address.
	c, err = LoadConfig(configFile(t, "disableIPv6: true\n"), dualNode)
	require.NoError(t, err)
	assert.True(t, c.DisableIPv6)

	_, err = LoadConfig(configFile(t, "nat44:\n  localEndpointWeight: 0\n"), v4Node)
	assert.ErrorContains(t, err, "localEndpointWeight")
	_, err = LoadConfig(configFile(t, "nat44: {twiceNATAdress: 192.168.16.1}\n"), v4Node)
	assert.ErrorContains(t, err, `unknown field "twiceNATAdress"`)
}

func TestConfigNodePortAddresses(t *testing.T) {
	c, err := LoadConfig("", v4Node)
	require.NoError(t, err)
	assert.Equal(t, "primary", c.nodePortAddresses().String(), "kube-proxy's nftables default")

	c, err = LoadConfig(configFile(t, "nodePortAddresses: [192.168.16.0/24, 10.0.0.0/8]\n"), v4Node)
	require.NoError(t, err)
	assert.Equal(t, "192.168.16.0/24,10.0.0.0/8", c.nodePortAddresses().String())

	_, err = LoadConfig(configFile(t, "nodePortAddresses: [primary, 10.0.0.0/8]\n"), v4Node)
	assert.ErrorContains(t, err, "nodePortAddresses")
	_, err = LoadConfig(configFile(t, "nodePortAddresses: [eth0]\n"), v4Node)
	assert.ErrorContains(t, err, `"eth0" is neither a CIDR nor "primary"`)
}

func TestConfigServiceClusterIPRange(t *testing.T) {
	c, err := LoadConfig(configFile(t, "serviceClusterIPRange: [10.96.0.0/12, \"fd00:96::/108\"]\n"), dualNode)
	require.NoError(t, err)
	assert.Equal(t, "[10.96.0.0/12 fd00:96::/108]", fmt.Sprint(c.serviceCIDRs()), "both families go to the processor")

	_, err = LoadConfig(configFile(t, "serviceClusterIPRange: [10.96.0.1]\n"), dualNode)
	assert.ErrorContains(t, err, `serviceClusterIPRange: "10.96.0.1" is not a CIDR`)
}
