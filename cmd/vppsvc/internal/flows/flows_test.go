package flows

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseEndpoint(t *testing.T) {
	for _, tc := range []struct {
		in       string
		needPort bool
		want     string
		err      string
	}{
		{in: "10.1.1.2:40000", needPort: true, want: "10.1.1.2:40000"},
		{in: " 10.1.1.2 ", want: "10.1.1.2:40000"},
		{in: "10.1.1.2", needPort: true, err: "has no port"},
		{in: "[fd00::1]:80", needPort: true, want: "[fd00::1]:80"},
		{in: "fd00::1", want: "[fd00::1]:40000"},
		{in: "fd00::1", needPort: true, err: "has no port"},
		{in: "::ffff:10.0.0.1", want: "10.0.0.1:40000"},
		{in: "10.1.1.2:0", needPort: true, err: "port must be 1-65535"},
		{in: "10.1.1.2:70000", needPort: true, err: "port must be 1-65535"},
		{in: "10.1.1.2:http", needPort: true, err: "port must be 1-65535"},
		{in: "300.1.1.2:80", needPort: true, err: "bad IP address"},
		{in: "fd00::1:80", needPort: true, err: "has no port"},
		{in: "[fd00::1]80", needPort: true, err: "is not IP"},
		{in: "fe80::1%eth0", err: "zones"},
		{in: "", err: "missing address"},
	} {
		got, err := ParseEndpoint(tc.in, tc.needPort)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, FormatEndpoint(got), tc.in)
	}
}

func TestParseFileKeepsGoodFlowsBesideBadOnes(t *testing.T) {
	got, err := ParseFile([]byte(`
- {name: pod-to-web, src: 10.1.1.9, dst: 10.96.0.10:80}
- {name: dns, src: "10.1.1.9:5353", dst: "10.96.0.53:53", proto: udp, ingress: tap-x}
- {name: bad-proto, src: 10.1.1.9, dst: 10.96.0.10:80, proto: GRE}
- {name: mixed, src: 10.1.1.9, dst: "[fd00:96::15]:80"}
- {src: 10.1.1.9, dst: 10.96.0.10}
`))
	require.NoError(t, err)
	require.Len(t, got, 5)
	assert.NoError(t, got[0].Err)
	assert.Equal(t, Flow{Name: "pod-to-web", Src: netip.MustParseAddrPort("10.1.1.9:40000"), Dst: netip.MustParseAddrPort("10.96.0.10:80"), Protocol: 6}, got[0].Flow)
	assert.NoError(t, got[1].Err)
	assert.Equal(t, uint8(17), got[1].Flow.Protocol)
	assert.Equal(t, "tap-x", got[1].Flow.Ingress)
	assert.ErrorContains(t, got[2].Err, "proto")
	assert.ErrorContains(t, got[3].Err, "different address families")
	assert.Equal(t, "flow-5", got[4].Name)
	assert.ErrorContains(t, got[4].Err, "dst")
}

func TestParseFileRejectsNonList(t *testing.T) {
	_, err := ParseFile([]byte("name: x\nsrc: 1.2.3.4\n"))
	assert.ErrorContains(t, err, "want a list")
	_, err = ParseFile([]byte("just words"))
	assert.ErrorContains(t, err, "want a list")
}

// A file that holds no flow at all is an error: tracing nothing must not
// look like success.
func TestParseFileRejectsEmptyFile(t *testing.T) {
	for _, in := range []string{"", "\n\n", "# only a comment\n", "[]", "---\n", "null"} {
		_, err := ParseFile([]byte(in))
		assert.ErrorIs(t, err, ErrNoFlows, "%q", in)
	}
}

// Every entry is decoded on its own: an unknown or mistyped field, a
// non-object, an empty entry is that entry's error, named by position and
// name, and the entries around it still parse.
func TestParseFileReportsEachBadEntry(t *testing.T) {
	got, err := ParseFile([]byte(`
- {name: first, src: 10.1.1.9, dst: 10.96.0.10:80}
- {name: typo, src: 10.1.1.9, dst: 10.96.0.10:80, prto: UDP}
- {name: numeric-proto, src: 10.1.1.9, dst: 10.96.0.10:80, proto: 17}
- {src: 10.1.1.9, dst: 10.96.0.10:80, source: 10.1.1.8}
- just-a-string
-
- {name: [not, a, string], src: 10.1.1.9, dst: 10.96.0.10:80}
- {name: last, src: 10.1.1.9, dst: "10.96.0.53:53", proto: udp}
`))
	require.NoError(t, err)
	require.Len(t, got, 8)
	for i, tc := range []struct{ name, err string }{
		{"first", ""},
		{"typo", `unknown field "prto" (fields: name, src, dst, proto, ingress, ttl, icmp-type, icmp-code, about, send-about)`},
		{"numeric-proto", "proto: want a string, got a number"},
		{"flow-4", `unknown field "source" (fields: name, src, dst, proto, ingress, ttl, icmp-type, icmp-code, about, send-about)`},
		{"flow-5", "want {name, src, dst, proto, ingress, ttl, icmp-type, icmp-code, about, send-about}, got a string"},
		{"flow-6", "empty entry: want {name, src, dst, proto, ingress, ttl, icmp-type, icmp-code, about, send-about}"},
		{"flow-7", "name: want a string, got an array"},
		{"last", ""},
	} {
		assert.Equal(t, i+1, got[i].Index)
		assert.Equal(t, tc.name, got[i].Name, "entry %d", i+1)
		if tc.err == "" {
			assert.NoError(t, got[i].Err, tc.name)
			assert.Equal(t, tc.name, got[i].Flow.Name)
			continue
		}
		assert.EqualError(t, got[i].Err, tc.err, "entry %d", i+1)
	}
	assert.Equal(t, uint8(17), got[7].Flow.Protocol)
}

func TestParseFileRejectsOversizedFile(t *testing.T) {
	flow := "- {name: a, src: 10.1.1.9, dst: 10.96.0.10:80}\n"
	big := []byte(strings.Repeat(flow, MaxFileSize/len(flow)+1))
	require.Greater(t, len(big), MaxFileSize)
	_, err := ParseFile(big)
	assert.ErrorContains(t, err, "over the limit of 1048576 bytes", "rejected before it is decoded (a valid file of valid flows)")

	got, err := ParseFile(big[:len(big)/len(flow)*len(flow)-len(flow)])
	require.NoError(t, err, "a file just under the limit is still parsed")
	assert.Len(t, got, MaxFileSize/len(flow))
}

// maxFuzzInput bounds the inputs FuzzParseFile feeds to ParseFile. Without
// it the fuzzer stalls: it finds a long input with new coverage (3,351
// bytes, mostly ';', in the run that showed it) that no shorter candidate
// keeps, and the engine's minimizer, which tries
// O(n²) candidates, then runs for the whole -fuzzminimizetime (60 s) while
// 0 execs/s are reported. ParseFile's own work is per entry, so 256 bytes (five
// flows in flow style) exercises it; the size limit has its own test.
const maxFuzzInput = 256

func FuzzParseFile(f *testing.F) {
	f.Add([]byte("- {name: a, src: 10.1.1.9, dst: 10.96.0.10:80}"))
	f.Add([]byte("- {src: '[fd00::1]:1', dst: '[fd00::2]:2', proto: udp}"))
	f.Add([]byte("[]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > maxFuzzInput {
			return
		}
		parsed, err := ParseFile(data)
		if err != nil {
			return
		}
		for _, p := range parsed {
			if p.Err == nil && (!p.Flow.Src.IsValid() || !p.Flow.Dst.IsValid() || p.Flow.Dst.Port() == 0) {
				t.Fatalf("accepted an invalid flow %+v", p.Flow)
			}
		}
	})
}
