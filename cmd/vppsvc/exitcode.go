package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// Exit statuses of every command (docs/cli.md, "Exit status"): a script
// tells a mistake in its own call (2) from a failure of the work (1).
// diff keeps diff(1)'s meaning: 1 is drift, and any error is 2.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// usageError is a mistake in how a command was called: an unknown flag or
// command, a missing or bad flag value, flags that exclude each other.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usagef makes a usageError.
func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// asUsage marks err, when set, as a usage error.
func asUsage(err error) error {
	if err == nil {
		return nil
	}
	return usageError{err}
}

// statusError ends the process with code; Err, when set, is printed as the
// error line (diff's drift has none: its report is the output).
type statusError struct {
	code int
	err  error
}

func (e statusError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}
func (e statusError) Unwrap() error { return e.err }

// exitCode is the process's status for what the command tree returned.
func exitCode(err error) int {
	var st statusError
	var usage usageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &st):
		return st.code
	case errors.As(err, &usage), isCobraUsage(err):
		return exitUsage
	}
	return exitFailure
}

// errorLine is what main prints for err ("" when nothing is to be printed).
func errorLine(err error) string {
	var st statusError
	if err == nil || (errors.As(err, &st) && st.err == nil) {
		return ""
	}
	return err.Error()
}

// isCobraUsage recognises the one usage error cobra returns before any hook
// of ours runs: an unknown subcommand of the root (cobra has no error type
// for it).
func isCobraUsage(err error) bool {
	return strings.HasPrefix(err.Error(), "unknown command ")
}

// markUsageErrors makes every command of the tree return usageError for
// bad flags (unknown, unparsable values) and bad positional arguments, so
// that each command exits 2 for them without checking itself.
func markUsageErrors(root *cobra.Command) {
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if args := c.Args; args != nil {
			c.Args = func(cmd *cobra.Command, a []string) error { return asUsage(args(cmd, a)) }
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
