package clusterfile

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseMultiDocumentYAMLAndLists(t *testing.T) {
	input := `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {clusterIP: 10.96.0.10, ports: [{port: 80}]}
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: node-a}
- apiVersion: discovery.k8s.io/v1
  kind: EndpointSlice
  metadata: {name: web-1, namespace: default, labels: {kubernetes.io/service-name: web}}
  addressType: IPv4
  endpoints: [{addresses: [10.1.1.2]}]
- apiVersion: networking.k8s.io/v1
  kind: ServiceCIDR
  metadata: {name: kubernetes}
  spec: {cidrs: [10.96.0.0/12]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: other}
---
`
	c, err := Parse("cluster.yaml", strings.NewReader(input))
	require.NoError(t, err)
	require.Len(t, c.Services, 1)
	assert.Equal(t, "10.96.0.10", c.Services[0].Spec.ClusterIP)
	require.Len(t, c.Nodes, 1)
	require.Len(t, c.EndpointSlices, 1)
	assert.Equal(t, "web", c.EndpointSlices[0].Labels["kubernetes.io/service-name"])
	require.Len(t, c.ServiceCIDRs, 1)
	assert.Equal(t, []string{"10.96.0.0/12"}, c.ServiceCIDRs[0].Spec.CIDRs)
	assert.Equal(t, map[string]int{"ConfigMap": 1}, c.Ignored)
}

func TestParseJSON(t *testing.T) {
	c, err := Parse("x.json", strings.NewReader(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"nodeName":"n"}}`))
	require.NoError(t, err)
	require.Len(t, c.Pods, 1)
	assert.Equal(t, "n", c.Pods[0].Spec.NodeName)
}

// A document that does not decode is named by source and position, and by
// kind and name when those can be read.
func TestParseErrorNamesDocumentAndObject(t *testing.T) {
	for _, tc := range []struct{ source, input, want string }{
		{"bad.yaml", "apiVersion: v1\nkind: Service\n---\nkind: [oops\n", "bad.yaml: document 2: "},
		{"nokind.yaml", "apiVersion: v1\nmetadata: {name: g}\n", "nokind.yaml: document 1: "},
		{"svc.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec: {ports: not-a-list}\n", "svc.yaml: document 1: Service shop/web: "},
		{"list.yaml", "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Node, metadata: {name: n1}, spec: {podCIDR: [1]}}\n", "list.yaml: document 1: list item 1: Node n1: "},
	} {
		_, err := Parse(tc.source, strings.NewReader(tc.input))
		if assert.Error(t, err, tc.source) {
			assert.True(t, strings.HasPrefix(err.Error(), tc.want), "%q does not start with %q", err, tc.want)
		}
	}
}

func TestParseCountsUnknownKinds(t *testing.T) {
	c, err := Parse("crd.yaml", strings.NewReader("apiVersion: example.com/v9\nkind: Gadget\nmetadata: {name: g}\n"))
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"Gadget": 1}, c.Ignored)
}

// A file over MaxFileSize is refused before it is decoded, naming the limit.
func TestParseRejectsOversizedFile(t *testing.T) {
	svc := "---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\n"
	big := strings.Repeat(svc, MaxFileSize/len(svc)+1)
	_, err := Parse("big.yaml", strings.NewReader(big))
	assert.EqualError(t, err, "big.yaml: over the limit of 67108864 bytes (64 MiB) for a cluster file: filter it (kubectl get -n NAMESPACE, -l SELECTOR) or split it")
}

// Input that cannot hold Kubernetes objects is refused by a scan, naming the
// document, before the YAML decoder spends seconds on it.
func TestParseScreensPathologicalYAML(t *testing.T) {
	manyEmpty := "apiVersion: v1\nkind: List\nitems:\n" + strings.Repeat("-\n", maxEmptyEntries+1)
	for _, tc := range []struct{ name, input, err string }{
		{"dash lines", strings.Repeat("-\n", 1000), "f: document 1: a YAML list, not a Kubernetes object (want apiVersion and kind, or kind: List with items)"},
		{"list in second document", "---\napiVersion: v1\nkind: Node\nmetadata: {name: n}\n---\n\n# head\n- a\n- b\n", "f: document 2: a YAML list, not a Kubernetes object (want apiVersion and kind, or kind: List with items)"},
		{"flow list", "[1, 2, 3]\n", "f: document 1: a JSON array, not a Kubernetes object (want an object with apiVersion and kind, or a List)"},
		{"flow list after a document", "apiVersion: v1\nkind: Node\nmetadata: {name: n}\n---\n  [1, 2]\n", "f: document 2: a YAML list, not a Kubernetes object (want apiVersion and kind, or kind: List with items)"},
		{"empty entries", manyEmpty, "f: document 1: more than 10000 empty list entries (\"-\" lines): not Kubernetes objects"},
	} {
		_, err := Parse("f", strings.NewReader(tc.input))
		assert.EqualError(t, err, tc.err, tc.name)
	}
	// Block lists inside objects, leading separators and comments are what kubectl writes: they pass the screen.
	c, err := Parse("ok", strings.NewReader("---\n# nodes\napiVersion: v1\nkind: List\nitems:\n-   apiVersion: v1\n    kind: Node\n    metadata: {name: n1}\n"))
	require.NoError(t, err)
	assert.Len(t, c.Nodes, 1)
}

// The screen fails the worst input cheaply: 50 MB of "-" lines (the
// finding: 27 s and 7 GB before) fails at its first line.
func TestParseFailsDashFileCheaply(t *testing.T) {
	dashes := strings.Repeat("-\n", 25<<20)
	start := time.Now()
	_, err := Parse("dashes.yaml", strings.NewReader(dashes))
	assert.ErrorContains(t, err, "dashes.yaml: document 1: a YAML list")
	assert.Less(t, time.Since(start), 5*time.Second)
}
