package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc/cmd/vppsvc/internal/sample"
)

// serviceCIDRList is `kubectl get servicecidrs -o yaml` of a dual-stack
// cluster with a second IPv4 range being deleted, an element that is no
// CIDR, and an object whose Ready condition is False.
const serviceCIDRList = `apiVersion: v1
kind: List
items:
- apiVersion: networking.k8s.io/v1
  kind: ServiceCIDR
  metadata: {name: kubernetes}
  spec:
    cidrs: [10.96.0.0/12, "fd00:96::/108"]
  status:
    conditions:
    - {type: Ready, status: "True", reason: "", message: "", lastTransitionTime: "2026-01-01T00:00:00Z"}
- apiVersion: networking.k8s.io/v1
  kind: ServiceCIDR
  metadata:
    name: leaving
    deletionTimestamp: "2026-01-02T00:00:00Z"
    finalizers: [networking.k8s.io/service-cidr-finalizer]
  spec:
    cidrs: [172.30.0.0/16]
- apiVersion: networking.k8s.io/v1
  kind: ServiceCIDR
  metadata: {name: typo}
  spec:
    cidrs: [10.200.0.0/33]
- apiVersion: networking.k8s.io/v1
  kind: ServiceCIDR
  metadata: {name: unready}
  spec:
    cidrs: [10.201.0.0/16]
  status:
    conditions:
    - {type: Ready, status: "False", reason: Terminating, message: "", lastTransitionTime: "2026-01-01T00:00:00Z"}
`

// clusterWithServiceCIDRs writes the sample cluster followed by the
// ServiceCIDR list, as one multi-document dump.
func clusterWithServiceCIDRs(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cluster.yaml")
	dump := string(sample.ClusterYAML) + "\n---\n" + serviceCIDRList
	require.NoError(t, os.WriteFile(path, []byte(dump), 0o600))
	return path
}

// TestRenderServiceCIDRsFromFile: render and trace take the service CIDRs
// of the ServiceCIDR objects in the dump when no service CIDR is
// configured: one drop route per CIDR in force replaces the ClusterIPs'
// own; an object being deleted or not Ready counts for nothing; a bad
// element is skipped with a warning naming object and field. A configured
// range wins over the objects.
func TestRenderServiceCIDRsFromFile(t *testing.T) {
	file := clusterWithServiceCIDRs(t)
	tests := []struct {
		name      string
		args      []string
		has, hasn []string
	}{
		{name: "from the objects",
			has:  []string{"ip route add 10.96.0.0/12 table 0 via drop", "ip route add fd00:96::/108 table 0 via drop"},
			hasn: []string{"ip route add 10.96.0.10/32", "ip route add 10.96.0.53/32", "172.30.0.0/16", "10.201.0.0/16", "10.200.0.0"}},
		{name: "the flag wins", args: []string{"--service-cluster-ip-range", "10.96.0.0/28"},
			has:  []string{"ip route add 10.96.0.0/28 table 0 via drop", "ip route add 10.96.0.53/32 table 0 via drop"},
			hasn: []string{"10.96.0.0/12", "fd00:96::/108", "ip route add 10.96.0.10/32"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, err := runCLI(t, append([]string{"render", "-o", "vppcli", "-f", file}, tt.args...)...)
			require.NoError(t, err, errOut)
			for _, s := range tt.has {
				assert.Contains(t, out, s)
			}
			for _, s := range tt.hasn {
				assert.NotContains(t, out, s)
			}
		})
	}

	_, errOut, err := runCLI(t, "render", "-o", "vppcli", "-f", file)
	require.NoError(t, err)
	var warning string
	for _, line := range strings.Split(errOut, "\n") {
		if strings.Contains(line, "10.200.0.0/33") {
			warning = line
		}
	}
	for _, s := range []string{"ServiceCIDR", "key=typo", "spec.cidrs[]"} {
		assert.Contains(t, warning, s, "the bad element's warning: %q", errOut)
	}

	out, _, err := runCLI(t, "trace", "-f", file, "--src", "10.1.1.9", "--dst", "10.96.0.250:80")
	require.NoError(t, err)
	assert.Contains(t, out, "verdict:   drop", "a free address of the ServiceCIDR: %s", out)
	out, _, err = runCLI(t, "trace", "-f", file, "--src", "10.1.1.9", "--dst", "172.30.0.9:80")
	require.NoError(t, err)
	assert.Contains(t, out, "verdict:   forward", "a range being deleted is no service CIDR any more: %s", out)
}
