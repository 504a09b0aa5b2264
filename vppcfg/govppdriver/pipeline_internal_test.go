package govppdriver

import (
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"go.fd.io/govpp/core"
)

// A broken socket ends a pass's sends; an error of one message does not.
func TestConnectionBroken(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{core.ErrNotConnected, true},
		{fmt.Errorf("write: %w", syscall.EPIPE), true},
		{&net.OpError{Op: "write", Net: "unix", Err: syscall.ECONNRESET}, true},
		{io.EOF, true},
		{net.ErrClosed, true},
		{errors.New("unknown message: nat44_foo"), false},
		{fmt.Errorf("unable to encode message: %w", errors.New("field too long")), false},
	} {
		if got := connectionBroken(tc.err); got != tc.want {
			t.Errorf("connectionBroken(%v) = %t, want %t", tc.err, got, tc.want)
		}
	}
}
