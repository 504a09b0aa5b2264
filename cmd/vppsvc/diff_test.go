package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc/dataplane"
	"github.com/vppsvc/vppsvc/fakevpp"
	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
	"github.com/vppsvc/vppsvc/vppcfg/engine"
	"github.com/vppsvc/vppsvc/vppcfg/govppdriver"
	"github.com/vppsvc/vppsvc/vppcfg/vppcfgtest"
)

// liveNode is a fake VPP programmed by an agent for the sample cluster on
// node-a, as a node's VPP is after `vppsvc run`; the agent is gone, VPP
// keeps its configuration. desired are the items that agent programmed.
func liveNode(t *testing.T) (*fakevpp.VPP, []engine.OwnedItem) {
	t.Helper()
	sim, err := simulate(context.Background(), &clusterFlags{}, nil, quietLogger())
	require.NoError(t, err)
	desired := sim.agent.Reconciler.DesiredOwned()
	sim.close()
	return sim.node.(*dataplane.Fake).VPP, desired
}

// readMessage tells a VPP request that changes VPP from one that reads it.
var readMessage = regexp.MustCompile(`(_dump$|(^|_)show_|(^|_)get_|_get$|^want_interface_events$|^control_ping$|^feature_is_enabled$)`)

// diffLive runs the diff of the sample against vpp and checks that it sent
// VPP nothing but reads.
func diffLive(t *testing.T, vpp *fakevpp.VPP, output string) (string, bool) {
	t.Helper()
	vpp.ResetCalls()
	var out bytes.Buffer
	drift, err := runDiff(context.Background(), &diffFlags{output: output, timeout: 5 * time.Second}, vpp.NewAdapter(), nil, &out, quietLogger())
	require.NoError(t, err)
	calls := vpp.Calls()
	require.NotEmpty(t, calls, "the diff dumps the live VPP")
	for msg := range calls {
		assert.Regexp(t, readMessage, msg, "diff sent a request that changes VPP")
	}
	return out.String(), drift
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(want), got, "go test ./cmd/vppsvc -run %s -update rewrites %s", t.Name(), path)
}

func TestDiffInSync(t *testing.T) {
	vpp, desired := liveNode(t)
	out, drift := diffLive(t, vpp, "text")
	assert.False(t, drift, out)
	checkGolden(t, "diff-in-sync.golden", out)
	assert.Contains(t, out, "in sync")
	assert.Contains(t, out, fmt.Sprintf("node-a: %d items desired", len(desired)))
}

// TestDiffFindsDrift injects drift straight into VPP through a second API
// client: an LB mapping deleted, one that lost a local, and a tagged
// mapping of a service that does not exist.
func TestDiffFindsDrift(t *testing.T) {
	vpp, desired := liveNode(t)
	lbs := map[string]*vppcfg.NAT44LBMapping{}
	for _, d := range desired {
		if m, ok := d.Item.(*vppcfg.NAT44LBMapping); ok {
			lbs[m.Label+" "+m.External.String()] = m
		}
	}
	web, nodePort := lbs["default/web 10.96.0.10:80"], lbs["default/web-nodeport 10.96.0.11:80"]
	require.NotNil(t, web)
	require.NotNil(t, nodePort)
	require.Len(t, web.Locals, 3)
	ghost := *web
	oneLess := *web
	oneLess.Locals = slices.Clone(web.Locals[1:])
	ghost.External, ghost.Label = netip.MustParseAddrPort("10.96.9.9:80"), "default/ghost"

	ctx := context.Background()
	drv, err := govppdriver.Connect(vpp.NewAdapter(), govppdriver.Options{Logger: quietLogger()})
	require.NoError(t, err)
	defer drv.Close()
	require.Eventually(t, func() bool { _, err := drv.Dump(ctx); return err == nil }, wait, tick)
	for _, res := range drv.Apply(ctx, []driverapi.Op{
		{Type: driverapi.OpDelete, Key: nodePort.Key(), Item: nodePort},
		{Type: driverapi.OpUpdate, Key: web.Key(), Item: &oneLess, Old: web}, // VPP's del-local of the first local
		{Type: driverapi.OpCreate, Key: ghost.Key(), Item: &ghost, Tag: vppcfgtest.Tag("nat44", ghost.Label)},
	}) {
		require.NoError(t, res.Err)
	}

	out, drift := diffLive(t, vpp, "text")
	assert.True(t, drift)
	checkGolden(t, "diff-drift.golden", out)
	assert.Contains(t, out, "drift: 1 missing, 1 extra, 1 changed")

	js, drift := diffLive(t, vpp, "json")
	assert.True(t, drift)
	var got diffJSON
	require.NoError(t, json.Unmarshal([]byte(js), &got))
	keys := func(items []diffItemJSON) (out []string) {
		for _, it := range items {
			out = append(out, it.Key)
		}
		return out
	}
	assert.Equal(t, []string{nodePort.Key().String()}, keys(got.Missing))
	assert.Equal(t, []string{ghost.Key().String()}, keys(got.Extra))
	require.Len(t, got.Changed, 1)
	assert.Equal(t, web.Key().String(), got.Changed[0].Key)
	assert.Equal(t, []diffFieldJSON{{Field: "Locals", Desired: "[" + web.Locals[0].String() + "]", Observed: "[]"}}, got.Changed[0].Fields)
	assert.Equal(t, "nat44", got.Changed[0].Owner)
	assert.True(t, slices.ContainsFunc(got.Extra, func(e diffItemJSON) bool { return e.Owner == "nat44" }))
}

func TestDiffErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "api.sock")
	_, stderr, code := runMain(t, "", "diff", "--vpp-socket", missing)
	assert.Equal(t, diffError, code, stderr)
	assert.Contains(t, stderr, "--vpp-socket")
	assert.Equal(t, "vppsvc: --vpp-socket "+missing+": does not exist (is VPP running with its api-socket there?)\n", stderr)

	_, stderr, code = runMain(t, "", "diff")
	assert.Equal(t, diffError, code)
	assert.Contains(t, stderr, "--vpp-socket is required")

	for _, tc := range []struct {
		drift bool
		err   error
		want  int
	}{{false, nil, 0}, {true, nil, 1}, {false, os.ErrNotExist, 2}, {true, os.ErrNotExist, 2}} {
		assert.Equal(t, tc.want, diffStatus(tc.drift, tc.err))
	}
}
