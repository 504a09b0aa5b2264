package main

import (
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The trace JSON contract (docs/cli.md): these keys with these JSON types are
// always present for a traced flow, whatever its verdict.
var traceContract = map[string]string{
	"name": "string", "verdict": "string", "endpoints": "array", "snat": "bool",
	"ingress": "string", "egress": "string", "reply_ok": "bool", "steps": "array",
}

// traceExtras may appear besides the contract: for people, not parsers.
var traceExtras = map[string]string{"src": "string", "dst": "string", "proto": "string", "out": "string", "reason": "string"}

func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case bool:
		return "bool"
	case []any:
		return "array"
	case float64:
		return "number"
	case nil:
		return "null"
	}
	return "object"
}

// checkContract checks one traced flow's keys and types.
func checkContract(t *testing.T, flow map[string]any) {
	t.Helper()
	for key, typ := range traceContract {
		if assert.Contains(t, flow, key) {
			assert.Equal(t, typ, jsonType(flow[key]), "%s of %v", key, flow["name"])
		}
	}
	for key, v := range flow {
		want, ok := traceContract[key]
		if !ok {
			want, ok = traceExtras[key]
		}
		if assert.True(t, ok, "undocumented key %q", key) {
			assert.Equal(t, want, jsonType(v), key)
		}
	}
	assert.Contains(t, []any{"forward", "drop", "local"}, flow["verdict"])
	var eps []netip.AddrPort
	for _, e := range flow["endpoints"].([]any) {
		ep, err := netip.ParseAddrPort(e.(string))
		if assert.NoError(t, err) {
			assert.Equal(t, e, ep.String(), "ip:port, [IPv6]:port")
			eps = append(eps, ep)
		}
	}
	assert.True(t, slices.IsSortedFunc(eps, netip.AddrPort.Compare), "sorted by address: %v", eps)
	for _, s := range flow["steps"].([]any) {
		assert.IsType(t, "", s)
	}
}

func TestTraceSingleFlowJSON(t *testing.T) {
	out, _, err := runCLI(t, "trace", "--src", "10.1.1.9", "--dst", "10.96.0.10:80", "-o", "json")
	require.NoError(t, err)
	var flow map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &flow), "a single flow is one object")
	assert.NotContains(t, out, `\u003e`, "no HTML escaping: \"out\" reads src -> dst")
	checkContract(t, flow)
	assert.Equal(t, "forward", flow["verdict"])
	assert.Equal(t, []any{"10.1.1.2:8080", "10.1.2.2:8080", "10.1.3.2:8080"}, flow["endpoints"])
	assert.Equal(t, "tap-default-client-a1", flow["ingress"])
	assert.Equal(t, "10.1.1.9:40000", flow["src"], "default source port")

	out, _, err = runCLI(t, "trace", "--src", "192.0.2.7", "--dst", "203.0.113.10:80", "-o", "json")
	require.NoError(t, err)
	flow = nil
	require.NoError(t, json.Unmarshal([]byte(out), &flow))
	checkContract(t, flow)
	assert.Equal(t, "drop", flow["verdict"])
	assert.Equal(t, []any{}, flow["endpoints"], "a dropped packet reaches no endpoint")
	assert.Equal(t, "", flow["egress"])
	assert.Equal(t, false, flow["reply_ok"])
	assert.NotContains(t, flow, "out")
	assert.Contains(t, flow["reason"], "acl-in uplink0: deny")
}

func TestTraceIPv6Formatting(t *testing.T) {
	out, _, err := runCLI(t, "trace", "--src", "fd00:1:1::9", "--dst", "[fd00:96::15]:80", "-o", "json")
	require.NoError(t, err)
	var flow map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &flow))
	checkContract(t, flow)
	assert.Equal(t, []any{"[fd00:1:1::2]:8080", "[fd00:1:2::2]:8080", "[fd00:1:3::2]:8080"}, flow["endpoints"])
	assert.Equal(t, "[fd00:1:1::9]:40000", flow["src"])
	assert.Equal(t, "[fd00:96::15]:80", flow["dst"])
}

// A batch yields an array in file order; a malformed entry is {"name",
// "error"} only, and the others are still traced; the exit status is 0.
func TestTraceBatchWithMalformedFlow(t *testing.T) {
	flows := filepath.Join(t.TempDir(), "flows.yaml")
	require.NoError(t, os.WriteFile(flows, []byte(`
- {name: ok-v4, src: 10.1.1.9, dst: "10.96.0.53:53", proto: udp}
- {name: no-port, src: 10.1.1.9, dst: 10.96.0.10}
- {src: 10.1.1.9, dst: "10.96.0.10:80", proto: SCTP}
- {name: mixed-families, src: 10.1.1.9, dst: "[fd00:96::15]:80"}
- {name: bad-ingress, src: 10.1.1.9, dst: "10.96.0.10:80", ingress: eth9}
- {name: ok-v6, src: "fd00:1:1::9", dst: "[fd00:96::15]:80"}
`), 0o644))
	stdout, stderr, code := runMain(t, "", "trace", "--flows", flows, "-o", "json")
	require.Equal(t, 0, code, stderr)
	var results []map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &results))
	require.Len(t, results, 6)
	errs := map[string]string{
		"no-port":        `dst: "10.96.0.10" has no port (want IP:PORT, or [IPv6]:PORT)`,
		"flow-3":         `proto: want TCP or UDP, got "SCTP"`,
		"mixed-families": "src 10.1.1.9 and dst fd00:96::15 are of different address families",
		"bad-ingress":    `ingress: no interface "eth9" on node node-a`,
	}
	for i, r := range results {
		name := r["name"].(string)
		if want, bad := errs[name]; bad {
			assert.Equal(t, map[string]any{"name": name, "error": want}, r, "entry %d", i+1)
			continue
		}
		checkContract(t, r)
		assert.Equal(t, "forward", r["verdict"], name)
	}
	assert.Equal(t, "ok-v4", results[0]["name"])
	assert.Equal(t, "ok-v6", results[5]["name"])
}

func TestTraceText(t *testing.T) {
	out, _, err := runCLI(t, "trace", "--src", "192.0.2.7", "--dst", "192.168.16.1:22")
	require.NoError(t, err)
	assert.Contains(t, out, "flow: TCP 192.0.2.7:40000 -> 192.168.16.1:22, ingress uplink0\n  verdict:   local: addressed to VPP itself as 192.0.2.7:40000 -> 192.168.16.1:22\n")
}

// Exit status: 0 for traced flows (per-flow errors included), non-zero with
// one line on stderr for usage errors and a cluster file that cannot be read.
func TestTraceExitStatus(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"trace", "--src", "10.1.1.9", "--dst", "10.96.0.10:80", "-o", "json"}, 0, ""},
		{[]string{"trace", "-f", "/nonexistent/cluster.yaml", "--src", "10.1.1.9", "--dst", "10.96.0.10:80"}, 1, "vppsvc: open /nonexistent/cluster.yaml: no such file or directory\n"},
		{[]string{"trace", "--flows", "/nonexistent/flows.yaml"}, 1, "vppsvc: open /nonexistent/flows.yaml: no such file or directory\n"},
		{[]string{"trace", "--src", "10.1.1.9"}, 1, "vppsvc: need --src and --dst, or --flows FILE\n"},
		{[]string{"trace", "--src", "10.1.1.9", "--dst", "10.96.0.10"}, 1, "vppsvc: dst: \"10.96.0.10\" has no port (want IP:PORT, or [IPv6]:PORT)\n"},
		{[]string{"trace", "--src", "10.1.1.9", "--dst", "10.96.0.10:80", "--ingress", "eth9", "-o", "json"}, 1, "vppsvc: ingress: no interface \"eth9\" on node node-a\n"},
		{[]string{"trace", "--src", "10.1.1.9", "--dst", "10.96.0.10:80", "-o", "xml"}, 1, "vppsvc: -o: want text or json, got \"xml\"\n"},
	} {
		stdout, stderr, code := runMain(t, "", tc.args...)
		assert.Equal(t, tc.code, code, "%v: %s", tc.args, stderr)
		if tc.code != 0 {
			assert.Equal(t, tc.err, stderr, tc.args)
			assert.Empty(t, stdout, tc.args)
		}
	}
}
