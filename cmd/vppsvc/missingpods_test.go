package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc/cmd/vppsvc/internal/sample"
)

// withoutPods is the sample cluster without its Pod documents, as
// `kubectl get nodes,services,endpointslices -o yaml` would write it.
func withoutPods(t *testing.T) string {
	t.Helper()
	var kept []string
	for _, doc := range strings.Split(string(sample.ClusterYAML), "\n---\n") {
		if !strings.Contains(doc, "\nkind: Pod\n") {
			kept = append(kept, doc)
		}
	}
	require.Less(t, len(kept), strings.Count(string(sample.ClusterYAML), "\n---\n")+1, "the sample has pods to remove")
	return strings.Join(kept, "\n---\n")
}

// A cluster file whose EndpointSlices put endpoints on the simulated node
// but that holds none of their Pods warns once, with fields, and says how to
// include them; the sample, which has its pods, does not warn.
func TestMissingLocalPodsWarnOnce(t *testing.T) {
	stdout, stderr, code := runMain(t, withoutPods(t), "render", "-f", "-", "-o", "vppcli")
	require.Equal(t, 0, code, stderr)
	assert.NotEmpty(t, stdout, "rendered anyway")
	assert.Equal(t, 1, strings.Count(stderr, "have no Pod in the cluster file"), stderr)
	for _, want := range []string{"level=warning", "node=node-a", "endpoint_addresses=3", `example="default/web-`, "pods_in_file=0", "kubectl get nodes,pods,services,endpointslices -A -o yaml"} {
		assert.Contains(t, stderr, want)
	}

	_, stderr, code = runMain(t, "", "render", "-o", "vppcli")
	require.Equal(t, 0, code, stderr)
	assert.NotContains(t, stderr, "have no Pod")
}
