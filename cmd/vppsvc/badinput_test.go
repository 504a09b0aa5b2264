package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	return path
}

// Input that cannot be used at all gives one error line naming the file or
// object, what is wrong and where (document, field) in the file's words,
// and exit status 1 (2 for a mistake in the call itself).
func TestBadInputIsOneErrorLine(t *testing.T) {
	undecodable := writeFile(t, "bad.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: not-a-list}\n")
	badPort := writeFile(t, "port.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec: {ports: [{port: http}]}\n")
	junk := writeFile(t, "junk.bin", "\x7fELF\x02\x01\x01\x00\x00\x00\x80\x81\xfe\xff\x00\x01junk")
	prose := writeFile(t, "notes.txt", "TODO: render the cluster\nthen: trace: a packet\n")
	badConfig := writeFile(t, "config.yaml", "nat44:\n  twiceNATAdress: 192.168.16.1\n")
	scalarConfig := writeFile(t, "scalar.yaml", "nodePortAddresses: 192.168.16.0/24\n")
	listConfig := writeFile(t, "list.yaml", "nat44:\n  twiceNATAddress: [192.168.16.1]\n")
	badCIDRConfig := writeFile(t, "cidr.yaml", "nodePortAddresses: [10.0.0.0/33]\n")
	for _, tc := range []struct {
		name  string
		args  []string
		stdin string
		code  int
		err   string // the whole line, or its start when it ends with "…"
	}{
		{"unreadable file", []string{"render", "-f", "/nonexistent/cluster.yaml"}, "", 1, "vppsvc: open /nonexistent/cluster.yaml: no such file or directory"},
		{"unknown flag", []string{"render", "--bogus"}, "", 2, "vppsvc: unknown flag: --bogus"},
		{"unknown node", []string{"render", "--node", "node-z"}, "", 1, `vppsvc: unknown node "node-z" (nodes: node-a, node-b, node-c)`},
		{"scalar where a list belongs", []string{"render", "-f", undecodable}, "", 1, "vppsvc: " + undecodable + ": document 2: Service web: field spec.ports: want a list, got a string"},
		{"word where a number belongs", []string{"render", "-f", badPort}, "", 1, "vppsvc: " + badPort + ": document 1: Service shop/web: field spec.ports.port: want a number, got a string"},
		{"binary junk under the size cap", []string{"render", "-f", junk}, "", 1, "vppsvc: " + junk + ": document 1: not text (binary data): not YAML or JSON"},
		{"prose", []string{"render", "-f", prose}, "", 1, "vppsvc: " + prose + ": document 1: not valid YAML: line 2: mapping values are not allowed in this context"},
		{"undecodable stdin", []string{"render", "-f", "-"}, "kind: [oops\n", 1, "vppsvc: stdin: document 1: not valid YAML: line 1: did not find expected ',' or ']'"},
		{"no nodes", []string{"render", "-f", "-"}, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", 1, "vppsvc: the cluster has no Node objects: nothing to simulate"},
		{"unreadable config", []string{"render", "--config", "/nonexistent/config.yaml"}, "", 1, "vppsvc: --config: open /nonexistent/config.yaml: no such file or directory"},
		{"misspelt config field", []string{"render", "--config", badConfig}, "", 1, "vppsvc: --config " + badConfig + `: unknown field "twiceNATAdress" (misspelt, or at the wrong level?)`},
		{"config scalar where a list belongs", []string{"render", "--config", scalarConfig}, "", 1, "vppsvc: --config " + scalarConfig + ": field nodePortAddresses: want a list, got a string"},
		{"config bad nodePortAddresses, file, field and value said once", []string{"render", "--config", badCIDRConfig}, "", 1, "vppsvc: --config " + badCIDRConfig + `: nodePortAddresses: "10.0.0.0/33" is neither a CIDR nor "primary": prefix length out of range`},
		{"config list where an address belongs", []string{"render", "--config", listConfig}, "", 1, "vppsvc: --config " + listConfig + ": field nat44.twiceNATAddress: want an IP address, got a list"},
		{"config junk", []string{"render", "--config", junk}, "", 1, "vppsvc: --config " + junk + ": not text (binary data): not YAML or JSON"},
		{"bad output format", []string{"render", "-o", "html"}, "", 2, `vppsvc: -o: want services, vppcli, yaml, json, text, got "html"`},
		{"stray argument", []string{"render", "extra"}, "", 2, `vppsvc: unknown command "extra" for "vppsvc render"`},
		{"bad --ipv4-renderer, said once", []string{"render", "--ipv4-renderer", "ipvs"}, "", 2, `vppsvc: --ipv4-renderer: "ipvs" is neither "nat44" nor "cnat"`},
		{"bad --nodeport-addresses, said once", []string{"render", "--nodeport-addresses", "10.0.0.0/33"}, "", 2, `vppsvc: --nodeport-addresses: "10.0.0.0/33" is neither a CIDR nor "primary": prefix length out of range`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runMain(t, tc.stdin, tc.args...)
			assert.Equal(t, tc.code, code)
			assert.Empty(t, stdout)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
			if prefix, ok := strings.CutSuffix(tc.err, "…"); ok {
				assert.True(t, strings.HasPrefix(stderr, prefix), "%q does not start with %q", stderr, prefix)
			} else {
				assert.Equal(t, tc.err+"\n", stderr)
			}
		})
	}
}

// Objects with bad fields are rendered without them, with one warning per
// bad element; objects of kinds vppsvc does not use are reported.
func TestBadFieldsAreSkippedWithWarnings(t *testing.T) {
	cluster, err := os.ReadFile("testdata/bad-fields.yaml")
	require.NoError(t, err)
	stdout, stderr, code := runMain(t, string(cluster), "render", "-f", "-", "-o", "vppcli")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "external 10.96.0.10:80 local 0.0.0.0:80 vrf 0 probability 0 local 10.1.0.5:8080 vrf 0")
	assert.Contains(t, stdout, "external 10.96.0.11:80 local 0.0.0.0:80 vrf 0 probability 0 local 10.1.0.6:8080 vrf 0")
	for _, want := range []string{
		`field="status.addresses[].address"`,
		`field="spec.ports[].port"`,
		`field="endpoints[].addresses"`,
		`msg="ignoring objects of a kind vppsvc does not use" count=1 kind=ConfigMap`,
	} {
		assert.Contains(t, stderr, want)
	}
	assert.Equal(t, 4, strings.Count(stderr, "\n"), "one warning each: %s", stderr)
}

// The Service view shows a skipped port under its service, with the field,
// the value and the reason; a service left with no usable port says why it
// is not rendered. The rest of each service is shown as usual.
func TestSkippedPortsInServiceView(t *testing.T) {
	cluster, err := os.ReadFile("testdata/bad-fields.yaml")
	require.NoError(t, err)
	allBad := "---\napiVersion: v1\nkind: Service\nmetadata: {name: none, namespace: default}\n" +
		"spec: {clusterIP: 10.96.0.12, clusterIPs: [10.96.0.12], ports: [{name: a, port: 0}, {name: b, port: 80, protocol: ICMP}]}\n"
	stdout, stderr, code := runMain(t, string(cluster)+allBad, "render", "-f", "-")
	require.Equal(t, 0, code, stderr)
	half := stdout[strings.Index(stdout, "default/half "):]
	half = half[:strings.Index(half, "\n\n")]
	assert.Contains(t, half, "  port http 80/TCP\n")
	assert.Contains(t, half, "\n  skipped           spec.ports[].port \"70000\": port out of range 1-65535; port \"bad\" skipped\n")
	assert.NotContains(t, stdout[:strings.Index(stdout, "default/half ")], "skipped", "default/good has no bad element")
	assert.Contains(t, stdout, "# not rendered: default/none: nothing usable left: skipped spec.ports[].port \"0\": port out of range\n"+
		"#   1-65535; port \"a\" skipped; spec.ports[].protocol \"ICMP\": unknown protocol; port \"b\" skipped\n")
}

// "-" reads stdin for every file flag: the renderer configuration too; a
// cluster on stdin that is not Kubernetes objects fails at once.
func TestStdinForEveryFile(t *testing.T) {
	stdout, stderr, code := runMain(t, "nat44: {localEndpointWeight: 3}\n", "render", "--config", "-", "-o", "vppcli")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "external 10.96.0.10:80 local 10.1.1.2:8080 vrf 0 probability 9 local 10.1.2.2:8080 vrf 0 probability 3", "the local endpoint weighs 3 times more, as the configuration on stdin says")

	_, stderr, code = runMain(t, "nat44: {twiceNATAdress: 192.168.16.1}\n", "render", "--config", "-")
	assert.Equal(t, 1, code)
	assert.Equal(t, "vppsvc: --config stdin: unknown field \"twiceNATAdress\" (misspelt, or at the wrong level?)\n", stderr)
	assert.Contains(t, stderr, `unknown field "twiceNATAdress"`)

	_, stderr, code = runMain(t, strings.Repeat("-\n", 100000), "render", "-f", "-")
	assert.Equal(t, 1, code)
	assert.Equal(t, "vppsvc: stdin: document 1: a YAML list, not a Kubernetes object (want apiVersion and kind, or kind: List with items)\n", stderr)
}
