package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"testing"
)

// TestMain lets tests run the real main (exit status, stderr) by executing
// the test binary itself with VPPSVC_RUN_MAIN=1 and the command's arguments.
func TestMain(m *testing.M) {
	if os.Getenv("VPPSVC_RUN_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runMain runs `vppsvc args...` in a child process and returns its stdout,
// stderr and exit status.
func runMain(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "VPPSVC_RUN_MAIN=1")
	cmd.Stdin = bytes.NewBufferString(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return out.String(), errOut.String(), 0
	case errors.As(err, &exit):
		return out.String(), errOut.String(), exit.ExitCode()
	}
	t.Fatalf("running %v: %v", args, err)
	return "", "", -1
}
