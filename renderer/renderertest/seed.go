package renderertest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// SeedEnv names the environment variable that replays one sequence: with
// VPPSVC_SEED=<n>, each part of Run plays the sequence of seed n only (any
// n, also beyond WithSequences' count), as a failure's replay line says.
// It is the variable the property tests use (make test-property).
const SeedEnv = "VPPSVC_SEED"

// seeds are the seeds one part of the suite plays: 0 to sequences-1, or the
// one SeedEnv names. A malformed value fails the test rather than being
// ignored, which would play the whole suite instead of the seed asked for.
func (s *suite) seeds(t *testing.T) []uint64 {
	v, ok := os.LookupEnv(SeedEnv)
	if !ok || v == "" {
		out := make([]uint64, s.sequences)
		for i := range out {
			out[i] = uint64(i)
		}
		return out
	}
	seed, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: want a sequence number (a non-negative integer)", SeedEnv, v)
	}
	return []uint64{seed}
}

// replayLine is the command that replays seed in test t: the test's name as
// an anchored -run pattern and the package as a path from the module root
// (the directory go test runs the package's tests in).
func replayLine(t *testing.T, seed uint64) string {
	parts := strings.Split(t.Name(), "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return fmt.Sprintf("replay (from the module root): %s=%d go test -run '%s' %s", SeedEnv, seed, strings.Join(parts, "/"), packagePath())
}

// packagePath is the current directory relative to the module root
// ("./renderer/nat44/"), or "." when the root cannot be found.
func packagePath() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			rel, err := filepath.Rel(dir, wd)
			if err != nil || rel == "." {
				return "."
			}
			return "./" + filepath.ToSlash(rel) + "/"
		}
		if filepath.Dir(dir) == dir {
			return "."
		}
	}
}

// fatalSeed fails t for the sequence of seed, naming the seed and the
// command that replays it.
func fatalSeed(t *testing.T, seed uint64, format string, args ...any) {
	t.Helper()
	t.Fatalf("seed %d: %s\n%s", seed, fmt.Sprintf(format, args...), replayLine(t, seed))
}
