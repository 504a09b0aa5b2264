package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// update rewrites the golden files: go test ./cmd/vppsvc -run Golden -update
var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestRenderGolden renders the embedded sample cluster on node-a and compares
// the VPP CLI and the fake VPP's state with the reviewed golden files. A
// renderer or VPP-layer change that moves any VPP object shows up here;
// regenerate with -update and review the diff.
func TestRenderGolden(t *testing.T) {
	for _, format := range []string{"vppcli", "text"} {
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

func TestRenderYAMLAndJSON(t *testing.T) {
	out, _, err := runCLI(t, "render", "-o", "json")
	require.NoError(t, err)
	var items []struct {
		Key    string         `json:"key"`
		Owners []string       `json:"owners"`
		State  string         `json:"state"`
		Config map[string]any `json:"config"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &items))
	require.NotEmpty(t, items)
	for _, it := range items {
		assert.Equal(t, "applied", it.State, it.Key)
		assert.NotEmpty(t, it.Owners, it.Key)
	}

	yamlOut, _, err := runCLI(t, "render", "-o", "yaml")
	require.NoError(t, err)
	assert.Contains(t, yamlOut, "- config:")
	assert.Contains(t, yamlOut, "state: applied")
}

func TestRenderOtherNode(t *testing.T) {
	out, _, err := runCLI(t, "render", "--node", "node-b", "-o", "vppcli")
	require.NoError(t, err)
	assert.Contains(t, out, "# node node-b:")
	assert.Contains(t, out, "nat44 add address 192.168.16.2 twice-nat")
	assert.Contains(t, out, "set interface nat44 in tap-default-api-b1")
}
