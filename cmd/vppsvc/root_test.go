package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runCLI runs the command tree in-process and returns stdout, stderr and the error.
func runCLI(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := newRootCommand(&out, &errOut)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), errOut.String(), err
}

func TestVersion(t *testing.T) {
	out, _, err := runCLI(t, "version")
	require.NoError(t, err)
	assert.Regexp(t, `^vppsvc \S+ \(VPP API 25\.10, govpp v0\.13\.0\)\n$`, out)
}

func TestUnknownFlagAndBadLogLevel(t *testing.T) {
	_, _, err := runCLI(t, "version", "--bogus")
	assert.ErrorContains(t, err, "unknown flag: --bogus")
	_, _, err = runCLI(t, "version", "--log-level", "loud")
	assert.ErrorContains(t, err, "--log-level")
	_, _, err = runCLI(t, "version", "--log-format", "xml")
	assert.ErrorContains(t, err, "--log-format")
}
