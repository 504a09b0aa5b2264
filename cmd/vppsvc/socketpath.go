package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// errNoSocket is a --vpp-socket path that does not exist (yet): VPP may
// still be starting, so run waits for it, while diff and render fail.
var errNoSocket = errors.New("does not exist")

// notSocketError is a --vpp-socket path that exists and is something else
// than a socket: no wait makes it one, so every command fails at once.
type notSocketError struct {
	path string
	what string // "a regular file", "a directory"…
}

func (e *notSocketError) Error() string {
	return fmt.Sprintf("--vpp-socket %s: not a socket (%s): give the api-socket of VPP's startup.conf (default installation: %s)", e.path, e.what, defaultVPPSocket)
}

// checkSocket says plainly what is wrong with a --vpp-socket path, before
// a connection attempt would report it as "connection refused": nil for a
// socket, an error wrapping errNoSocket for a missing path, a
// *notSocketError for anything else, or the error of stat.
func checkSocket(path string) error {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("--vpp-socket %s: %w (is VPP running with its api-socket there?)", path, errNoSocket)
	case err != nil:
		return fmt.Errorf("--vpp-socket: %w", err)
	case st.Mode().Type() == fs.ModeSocket:
		return nil
	}
	return &notSocketError{path: path, what: fileKind(st.Mode())}
}

// fileKind names what a path is, for notSocketError.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m.Type()&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m.Type()&fs.ModeDevice != 0:
		return "a device"
	}
	return "file mode " + m.String()
}
