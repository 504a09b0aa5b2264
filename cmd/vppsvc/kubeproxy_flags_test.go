package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --nodeport-addresses selects the node's addresses that answer NodePorts,
// with kube-proxy's meaning; render and trace show the result.
func TestNodePortAddressesFlag(t *testing.T) {
	const v4, v6 = "external 192.168.16.1:30085", "real 2001:db8:16::1 30085"
	out, _, err := runCLI(t, "render", "-o", "vppcli")
	require.NoError(t, err)
	assert.Contains(t, out, v4, "default (primary): the node's primary IPv4")
	assert.Contains(t, out, v6, "default (primary): the node's primary IPv6")
	assert.NotContains(t, out, "192.168.16.2:30085", "never another node's address")

	out, _, err = runCLI(t, "render", "-o", "vppcli", "--nodeport-addresses", "2001:db8:16::/64")
	require.NoError(t, err)
	assert.NotContains(t, out, v4)
	assert.Contains(t, out, v6)

	out, _, err = runCLI(t, "trace", "--src", "100.64.1.5", "--dst", "192.168.16.1:30085", "--nodeport-addresses", "2001:db8:16::/64")
	require.NoError(t, err)
	assert.NotContains(t, out, "→ 10.1.", "the IPv4 node port is not answered: %s", out)
	assert.Contains(t, out, "verdict:   local", "it is VPP's own address, nothing more")

	_, _, err = runCLI(t, "render", "--nodeport-addresses", "primary,10.0.0.0/8")
	assert.ErrorContains(t, err, "--nodeport-addresses")
	assert.ErrorContains(t, err, "cannot be combined")
}

// --service-cluster-ip-range drops traffic to addresses of the service CIDRs
// that no service holds; without it, a ClusterIP's other ports are dropped
// all the same.
func TestServiceClusterIPRangeFlag(t *testing.T) {
	out, _, err := runCLI(t, "trace", "--src", "10.1.1.9", "--dst", "10.96.0.250:80")
	require.NoError(t, err)
	assert.Contains(t, out, "verdict:   forward", "an unallocated address leaves by the default route without the range: %s", out)
	out, _, err = runCLI(t, "trace", "--src", "10.1.1.9", "--dst", "10.96.0.10:443")
	require.NoError(t, err)
	assert.Contains(t, out, "verdict:   drop", "another port of a live ClusterIP: %s", out)

	out, _, err = runCLI(t, "trace", "--src", "10.1.1.9", "--dst", "10.96.0.250:80", "--service-cluster-ip-range", "10.96.0.0/12,fd00:96::/108")
	require.NoError(t, err)
	assert.Contains(t, out, "verdict:   drop", "with the range: %s", out)
	out, _, err = runCLI(t, "render", "-o", "vppcli", "--service-cluster-ip-range", "10.96.0.0/12,fd00:96::/108")
	require.NoError(t, err)
	assert.Contains(t, out, "ip route add 10.96.0.0/12 table 0 via drop")
	assert.Contains(t, out, "ip route add fd00:96::/108 table 0 via drop")
	assert.NotContains(t, out, "ip route add 10.96.0.10/32", "the range covers the ClusterIPs")

	_, _, err = runCLI(t, "render", "--service-cluster-ip-range", "10.96.0.1")
	assert.ErrorContains(t, err, "is not a CIDR")
}
