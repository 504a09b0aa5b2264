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
// object, and a non-zero exit status.
func TestBadInputIsOneErrorLine(t *testing.T) {
	undecodable := writeFile(t, "bad.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: not-a-list}\n")
	badConfig := writeFile(t, "config.yaml", "nat44:\n  twiceNATAdress: 192.168.16.1\n")
	for _, tc := range []struct {
		name  string
		args  []string
		stdin string
		err   string // the whole line, or its start when it ends with "…"
	}{
		{"unreadable file", []string{"render", "-f", "/nonexistent/cluster.yaml"}, "", "vppsvc: open /nonexistent/cluster.yaml: no such file or directory"},
		{"unknown flag", []string{"render", "--bogus"}, "", "vppsvc: unknown flag: --bogus"},
		{"unknown node", []string{"render", "--node", "node-z"}, "", `vppsvc: unknown node "node-z" (nodes: node-a, node-b, node-c)`},
		{"undecodable object", []string{"render", "-f", undecodable}, "", "vppsvc: " + undecodable + ": document 2: Service web: …"},
		{"undecodable stdin", []string{"render", "-f", "-"}, "kind: [oops\n", "vppsvc: stdin: document 1: …"},
		{"no nodes", []string{"render", "-f", "-"}, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", "vppsvc: the cluster has no Node objects: nothing to simulate"},
		{"unreadable config", []string{"render", "--config", "/nonexistent/config.yaml"}, "", "vppsvc: --config: open /nonexistent/config.yaml: no such file or directory"},
		{"misspelt config field", []string{"render", "--config", badConfig}, "", "vppsvc: --config " + badConfig + ": …"},
		{"bad output format", []string{"render", "-o", "html"}, "", `vppsvc: -o: want services, vppcli, yaml, json, text, got "html"`},
		{"stray argument", []string{"render", "extra"}, "", `vppsvc: unknown command "extra" for "vppsvc render"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runMain(t, tc.stdin, tc.args...)
			assert.Equal(t, 1, code)
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
	assert.Contains(t, stdout, "nat44 add static mapping tcp local 10.1.0.5 8080 external 10.96.0.10 80")
	assert.Contains(t, stdout, "nat44 add static mapping tcp local 10.1.0.6 8080 external 10.96.0.11 80")
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

// "-" reads stdin for every file flag: the renderer configuration too; a
// cluster on stdin that is not Kubernetes objects fails at once.
func TestStdinForEveryFile(t *testing.T) {
	stdout, stderr, code := runMain(t, "nat44: {localEndpointWeight: 3}\n", "render", "--config", "-", "-o", "vppcli")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "external 10.96.0.10:80 local 10.1.1.2:8080 vrf 0 probability 9 local 10.1.2.2:8080 vrf 0 probability 3", "the local endpoint weighs 3 times more, as the configuration on stdin says")

	_, stderr, code = runMain(t, "nat44: {twiceNATAdress: 192.168.16.1}\n", "render", "--config", "-")
	assert.Equal(t, 1, code)
	assert.True(t, strings.HasPrefix(stderr, `vppsvc: --config stdin: `), stderr)
	assert.Contains(t, stderr, `unknown field "twiceNATAdress"`)

	_, stderr, code = runMain(t, strings.Repeat("-\n", 100000), "render", "-f", "-")
	assert.Equal(t, 1, code)
	assert.Equal(t, "vppsvc: stdin: document 1: a YAML list, not a Kubernetes object (want apiVersion and kind, or kind: List with items)\n", stderr)
}
