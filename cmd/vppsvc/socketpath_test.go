package main

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	logtest "github.com/sirupsen/logrus/hooks/test"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A --vpp-socket path is said to be what it is: a socket passes, a missing
// path "does not exist", anything else "not a socket" with what it is.
func TestCheckSocket(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "api.sock")
	ln, err := net.Listen("unix", sock)
	require.NoError(t, err)
	defer ln.Close()
	file := writeFile(t, "api.sock", "")
	for _, tc := range []struct {
		name, path string
		want       string // "" for nil
		notSocket  bool
	}{
		{"socket", sock, "", false},
		{"missing", filepath.Join(dir, "nothing.sock"), "--vpp-socket " + filepath.Join(dir, "nothing.sock") + ": does not exist (is VPP running with its api-socket there?)", false},
		{"regular file", file, "--vpp-socket " + file + ": not a socket (a regular file): give the api-socket of VPP's startup.conf (default installation: /run/vpp/api.sock)", true},
		{"directory", dir, "--vpp-socket " + dir + ": not a socket (a directory): give the api-socket of VPP's startup.conf (default installation: /run/vpp/api.sock)", true},
	} {
		err := checkSocket(tc.path)
		if tc.want == "" {
			assert.NoError(t, err, tc.name)
			continue
		}
		assert.EqualError(t, err, tc.want, tc.name)
		var notSocket *notSocketError
		assert.Equal(t, tc.notSocket, errors.As(err, &notSocket), tc.name)
		assert.Equal(t, !tc.notSocket, errors.Is(err, errNoSocket), tc.name)
	}
}

// While VPP's socket does not exist, run keeps waiting and says the path
// does not exist yet; once the path is a regular file, it stops at once
// instead of retrying it forever.
func TestSocketWaitStopsOnAFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "api.sock")
	log, hook := logtest.NewNullLogger()
	var fatal error
	a := newSocketWaitLogger(&flakyVPP{}, path, log)
	a.fatal = func(err error) { fatal = err }
	now := time.Unix(0, 0)
	a.now = func() time.Time { return now }

	assert.Error(t, a.Connect())
	assert.NoError(t, fatal, "a missing socket is waited for")
	last := hook.LastEntry()
	require.NotNil(t, last)
	assert.Equal(t, "waiting for VPP's API socket", last.Message)
	assert.EqualError(t, last.Data["error"].(error), path+" does not exist (yet)")

	require.NoError(t, os.WriteFile(path, []byte("not VPP"), 0o644))
	err := a.Connect()
	var notSocket *notSocketError
	require.ErrorAs(t, fatal, &notSocket)
	assert.Equal(t, err, fatal)
	assert.Equal(t, "VPP's API socket path is not a socket: stopping", hook.LastEntry().Message)
}

// `vppsvc run` refuses a regular file as --vpp-socket before it connects to
// anything, with exit status 2.
func TestRunRefusesAFileAsSocket(t *testing.T) {
	file := writeFile(t, "api.sock", "")
	stdout, stderr, code := runMain(t, "", "run", "--node", "node-a", "--vpp-socket", file, "--kubeconfig", "/nonexistent/kubeconfig")
	assert.Equal(t, exitUsage, code)
	assert.Empty(t, stdout)
	assert.Equal(t, "vppsvc: --vpp-socket "+file+": not a socket (a regular file): give the api-socket of VPP's startup.conf (default installation: /run/vpp/api.sock)\n", stderr)
}
