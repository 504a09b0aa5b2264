package clusterfile

import (
	"strings"
	"testing"

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
