package main

import (
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc/dataplane"
)

// The trace JSON contract (docs/cli.md): these keys with these JSON types are
// always present for a traced flow, whatever its verdict.
var traceContract = map[string]string{
	"name": "string", "verdict": "string", "endpoints": "array", "snat": "bool",
	"ingress": "string", "egress": "string", "reply_ok": "bool", "steps": "array",
}

// traceExtras may appear besides the contract: for people, not parsers.
var traceExtras = map[string]string{"src": "string", "dst": "string", "proto": "string", "out": "string", "reason": "string", "icmp": "object", "vpp_sent": "object"}

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
		if flow["proto"] == "ICMP" || flow["proto"] == "ICMPv6" {
			// ICMP has no ports: endpoints are bare addresses.
			a, err := netip.ParseAddr(e.(string))
			if assert.NoError(t, err) {
				assert.Equal(t, e, a.String())
				eps = append(eps, netip.AddrPortFrom(a, 0))
			}
			continue
		}
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
// "error"} only, the error naming its position, and the others are still
// traced; the exit status is 1, with one warning per bad entry and a last
// line that counts them.
func TestTraceBatchWithMalformedFlow(t *testing.T) {
	flows := filepath.Join(t.TempDir(), "flows.yaml")
	require.NoError(t, os.WriteFile(flows, []byte(`
- {name: ok-v4, src: 10.1.1.9, dst: "10.96.0.53:53", proto: udp}
- {name: no-port, src: 10.1.1.9, dst: 10.96.0.10}
- {src: 10.1.1.9, dst: "10.96.0.10:80", proto: GRE}
- {name: mixed-families, src: 10.1.1.9, dst: "[fd00:96::15]:80"}
- {name: bad-ingress, src: 10.1.1.9, dst: "10.96.0.10:80", ingress: eth9}
- {name: ok-v6, src: "fd00:1:1::9", dst: "[fd00:96::15]:80"}
- {name: typo, src: 10.1.1.9, dst: "10.96.0.10:80", prto: UDP}
- {name: ok-last, src: 10.1.1.9, dst: "10.96.0.10:80"}
`), 0o644))
	stdout, stderr, code := runMain(t, "", "trace", "--flows", flows, "-o", "json")
	require.Equal(t, 1, code, stderr)
	var results []map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &results))
	require.Len(t, results, 8)
	errs := map[string]string{
		"no-port":        `entry 2: dst: "10.96.0.10" has no port (want IP:PORT, or [IPv6]:PORT)`,
		"flow-3":         `entry 3: proto: want TCP, UDP, SCTP or ICMP, got "GRE"`,
		"mixed-families": "entry 4: src 10.1.1.9 and dst fd00:96::15 are of different address families",
		"bad-ingress":    `entry 5: ingress: no interface "eth9" on node node-a`,
		"typo":           `entry 7: unknown field "prto" (fields: name, src, dst, proto, ingress, ttl, icmp-type, icmp-code, about, send-about)`,
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
	assert.Equal(t, "ok-last", results[7]["name"])
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	require.Len(t, lines, 6, stderr)
	assert.Contains(t, lines[4], `level=warning msg="flow not traced" entry=7 error="entry 7: unknown field \"prto\"`)
	assert.Contains(t, lines[4], "name=typo")
	assert.Equal(t, "vppsvc: 5 of 8 flows could not be traced (their errors are in the output)", lines[5])
}

// --flows - reads the flows from stdin; an empty flows file is an error,
// not a silent success; stdin is read by one flag only.
func TestTraceFlowsFromStdin(t *testing.T) {
	stdout, stderr, code := runMain(t, "- {name: web, src: 10.1.1.9, dst: \"10.96.0.10:80\"}\n", "trace", "--flows", "-", "-o", "json")
	require.Equal(t, 0, code, stderr)
	var results []map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &results))
	require.Len(t, results, 1)
	assert.Equal(t, "web", results[0]["name"])
	assert.Equal(t, "forward", results[0]["verdict"])

	empty := writeFile(t, "empty.yaml", "# nothing yet\n")
	for _, tc := range []struct {
		stdin string
		args  []string
		code  int
		err   string
	}{
		{"", []string{"trace", "--flows", "-"}, 1, "vppsvc: stdin: flows file: no flows in it (want a list of {name, src, dst, proto, ingress})\n"},
		{"", []string{"trace", "--flows", empty}, 1, "vppsvc: " + empty + ": flows file: no flows in it (want a list of {name, src, dst, proto, ingress})\n"},
		{"", []string{"trace", "-f", "-", "--flows", "-"}, 2, "vppsvc: -f and --flows both read stdin (-): give one of them a file\n"},
		{"", []string{"render", "-f", "-", "--config", "-"}, 2, "vppsvc: -f and --config both read stdin (-): give one of them a file\n"},
	} {
		stdout, stderr, code := runMain(t, tc.stdin, tc.args...)
		assert.Equal(t, tc.code, code, "%v", tc.args)
		assert.Empty(t, stdout, "%v", tc.args)
		assert.Equal(t, tc.err, stderr, "%v", tc.args)
	}
}

// A packet from one of the node's IPs is sent as the node's kernel sends it
// (through host0, from its host-link address: the node IPs are VPP's own, on
// uplink0), so that its reply comes back; the first step says so. The same
// test runs on a real VPP (make test-realvpp).
func TestTraceFromNodeIP(t *testing.T) {
	for _, tc := range []struct{ src, dst, kernel string }{
		{"192.168.16.1", "10.96.0.10:80", "172.30.255.2:40000"},
		{"[2001:db8:16::1]:41000", "[fd00:96::15]:80", "[fd00:ffff::2]:41000"},
	} {
		args := []string{"trace", "--src", tc.src, "--dst", tc.dst, "-o", "json"}
		if socket := os.Getenv(dataplane.SocketEnv); socket != "" {
			args = append(args, "--vpp-socket", socket)
			t.Cleanup(func() { resetRealVPP(t, socket) })
		}
		out, _, err := runCLI(t, args...)
		require.NoError(t, err)
		var flow traced
		require.NoError(t, json.Unmarshal([]byte(out), &flow))
		assert.Equal(t, "forward", flow.Verdict, tc.src)
		assert.Equal(t, "host0", flow.Ingress, tc.src)
		assert.Equal(t, tc.kernel, flow.Src, tc.src)
		if !strings.HasPrefix(tc.src, "[") {
			// IPv6 may be source-NATed: hairpinSNAT covers every path to a
			// local endpoint (docs/renderer-ipv6.md).
			assert.False(t, flow.SNAT, tc.src)
		}
		assert.True(t, flow.ReplyOK, "%s: %s", tc.src, strings.Join(flow.Steps, "\n"))
		require.NotEmpty(t, flow.Steps)
		assert.Contains(t, flow.Steps[0], "is node node-a's IP, held by VPP on uplink0; the node's kernel sends through host0 from")
	}
}

// Loopback destinations never reach VPP: trace says the host keeps them
// (kube-proxy's nftables mode does not serve localhost NodePorts either).
func TestTraceLoopbackIsNotIntercepted(t *testing.T) {
	for _, tc := range []struct{ src, dst string }{
		{"192.168.16.1", "127.0.0.1:30080"}, {"2001:db8:16::1", "[::1]:30080"}, {"192.168.16.1", "127.0.0.53:53"},
	} {
		dst := tc.dst
		out, _, err := runCLI(t, "trace", "--src", tc.src, "--dst", dst, "-o", "json")
		require.NoError(t, err, dst)
		var flow traced
		require.NoError(t, json.Unmarshal([]byte(out), &flow), dst)
		assert.Equal(t, "host", flow.Verdict, dst)
		assert.Empty(t, flow.Endpoints, dst)
		assert.False(t, flow.ReplyOK, dst)
		require.NotEmpty(t, flow.Steps, dst)
		assert.Contains(t, flow.Steps[0], "is a loopback address: the node's kernel delivers it itself and it never reaches VPP", dst)
	}
}

// A reply delivered to VPP itself says why: here the client claims the
// node IP on uplink0, so the endpoint answers an address VPP owns.
func TestTraceExplainsLocalReply(t *testing.T) {
	out, _, err := runCLI(t, "trace", "--src", "192.168.16.1", "--dst", "10.96.0.10:80", "--ingress", "uplink0")
	require.NoError(t, err)
	const why = "local (192.168.16.1 is an address of VPP's uplink0: the reply is delivered to VPP and never reaches the client)"
	assert.Contains(t, out, "  reply ok:  false: "+why+"\n")
	assert.Contains(t, out, "[SYN|ACK]: "+why+"\n")
	assert.NotContains(t, out, "local ()")
}

func TestTraceText(t *testing.T) {
	out, _, err := runCLI(t, "trace", "--src", "192.0.2.7", "--dst", "192.168.16.1:22")
	require.NoError(t, err)
	assert.Contains(t, out, "flow: TCP 192.0.2.7:40000 -> 192.168.16.1:22, ingress uplink0\n  verdict:   local: addressed to VPP itself as 192.0.2.7:40000 -> 192.168.16.1:22\n")
}

// Exit status: 0 for traced flows (per-flow errors included); with one line
// on stderr, 2 for usage errors (a bad flag value is one) and 1 for a file
// that cannot be read.
func TestTraceExitStatus(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"trace", "--src", "10.1.1.9", "--dst", "10.96.0.10:80", "-o", "json"}, 0, ""},
		{[]string{"trace", "-f", "/nonexistent/cluster.yaml", "--src", "10.1.1.9", "--dst", "10.96.0.10:80"}, 1, "vppsvc: open /nonexistent/cluster.yaml: no such file or directory\n"},
		{[]string{"trace", "--flows", "/nonexistent/flows.yaml"}, 1, "vppsvc: open /nonexistent/flows.yaml: no such file or directory\n"},
		{[]string{"trace", "--src", "10.1.1.9"}, 2, "vppsvc: need --src and --dst, or --flows FILE\n"},
		{[]string{"trace", "--src", "10.1.1.9", "--dst", "10.96.0.10"}, 2, "vppsvc: dst: \"10.96.0.10\" has no port (want IP:PORT, or [IPv6]:PORT)\n"},
		{[]string{"trace", "--src", "10.1.1.9", "--dst", "10.96.0.10:80", "--ingress", "eth9", "-o", "json"}, 2, "vppsvc: ingress: no interface \"eth9\" on node node-a\n"},
		{[]string{"trace", "--src", "10.1.1.9", "--dst", "10.96.0.10:80", "-o", "xml"}, 2, "vppsvc: -o: want text or json, got \"xml\"\n"},
	} {
		stdout, stderr, code := runMain(t, "", tc.args...)
		assert.Equal(t, tc.code, code, "%v: %s", tc.args, stderr)
		if tc.code != 0 {
			assert.Equal(t, tc.err, stderr, tc.args)
			assert.Empty(t, stdout, tc.args)
		}
	}
}
