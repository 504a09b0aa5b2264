package dataplane

import (
	"errors"
	"os"
	"testing"

	"github.com/vppsvc/vppsvc/realvpp"
)

// SocketEnv names the environment variable that points the tests at a real
// VPP 25.10's API socket. Unset, every test runs on fakevpp.
const SocketEnv = "VPPSVC_TEST_VPP_SOCKET"

// RestartEnv names the environment variable holding a shell command that
// restarts the VPP of SocketEnv (e.g. "systemctl restart vpp"). Tests of
// VPP restarts skip on a real VPP without it.
const RestartEnv = "VPPSVC_TEST_VPP_RESTART"

// ForTest returns the data plane of a test: a real VPP when SocketEnv is
// set (reset now and when the test ends), otherwise a fake VPP seeded with
// seed. Tests on one real VPP must not run in parallel (make test-realvpp
// runs packages one at a time).
func ForTest(tb testing.TB, seed int64) Node {
	tb.Helper()
	socket := os.Getenv(SocketEnv)
	if socket == "" {
		return NewFake(seed)
	}
	n, err := realvpp.Open(socket, realvpp.Options{RestartCommand: os.Getenv(RestartEnv)})
	if err != nil {
		tb.Fatalf("%s=%s: %v", SocketEnv, socket, err)
	}
	tb.Cleanup(func() {
		if err := n.Close(); err != nil {
			tb.Errorf("resetting the real VPP: %v", err)
		}
	})
	return Real{n}
}

// FakeOnly skips the test on a real VPP and returns its fake: for tests of
// what only an emulation can do (fault injection, a restart on demand,
// exact endpoint sets).
func FakeOnly(tb testing.TB, n Node, why string) *Fake {
	tb.Helper()
	f, ok := n.(*Fake)
	if !ok {
		tb.Skipf("fakevpp only: %s", why)
	}
	return f
}

// Restart restarts n's VPP: fakevpp's Restart, or the restart command of a
// real VPP; a test on a real VPP without one is skipped.
func Restart(tb testing.TB, n Node) {
	tb.Helper()
	switch n := n.(type) {
	case *Fake:
		n.VPP.Restart()
	case Real:
		if err := n.Node.Restart(); errors.Is(err, realvpp.ErrNoRestart) {
			tb.Skipf("restarting a real VPP needs %s", RestartEnv)
		} else if err != nil {
			tb.Fatal(err)
		}
	}
}

// OnRealVPP tells whether the tests run against a real VPP.
func OnRealVPP() bool { return os.Getenv(SocketEnv) != "" }
