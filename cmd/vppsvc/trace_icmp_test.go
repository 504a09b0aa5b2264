package main

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc/cmd/vppsvc/internal/sample"
	"github.com/vppsvc/vppsvc/dataplane"
)

// icmpCluster is the sample cluster with the two single-endpoint services
// of testdata/trace-icmp-services.yaml (pmtu-local on web-a1, pmtu-remote
// on web-b1), so that the backend an ICMP error comes from is known on a
// real VPP too.
func icmpCluster(t *testing.T) string {
	t.Helper()
	extra, err := os.ReadFile(filepath.Join("testdata", "trace-icmp-services.yaml"))
	require.NoError(t, err)
	return writeFile(t, "cluster.yaml", string(sample.ClusterYAML)+"\n---\n"+string(extra))
}

// onDataPlane adds --vpp-socket when the tests run on a real VPP.
func onDataPlane(t *testing.T, args ...string) []string {
	t.Helper()
	if socket := os.Getenv(dataplane.SocketEnv); socket != "" {
		args = append(args, "--vpp-socket", socket)
		t.Cleanup(func() { resetRealVPP(t, socket) })
	}
	return args
}

// icmpTraced is a traced flow with its ICMP part.
type icmpTraced struct {
	traced
	ICMP *icmpResult `json:"icmp"`
}

// A backend's "fragmentation needed" (ICMPv6 "packet too big") about a
// connection to a ClusterIP, traced with --send-about: trace opens the
// connection from the client pod 10.1.1.9 / fd00:1:1::9, then the backend
// it reached sends the error back, quoting the packet as it arrived. The
// same flows run on a real VPP 25.10 (make test-realvpp); what each
// expects is what VPP 25.10's code does (docs/fakevpp.md "### ICMP errors"):
//
//   - IPv4, NAT44-ED: the quoted header is translated back to the ClusterIP
//     as the client sent it. From the local backend (in2out) the outer
//     source becomes the ClusterIP; from a backend behind uplink0 the error
//     takes out2in, which (forwarding on) translates with the session's
//     inside flow and keeps an outer source that is not the flow's
//     rewritten source: the client gets it from the backend's IP.
//   - IPv6, cnat: ICMPv6 packet-too-big is not one of cnat's error types:
//     nothing is translated. From the remote backend the client gets it as
//     the backend sent it; the local backend saw the node's hairpin source
//     (docs/renderer-ipv6.md), so its error goes to that address, VPP's
//     own, and stays in VPP. A destination unreachable, which cnat knows,
//     comes back translated from both.
//   - A router's time exceeded keeps the router's source, its quoted
//     header translated.
func TestTraceICMPErrorFromBackend(t *testing.T) {
	const client4, client6 = "10.1.1.9", "fd00:1:1::9"
	type want struct {
		verdict, out, quoted, quotedOut, egress string
	}
	for _, tc := range []struct {
		name, typ, code, about, src string
		want                        want
	}{
		{"v4-local-frag-needed", "3", "4", "TCP 10.1.1.9:41001 -> 10.96.0.30:80", "",
			want{"forward", "10.96.0.30 -> " + client4, "TCP 10.1.1.9:41001 -> 10.1.1.2:8080", "TCP 10.1.1.9:41001 -> 10.96.0.30:80", "tap-default-client-a1"}},
		{"v4-remote-frag-needed", "3", "4", "TCP 10.1.1.9:41002 -> 10.96.0.31:80", "",
			want{"forward", "10.1.2.2 -> " + client4, "TCP 10.1.1.9:41002 -> 10.1.2.2:8080", "TCP 10.1.1.9:41002 -> 10.96.0.31:80", "tap-default-client-a1"}},
		{"v4-remote-router-ttl", "11", "0", "TCP 10.1.1.9:41003 -> 10.96.0.31:80", "192.168.16.254",
			want{"forward", "192.168.16.254 -> " + client4, "TCP 10.1.1.9:41003 -> 10.1.2.2:8080", "TCP 10.1.1.9:41003 -> 10.96.0.31:80", "tap-default-client-a1"}},
		{"v6-remote-packet-too-big", "2", "0", "TCP [fd00:1:1::9]:41004 -> [fd00:96::31]:80", "",
			want{"forward", "fd00:1:2::2 -> " + client6, "TCP [fd00:1:1::9]:41004 -> [fd00:1:2::2]:8080", "TCP [fd00:1:1::9]:41004 -> [fd00:1:2::2]:8080", "tap-default-client-a1"}},
		{"v6-local-packet-too-big", "2", "0", "TCP [fd00:1:1::9]:41005 -> [fd00:96::30]:80", "",
			want{"local", "fd00:1:1::2 -> 2001:db8:16::1", "TCP [2001:db8:16::1]:* -> [fd00:1:1::2]:8080", "TCP [2001:db8:16::1]:* -> [fd00:1:1::2]:8080", ""}},
		{"v6-remote-port-unreachable", "1", "4", "TCP [fd00:1:1::9]:41006 -> [fd00:96::31]:80", "",
			want{"forward", "fd00:96::31 -> " + client6, "TCP [fd00:1:1::9]:41006 -> [fd00:1:2::2]:8080", "TCP [fd00:1:1::9]:41006 -> [fd00:96::31]:80", "tap-default-client-a1"}},
		{"v6-local-port-unreachable", "1", "4", "TCP [fd00:1:1::9]:41007 -> [fd00:96::30]:80", "",
			want{"forward", "fd00:96::30 -> " + client6, "TCP [2001:db8:16::1]:* -> [fd00:1:1::2]:8080", "TCP [fd00:1:1::9]:41007 -> [fd00:96::30]:80", "tap-default-client-a1"}},
	} {
		var flowsFile strings.Builder
		fmt.Fprintf(&flowsFile, "- {name: %s, proto: ICMP, icmp-type: %s, icmp-code: %s, about: %q, send-about: true", tc.name, tc.typ, tc.code, tc.about)
		if tc.src != "" {
			fmt.Fprintf(&flowsFile, ", src: %s", tc.src)
		}
		flowsFile.WriteString("}\n")
		t.Run(tc.name, func(t *testing.T) {
			args := onDataPlane(t, "trace", "-f", icmpCluster(t), "--flows", writeFile(t, "flows.yaml", flowsFile.String()), "-o", "json")
			out, _, err := runCLI(t, args...)
			require.NoError(t, err)
			var raw []map[string]any
			require.NoError(t, json.Unmarshal([]byte(out), &raw))
			require.Len(t, raw, 1)
			checkContract(t, raw[0])
			var got []icmpTraced
			require.NoError(t, json.Unmarshal([]byte(out), &got))
			r := got[0]
			steps := strings.Join(r.Steps, "\n")
			require.NotNil(t, r.ICMP, steps)
			assert.Equal(t, tc.want.verdict, r.Verdict, steps)
			assert.Equal(t, tc.want.out, r.Out, steps)
			assert.Equal(t, tc.want.egress, r.Egress, steps)
			assert.Regexp(t, headerPattern(tc.want.quoted), r.ICMP.Quoted, "quoted as the backend saw it")
			assert.Regexp(t, headerPattern(tc.want.quotedOut), r.ICMP.QuotedOut, "quoted as it left VPP")
			assert.Equal(t, tc.typ, fmt.Sprint(r.ICMP.Type))
			assert.Equal(t, tc.code, fmt.Sprint(r.ICMP.Code))
			assert.False(t, r.ReplyOK, "nobody answers an error")
			assert.Contains(t, steps, "about: "+tc.about+" sent first on tap-default-client-a1: left via ")
		})
	}
}

// headerPattern matches a quoted header where a port written * is any
// port: the port cnat allocates for the hairpin source differs between
// runs on a real VPP.
func headerPattern(h string) string {
	return "^" + strings.ReplaceAll(regexp.QuoteMeta(h), `:\*`, `:\d+`) + "$"
}

// The text output shows the quoted header as sent and as it left.
func TestTraceICMPText(t *testing.T) {
	out, _, err := runCLI(t, "trace", "-f", icmpCluster(t), "--proto", "ICMP", "--icmp-type", "3", "--icmp-code", "4",
		"--about", "TCP 10.1.1.9:41001 -> 10.96.0.30:80", "--send-about")
	require.NoError(t, err)
	assert.Contains(t, out, "flow: ICMP 10.1.1.2 -> 10.1.1.9 fragmentation-needed (type 3 code 4), ingress tap-default-web-a1\n"+
		"  quoted:    TCP 10.1.1.9:41001 -> 10.1.1.2:8080\n"+
		"  quoted as: TCP 10.1.1.9:41001 -> 10.96.0.30:80 (as it left)\n"+
		"  verdict:   forward via tap-default-client-a1 as 10.96.0.30 -> 10.1.1.9\n")
	assert.Contains(t, out, "  reply:     none (nobody answers an ICMP error)\n")

	out, _, err = runCLI(t, "trace", "--src", "10.1.1.9", "--dst", "10.1.2.2", "--proto", "icmp")
	require.NoError(t, err)
	assert.Contains(t, out, "flow: ICMP 10.1.1.9 -> 10.1.2.2 echo-request id 40000, ingress tap-default-client-a1\n")
	assert.Contains(t, out, "  reply ok:  true\n")

	// Any type and code: an echo with a code goes through NAT44-ED (the
	// node's SNAT) and comes back; a timestamp request is dropped by it.
	out, _, err = runCLI(t, "trace", "-f", icmpCluster(t), "--src", "10.1.1.9", "--dst", "8.8.8.8", "--proto", "icmp", "--icmp-type", "8", "--icmp-code", "3")
	require.NoError(t, err)
	assert.Contains(t, out, "flow: ICMP 10.1.1.9 -> 8.8.8.8 echo-request/3 id 40000")
	assert.Contains(t, out, "  reply ok:  true\n")
	out, _, err = runCLI(t, "trace", "-f", icmpCluster(t), "--src", "10.1.1.9", "--dst", "8.8.8.8", "--proto", "icmp", "--icmp-type", "13")
	require.NoError(t, err)
	assert.Contains(t, out, "flow: ICMP 10.1.1.9 -> 8.8.8.8 timestamp-request id 40000")
	assert.Contains(t, out, "bad ICMP type 13")
}

// Without --send-about the error is sent as given: quoting a connection
// that VPP has no session of, it is not translated (here: a flows file
// whose first flow opens the connection makes the session, so the same
// error then is).
func TestTraceICMPErrorAsGiven(t *testing.T) {
	flows := writeFile(t, "flows.yaml", `
- {name: before, src: 10.1.2.2, proto: ICMP, icmp-type: 3, icmp-code: 4, about: "TCP 10.1.1.9:41010 -> 10.1.2.2:8080"}
- {name: open, src: "10.1.1.9:41010", dst: "10.96.0.31:80"}
- {name: after, src: 10.1.2.2, proto: ICMP, icmp-type: 3, icmp-code: 4, about: "TCP 10.1.1.9:41010 -> 10.1.2.2:8080"}
`)
	out, _, err := runCLI(t, onDataPlane(t, "trace", "-f", icmpCluster(t), "--flows", flows, "-o", "json")...)
	require.NoError(t, err)
	var got []icmpTraced
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Len(t, got, 3)
	assert.Equal(t, "10.1.1.9", got[0].Dst, "the error goes back to the quoted packet's source")
	assert.Equal(t, "uplink0", got[0].Ingress, "from a pod of node-b")
	assert.NotEqual(t, "TCP 10.1.1.9:41010 -> 10.96.0.31:80", got[0].ICMP.QuotedOut, "no session: not translated")
	assert.Equal(t, "forward", got[1].Verdict)
	assert.Equal(t, "forward", got[2].Verdict, strings.Join(got[2].Steps, "\n"))
	assert.Equal(t, "TCP 10.1.1.9:41010 -> 10.96.0.31:80", got[2].ICMP.QuotedOut)
}

// --ttl 1: VPP drops a packet it would forward and answers with a time
// exceeded from the receiving interface's address (host0's for a pod's
// tap, unnumbered to it), quoting the packet as the client sent it — NAT44
// answers before translating; behind cnat the error quotes the translated
// packet and cnat's session translates it back. On fakevpp and on a real
// VPP (make test-realvpp).
func TestTraceTTLExpiry(t *testing.T) {
	for _, tc := range []struct{ src, dst, from, via string }{
		{"10.1.1.9", "10.96.0.10:80", "172.30.255.1", "tap-default-client-a1"},
		{"10.1.1.9", "8.8.8.8:443", "172.30.255.1", "tap-default-client-a1"},
		{"198.51.100.7", "203.0.113.10:80", "192.168.16.1", "uplink0"},
		{"fd00:1:1::9", "[fd00:96::15]:80", "fd00:ffff::1", "tap-default-client-a1"},
		{"fd00:1:1::9", "[2001:db8:99::7]:443", "fd00:ffff::1", "tap-default-client-a1"},
	} {
		out, _, err := runCLI(t, onDataPlane(t, "trace", "--src", tc.src, "--dst", tc.dst, "--ttl", "1", "-o", "json")...)
		require.NoError(t, err, tc.dst)
		var raw map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &raw))
		checkContract(t, raw)
		var r struct {
			traced
			VPPSent *vppSent `json:"vpp_sent"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &r))
		steps := strings.Join(r.Steps, "\n")
		assert.Equal(t, "drop", r.Verdict, steps)
		require.NotNil(t, r.VPPSent, steps)
		assert.Equal(t, "time-exceeded/0", r.VPPSent.Name)
		client, err := netip.ParseAddrPort(r.Src)
		require.NoError(t, err)
		assert.Equal(t, tc.from+" -> "+client.Addr().String(), r.VPPSent.Out, steps)
		assert.Equal(t, tc.via, r.VPPSent.Egress)
		assert.Equal(t, "TCP "+r.Src+" -> "+r.Dst, r.VPPSent.Quoted, "quotes the packet as the client sent it")
	}
	// TTL 2 is forwarded.
	out, _, err := runCLI(t, onDataPlane(t, "trace", "--src", "10.1.1.9", "--dst", "10.96.0.10:80", "--ttl", "2", "-o", "json")...)
	require.NoError(t, err)
	assert.Contains(t, out, `"verdict": "forward"`)
	assert.NotContains(t, out, "vpp_sent")
}
