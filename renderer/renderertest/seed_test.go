package renderertest_test

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc"
	"github.com/vppsvc/vppsvc/examples/frontendacl"
	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer/renderertest"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// leaky is the example renderer with a bug: it forgets to delete the ACL
// of a service that has a node port.
type leaky struct{ *frontendacl.Renderer }

func (l leaky) DeleteService(svc *model.ContivService) error {
	if svc.HasNodePort() {
		return nil
	}
	return l.Renderer.DeleteService(svc)
}

// brokenEnv makes TestLeakyRendererFails run: it exists to fail, for
// TestFailureReplaysItsSeed.
const brokenEnv = "RENDERERTEST_RUN_LEAKY"

func TestLeakyRendererFails(t *testing.T) {
	if os.Getenv(brokenEnv) != "1" {
		t.Skip("fails on purpose; run by TestFailureReplaysItsSeed")
	}
	renderertest.Run(t, func(c vppcfg.Client) (vppsvc.ServiceRendererAPI, error) {
		r, err := frontendacl.New(c, nil)
		return leaky{r}, err
	}, renderertest.WithOwner(frontendacl.Name))
}

// runLeaky runs TestLeakyRendererFails (or the -run pattern given) in a
// child process of this test binary, with VPPSVC_SEED set when seed is not
// empty, and returns its output and whether it passed.
func runLeaky(t *testing.T, pattern, seed string) (string, bool) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run", pattern, "-test.short", "-test.count=1")
	cmd.Env = append(os.Environ(), brokenEnv+"=1", renderertest.SeedEnv+"="+seed)
	out, err := cmd.CombinedOutput()
	if _, failed := err.(*exec.ExitError); err != nil && !failed {
		t.Fatalf("running the test binary: %v", err)
	}
	return string(out), err == nil
}

var replayRE = regexp.MustCompile(`(?m)^\s*replay \(from the module root\): VPPSVC_SEED=(\d+) go test -run '([^']+)' (\S+)$`)

// A failing sequence names its seed and a command that replays it; that
// command (its VPPSVC_SEED and -run pattern) fails again with the same seed
// and nothing else, and another seed of the same test passes.
func TestFailureReplaysItsSeed(t *testing.T) {
	if os.Getenv(brokenEnv) == "1" {
		t.Skip("the child process runs only the leaky renderer")
	}
	out, ok := runLeaky(t, "^TestLeakyRendererFails$", "")
	require.False(t, ok, "the leaky renderer must fail the suite:\n%s", out)
	m := replayRE.FindStringSubmatch(out)
	require.NotNil(t, m, "no replay line in:\n%s", out)
	seed, pattern, pkg := m[1], m[2], m[3]
	t.Logf("the leaky renderer fails at seed %s: %s", seed, m[0])
	assert.Equal(t, "./renderer/renderertest/", pkg)
	assert.Equal(t, "^TestLeakyRendererFails$/^delete_removes_everything$", pattern)
	assert.Contains(t, out, "seed "+seed+": deleting every service left more")

	again, ok := runLeaky(t, pattern, seed)
	require.False(t, ok, "the replay must fail:\n%s", again)
	assert.Contains(t, again, "seed "+seed+": deleting every service left more")
	assert.NotContains(t, again, "--- FAIL: TestLeakyRendererFails/resync_is_idempotent", "only the -run subtest runs")
	assert.Equal(t, 1, strings.Count(again, "replay (from the module root): "), "one seed is played:\n%s", again)

	if seed != "0" {
		passing, ok := runLeaky(t, pattern, "0")
		assert.True(t, ok, "seed 0 passed in the full run, so its replay passes:\n%s", passing)
	}
}
