package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// update rewrites the golden files: go test ./cmd/vppsvc -run Golden -update
var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestRenderGolden renders the embedded sample cluster on node-a in every
// output format and compares it with the reviewed golden files. A renderer
// or VPP-layer change that moves any VPP object, or a change of the views,
// shows up here; regenerate with -update and review the diff.
func TestRenderGolden(t *testing.T) {
	for _, format := range renderFormats {
		t.Run(format, func(t *testing.T) {
			out, stderr, err := runCLI(t, "render", "-o", format)
			require.NoError(t, err)
			assert.Empty(t, stderr, "no warnings for the sample cluster")
			golden := filepath.Join("testdata", "render-"+format+".golden")
			if *update {
				require.NoError(t, os.WriteFile(golden, []byte(out), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "run with -update to create it")
			if diff := lineDiff(string(want), out, 8); diff != "" {
				t.Errorf("%s differs (go test ./cmd/vppsvc -run Golden -update rewrites it; review the diff):\n%s", golden, diff)
			}
		})
	}
}

// The default output is the service view.
func TestRenderDefaultIsServices(t *testing.T) {
	def, _, err := runCLI(t, "render")
	require.NoError(t, err)
	svc, _, err := runCLI(t, "render", "-o", "services")
	require.NoError(t, err)
	assert.Equal(t, svc, def)
	assert.Contains(t, def, "docs/glossary.md", "the footer points to the glossary")
}

// The human outputs stay readable: no line is wider than the wrap width,
// except VPP CLI commands, which VPP reads one per line.
func TestRenderLineWidth(t *testing.T) {
	for _, format := range []string{"services", "text", "yaml", "vppcli"} {
		out, _, err := runCLI(t, "render", "-o", format)
		require.NoError(t, err)
		for i, line := range strings.Split(out, "\n") {
			if format == "vppcli" && !strings.HasPrefix(line, "#") {
				continue
			}
			assert.LessOrEqual(t, len([]rune(line)), 100, "%s line %d: %s", format, i+1, line)
		}
	}
}

// lineDiff lists up to max lines that differ between want and got, by line
// number, and the line counts: enough to see what moved without printing
// two whole configurations.
func lineDiff(want, got string, max int) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl == gl {
			continue
		}
		if shown == max {
			b.WriteString("  …\n")
			break
		}
		fmt.Fprintf(&b, "  line %d\n    want: %s\n    got:  %s\n", i+1, wl, gl)
		shown++
	}
	if b.Len() == 0 {
		return ""
	}
	fmt.Fprintf(&b, "  (%d lines wanted, %d got)", len(w), len(g))
	return b.String()
}

// renderDoc is the JSON contract of render (docs/cli.md).
type renderDoc struct {
	Node  string `json:"node"`
	Items []struct {
		Key    string         `json:"key"`
		Kind   string         `json:"kind"`
		Owners []string       `json:"owners"`
		State  string         `json:"state"`
		Reason string         `json:"reason"`
		Config map[string]any `json:"config"`
	} `json:"items"`
}

func TestRenderJSONContract(t *testing.T) {
	out, _, err := runCLI(t, "render", "-o", "json")
	require.NoError(t, err)
	var doc renderDoc
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	assert.Equal(t, "node-a", doc.Node)
	require.NotEmpty(t, doc.Items)
	bindingEntries := map[string]int{}
	for _, it := range doc.Items {
		assert.Equal(t, "applied", it.State, it.Key)
		assert.NotEmpty(t, it.Owners, it.Key)
		assert.True(t, strings.HasPrefix(it.Key, it.Kind+"/"), "key %s starts with its kind %s", it.Key, it.Kind)
		assert.NotEqual(t, "acl-binding", it.Kind, "bindings are folded per interface")
		for field := range it.Config {
			assert.Regexp(t, `^[a-z][A-Za-z0-9]*$`, field, "%s: lower-case field names", it.Key)
		}
		switch it.Kind {
		case "acl-bindings":
			bindingEntries[it.Config["interface"].(string)]++
			assert.Len(t, it.Config["input"], 65, "%s: 64 shards and the permit-all ACL", it.Key)
		case "acl":
			if it.Config["placeholder"] == true {
				assert.Empty(t, it.Config["rules"], "%s: a placeholder shows no rule", it.Key)
			} else {
				assert.NotEmpty(t, it.Config["rules"], it.Key)
			}
		case "nat44-interface":
			assert.Contains(t, []any{"inside", "outside", "output-feature"}, it.Config["role"], it.Key)
		}
	}
	assert.Equal(t, map[string]int{"host0": 1, "tap-default-client-a1": 1, "tap-default-web-a1": 1,
		"tap-kube-system-dns-a1": 1, "uplink0": 1}, bindingEntries)
	// Enums are names: no VRF ~0 and no numeric role anywhere.
	assert.NotContains(t, out, "4294967295")
	assert.Contains(t, out, `"vrf": "any"`)
	assert.NotRegexp(t, regexp.MustCompile(`"[A-Z][A-Za-z]*":`), out, "no Go field names")
	assert.NotContains(t, out, "0.0.0.0/32", "no placeholder rule")

	yamlOut, _, err := runCLI(t, "render", "-o", "yaml")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(yamlOut, "node: node-a\nitems:\n  - key: nat44-global/global\n    kind: nat44-global\n"),
		"yaml keeps the JSON order: %.120s", yamlOut)
	assert.NotContains(t, yamlOut, "0.0.0.0/32")
}

func TestRenderOtherNode(t *testing.T) {
	out, _, err := runCLI(t, "render", "--node", "node-b", "-o", "vppcli")
	require.NoError(t, err)
	assert.Contains(t, out, "# node node-b:")
	assert.Contains(t, out, "nat44 add address 192.168.16.2 twice-nat")
	assert.Contains(t, out, "set interface nat44 in tap-default-api-b1")
}

// shapeBase is a two-node cluster with one pod on node-a, web-a1
// (10.1.1.2, fd00:1:1::2), for the service-view shape tests.
const shapeBase = `apiVersion: v1
kind: Node
metadata: {name: node-a}
status:
  addresses: [{type: InternalIP, address: 192.168.16.1}, {type: InternalIP, address: "2001:db8:16::1"}]
---
apiVersion: v1
kind: Node
metadata: {name: node-b}
status:
  addresses: [{type: InternalIP, address: 192.168.16.2}, {type: InternalIP, address: "2001:db8:16::2"}]
---
apiVersion: v1
kind: Pod
metadata: {name: web-a1, namespace: default}
spec: {nodeName: node-a, containers: [{name: main, image: example}]}
status:
  podIP: 10.1.1.2
  podIPs: [{ip: 10.1.1.2}, {ip: "fd00:1:1::2"}]
`

// shapeSlice is an EndpointSlice of service s with endpoints "ip@node" (a
// trailing "!" marks a serving-terminating endpoint).
func shapeSlice(s, family string, eps ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: %s-%s, namespace: default, labels: {kubernetes.io/service-name: %s}}\n", s, strings.ToLower(family), s)
	fmt.Fprintf(&b, "addressType: %s\nports: [{name: http, port: 8080, protocol: TCP}]\nendpoints:\n", family)
	for _, ep := range eps {
		term := strings.HasSuffix(ep, "!")
		ip, node, _ := strings.Cut(strings.TrimSuffix(ep, "!"), "@")
		fmt.Fprintf(&b, "- addresses: [%q]\n  conditions: {ready: %t, serving: true, terminating: %t}\n  nodeName: %s\n", ip, !term, term, node)
	}
	return b.String()
}

// serviceBlock cuts the block of one service out of the service view.
func serviceBlock(out, id string) string {
	start := strings.Index(out, "\n"+id+"  ")
	if start < 0 {
		return ""
	}
	block := out[start+1:]
	if end := strings.Index(block, "\n\n"); end >= 0 {
		block = block[:end+1]
	}
	return block
}

// TestRenderServiceShapes renders one service of each shape through the
// whole pipeline and checks its block of the service view.
func TestRenderServiceShapes(t *testing.T) {
	tests := []struct {
		name    string
		objects string
		want    string
	}{
		{
			name: "externalTrafficPolicy Local: node ports reach the local endpoint only, with the client address",
			objects: `---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  type: NodePort
  clusterIP: 10.96.0.10
  clusterIPs: [10.96.0.10]
  externalTrafficPolicy: Local
  healthCheckNodePort: 32000
  ports: [{name: http, port: 80, targetPort: http, nodePort: 30080, protocol: TCP}]
` + shapeSlice("web", "IPv4", "10.1.1.2@node-a", "10.1.2.2@node-b"),
			want: `default/web  NodePort
  traffic policy    external Local, internal Cluster
  session affinity  none
  port http 80/TCP, node port 30080
    ClusterIP    10.96.0.10:80/TCP          nat44 lb-mapping self-twice-nat,out2in-only → 2 backends
    NodePort     192.168.16.1:30080/TCP     nat44 lb-mapping out2in-only → 10.1.1.2:8080 (Local)
                                            nat44 cnat-translation interposed → 10.96.0.10:80
                                              (internal clients)
    backends
      10.1.1.2:8080            node-a     local, ready
      10.1.2.2:8080            node-b     ready
  other ports       10.96.0.10/32 dropped by nat44 drop route (table 0)
`,
		},
		{
			name: "session affinity: the timeout is on the service and on its mapping",
			objects: `---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  clusterIP: 10.96.0.10
  clusterIPs: [10.96.0.10]
  sessionAffinity: ClientIP
  sessionAffinityConfig: {clientIP: {timeoutSeconds: 30}}
  ports: [{name: http, port: 80, targetPort: http, protocol: TCP}]
` + shapeSlice("web", "IPv4", "10.1.1.2@node-a", "10.1.2.2@node-b"),
			want: `default/web  ClusterIP
  traffic policy    external Cluster, internal Cluster
  session affinity  ClientIP, timeout 30 s
  port http 80/TCP
    ClusterIP    10.96.0.10:80/TCP          nat44 lb-mapping self-twice-nat,out2in-only,affinity 30s
                                              → 2 backends
    backends
      10.1.1.2:8080            node-a     local, ready
      10.1.2.2:8080            node-b     ready
  other ports       10.96.0.10/32 dropped by nat44 drop route (table 0)
`,
		},
		{
			name: "dual stack: a NAT44 mapping for IPv4, a cnat translation for IPv6",
			objects: `---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  clusterIP: 10.96.0.10
  clusterIPs: [10.96.0.10, "fd00:96::10"]
  ipFamilies: [IPv4, IPv6]
  ipFamilyPolicy: RequireDualStack
  ports: [{name: http, port: 80, targetPort: http, protocol: TCP}]
` + shapeSlice("web", "IPv4", "10.1.1.2@node-a", "10.1.2.2@node-b") + shapeSlice("web", "IPv6", "fd00:1:1::2@node-a", "fd00:1:2::2@node-b"),
			want: `default/web  ClusterIP
  traffic policy    external Cluster, internal Cluster
  session affinity  none
  port http 80/TCP
    ClusterIP    10.96.0.10:80/TCP          nat44 lb-mapping self-twice-nat,out2in-only → 2 backends
    ClusterIP    [fd00:96::10]:80/TCP       ipv6 cnat-translation exclusive,snat 1/2 → 2 backends
    backends
      10.1.1.2:8080            node-a     local, ready
      10.1.2.2:8080            node-b     ready
      [fd00:1:1::2]:8080       node-a     local, ready
      [fd00:1:2::2]:8080       node-b     ready
  flow keeper       ipv6 cnat-translation/[fd00:96::10]:0/exp1 holds the routes of 2 backends, so
                    open flows survive endpoint changes
  other ports       10.96.0.10/32 dropped by nat44 drop route (table 0)
`,
		},
		{
			name: "source ranges: the LoadBalancer frontend's filter rules",
			objects: `---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  type: LoadBalancer
  clusterIP: 10.96.0.10
  clusterIPs: [10.96.0.10]
  loadBalancerSourceRanges: [198.51.100.0/24, 192.0.2.0/25]
  allocateLoadBalancerNodePorts: false
  ports: [{name: http, port: 80, targetPort: http, protocol: TCP}]
status:
  loadBalancer: {ingress: [{ip: 203.0.113.10}]}
` + shapeSlice("web", "IPv4", "10.1.1.2@node-a", "10.1.2.2@node-b"),
			want: `default/web  LoadBalancer
  traffic policy    external Cluster, internal Cluster
  session affinity  none
  source ranges     192.0.2.0/25, 198.51.100.0/24 (LoadBalancer frontends only)
  port http 80/TCP
    ClusterIP    10.96.0.10:80/TCP          nat44 lb-mapping self-twice-nat,out2in-only → 2 backends
    LoadBalancer 203.0.113.10:80/TCP        nat44 lb-mapping twice-nat,out2in-only → 2 backends
                                            acl nat44-filter-59 #0 permit 192.0.2.0/25, #1 permit
                                              198.51.100.0/24, #2 deny
    backends
      10.1.1.2:8080            node-a     local, ready
      10.1.2.2:8080            node-b     ready
  other ports       10.96.0.10/32 dropped by nat44 drop route (table 0)
`,
		},
		{
			name: "no endpoints: dropped by a filter rule",
			objects: `---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  clusterIP: 10.96.0.10
  clusterIPs: [10.96.0.10]
  ports: [{name: http, port: 80, targetPort: 8080, protocol: TCP}]
`,
			want: `default/web  ClusterIP
  traffic policy    external Cluster, internal Cluster
  session affinity  none
  port http 80/TCP
    ClusterIP    10.96.0.10:80/TCP          dropped (no backend) by acl nat44-filter-59 #0
    backends: none
  other ports       10.96.0.10/32 dropped by nat44 drop route (table 0)
`,
		},
		{
			name: "terminating endpoints: the cluster set falls back to them",
			objects: `---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  clusterIP: 10.96.0.10
  clusterIPs: [10.96.0.10]
  ports: [{name: http, port: 80, targetPort: http, protocol: TCP}]
` + shapeSlice("web", "IPv4", "10.1.1.2@node-a!", "10.1.2.2@node-b!"),
			want: `default/web  ClusterIP
  traffic policy    external Cluster, internal Cluster
  session affinity  none
  port http 80/TCP
    ClusterIP    10.96.0.10:80/TCP          nat44 lb-mapping self-twice-nat,out2in-only → 2 backends
    backends
      10.1.1.2:8080            node-a     local, serving, terminating
      10.1.2.2:8080            node-b     serving, terminating
  other ports       10.96.0.10/32 dropped by nat44 drop route (table 0)
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "cluster.yaml")
			require.NoError(t, os.WriteFile(file, []byte(shapeBase+tt.objects), 0o644))
			out, stderr, err := runCLI(t, "render", "-f", file)
			require.NoError(t, err)
			assert.Empty(t, stderr)
			assert.Equal(t, tt.want, serviceBlock(out, "default/web"), "whole output:\n%s", out)
		})
	}
}
