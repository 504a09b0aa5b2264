package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/sirupsen/logrus/hooks/test"
	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc/agent/inspect"
	"github.com/vppsvc/vppsvc/cmd/vppsvc/internal/simnode"
	"github.com/vppsvc/vppsvc/fakevpp"
)

func TestListenInspector(t *testing.T) {
	dir := t.TempDir()
	notSocket := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(notSocket, nil, 0o600))
	stale := filepath.Join(dir, "stale.sock")
	ln, err := net.Listen("unix", stale)
	require.NoError(t, err)
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close() // a crashed agent leaves its socket file behind
	busy := filepath.Join(dir, "busy.sock")
	other, err := net.Listen("unix", busy)
	require.NoError(t, err)
	defer other.Close()

	for _, tc := range []struct {
		addr, err string
	}{
		{addr: filepath.Join(dir, "sub", "inspect.sock")},
		{addr: stale},
		{addr: "127.0.0.1:0"},
		{addr: "localhost:0"},
		{addr: "0.0.0.0:9102", err: "serves only on loopback"},
		{addr: "192.168.16.1:9102", err: "serves only on loopback"},
		{addr: ":9102", err: "serves only on loopback"},
		{addr: notSocket, err: "is not a socket"},
		{addr: busy, err: "served by another process"},
	} {
		t.Run(tc.addr, func(t *testing.T) {
			ln, err := listenInspector(tc.addr)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			defer ln.Close()
			if ln.Addr().Network() == "unix" {
				fi, err := os.Stat(tc.addr)
				require.NoError(t, err)
				assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "the node's state is for root")
			}
		})
	}
	ln, err = listenInspector("")
	assert.NoError(t, err)
	assert.Nil(t, ln, "an empty address disables the inspector")
}

// inspectedNode runs the agent of node-a for the sample cluster with the
// inspector on a unix socket. The host has created uplink0 and host0, but
// no pod interface yet, and VPP refuses every NAT44 LB mapping.
func inspectedNode(t *testing.T) (socket string, vpp *fakevpp.VPP) {
	t.Helper()
	client, watches := sampleClientset(t)
	c, err := loadCluster("", nil)
	require.NoError(t, err)
	plan, err := simnode.Build(c.Nodes, nil, "node-a")
	require.NoError(t, err)
	vpp = fakevpp.New(fakevpp.WithSeed(1))
	addFakeHost(vpp, plan)
	vpp.FailMessage("nat44_add_del_lb_static_mapping", -1)

	socket = filepath.Join(t.TempDir(), "inspect.sock")
	ln, err := listenInspector(socket)
	require.NoError(t, err)
	httpLn, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), inspectListenerKey{}, ln))
	done := make(chan error, 1)
	cfg := nodeConfig{Node: "node-a", FrontendInterfaces: []string{"uplink0", "host0"}, LocalPods: true,
		HealthzTimeout: time.Minute, RetryMin: time.Millisecond, RetryMax: 20 * time.Millisecond, SyncPoll: 5 * time.Millisecond}
	go func() {
		done <- runNode(ctx, cfg, nodeDeps{Client: client, VPP: vpp, HTTP: httpLn, Log: quietLogger()})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(wait):
			t.Error("agent did not stop")
		}
		ln.Close()
	})
	for range 4 {
		select {
		case <-watches:
		case err := <-done:
			t.Fatalf("agent stopped: %v", err)
		case <-time.After(wait):
			t.Fatal("informer watches did not start")
		}
	}
	return socket, vpp
}

func TestRunServesStatus(t *testing.T) {
	socket, vpp := inspectedNode(t)
	ctx := context.Background()
	status := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := runStatus(ctx, &statusFlags{socket: socket, output: "table"}, args, &out)
		return out.String(), err
	}
	var web inspect.ServiceState
	require.Eventually(t, func() bool {
		body, err := inspectorGet(ctx, socket, "/v1/services/default/web")
		if err != nil || json.Unmarshal(body, &web) != nil {
			return false
		}
		items := web.Renderers
		return len(items) > 0 && len(items[0].Items) > 0 && items[0].Items[0].NextRetry != nil && len(web.BlockedBy) > 0
	}, wait, tick, "web's LB mapping fails and its local backend waits for its tap")

	out, err := status("default/web")
	require.NoError(t, err)
	t.Log("\n" + out)
	assert.Regexp(t, `default/web +10.96.0.10:80/TCP +ClusterIP +nat44: 1 applied, 1 failed +1\) 10.1.1.2:8080`, out, "the ClusterIP's drop route and the failing mapping")
	assert.Contains(t, out, "10.1.1.2:8080 (active, local on tap-default-web-a1)")
	assert.Regexp(t, `nat44-lb-mapping/10.96.0.10:80/tcp +failed: .*VPPApiError.* \(retval -1\).*next retry in `, out)
	assert.Regexp(t, `default/web +interface tap-default-web-a1 +pending: 69 node items for a local backend wait for it \(acl-binding 65, interface-feature 2, nat44-interface 2\)`, out)
	assert.NotContains(t, out, "default/web-lb", "filtered to one service")

	all, err := status()
	require.NoError(t, err)
	for _, svc := range []string{"default/web ", "default/web-lb ", "kube-system/kube-dns "} {
		assert.Contains(t, all, svc)
	}
	assert.Contains(t, all, "(node)")
	assert.NotContains(t, all, "default/headless", "not rendered")

	_, err = status("default/nope")
	assert.ErrorContains(t, err, "default/nope is not rendered on this node")

	// /v1/items filters by renderer and status.
	body, err := inspectorGet(ctx, socket, "/v1/items?renderer=nat44&status=failed")
	require.NoError(t, err)
	var failed []inspect.ListedItem
	require.NoError(t, json.Unmarshal(body, &failed))
	require.NotEmpty(t, failed)
	for _, it := range failed {
		assert.Equal(t, "nat44", it.Renderer)
		assert.Equal(t, "failed", it.Status)
		assert.True(t, strings.HasPrefix(it.Key, "nat44-lb-mapping/"), it.Key)
	}
	_, err = inspectorGet(ctx, socket, "/v1/items?status=broken")
	assert.ErrorContains(t, err, "status: want applied, pending or failed")

	// Once VPP takes the mappings and the CNI creates the tap, all is applied.
	vpp.ClearFaults()
	vpp.AddInterface("tap-default-web-a1")
	vpp.SetUnnumbered("tap-default-web-a1", simnode.HostInterface)
	require.Eventually(t, func() bool {
		out, err := status("default/web")
		return err == nil && strings.Contains(out, "nat44: 2 applied") && !strings.Contains(out, "not applied")
	}, wait, tick)

	js := &bytes.Buffer{}
	require.NoError(t, runStatus(ctx, &statusFlags{socket: socket, output: "json"}, []string{"web"}, js))
	assert.Contains(t, js.String(), `"namespace": "default"`, "a name alone is in the default namespace")
}

func TestStatusWithoutInspector(t *testing.T) {
	socket := filepath.Join(t.TempDir(), "none.sock")
	stdout, stderr, code := runMain(t, "", "status", "--inspect-socket", socket)
	assert.Empty(t, stdout)
	assert.NotEqual(t, 0, code)
	assert.Contains(t, stderr, "no state inspector at "+socket)
	assert.Contains(t, stderr, "vppsvc run")
	assert.Contains(t, stderr, "--inspect-socket")

	_, stderr, code = runMain(t, "", "service", "list", "--inspect-socket", socket)
	assert.NotEqual(t, 0, code, "the alias behaves the same")
	assert.Contains(t, stderr, "no state inspector")

	_, stderr, code = runMain(t, "", "status", "-o", "yaml")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, stderr, "-o: want table or json")
}

// TestStatusGolden pins the table of a fixed snapshot (testdata/status-snapshot.json).
func TestStatusGolden(t *testing.T) {
	data, err := os.ReadFile("testdata/status-snapshot.json")
	require.NoError(t, err)
	var snap inspect.Snapshot
	require.NoError(t, json.Unmarshal(data, &snap))
	var out bytes.Buffer
	writeStatus(&out, &snap, true)
	golden := "testdata/status.golden"
	if *update {
		require.NoError(t, os.WriteFile(golden, out.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), out.String(), "go test ./cmd/vppsvc -run TestStatusGolden -update rewrites it")
}

// TestWithInspector: an address given on the command line is opened (and
// refused) before the agent starts; the default one is left to
// serveInspector, which runs without an inspector when it cannot listen.
func TestWithInspector(t *testing.T) {
	var got any
	newCmd := func() *cobra.Command {
		cmd := &cobra.Command{Use: "run", RunE: func(cmd *cobra.Command, _ []string) error {
			got = cmd.Context().Value(inspectListenerKey{})
			return nil
		}}
		withInspector(cmd)
		cmd.SetArgs(nil)
		return cmd
	}
	cmd := newCmd()
	cmd.SetArgs([]string{"--inspect-socket", "0.0.0.0:9102"})
	assert.ErrorContains(t, cmd.ExecuteContext(context.Background()), "--inspect-socket: 0.0.0.0:9102: the inspector serves only on loopback")

	cmd = newCmd()
	require.NoError(t, cmd.ExecuteContext(context.Background()))
	assert.Equal(t, defaultInspectSocket, got, "the default is opened by serveInspector")

	cmd = newCmd()
	cmd.SetArgs([]string{"--inspect-socket", "127.0.0.1:0"})
	require.NoError(t, cmd.ExecuteContext(context.Background()))
	assert.Implements(t, (*net.Listener)(nil), got)

	// A default address that cannot be created: a warning, no inspector.
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	log, hook := test.NewNullLogger()
	stop := serveInspector(context.WithValue(context.Background(), inspectListenerKey{}, filepath.Join(file, "inspect.sock")), nil, log)
	stop()
	require.Len(t, hook.AllEntries(), 1)
	assert.Equal(t, logrus.WarnLevel, hook.LastEntry().Level)
	assert.Contains(t, hook.LastEntry().Message, "state inspector disabled")
	assert.Equal(t, filepath.Join(file, "inspect.sock"), hook.LastEntry().Data["addr"])
}
