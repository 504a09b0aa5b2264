package vppsock

import (
	"errors"
	"fmt"
	"io"
	"net"

	"go.fd.io/govpp/adapter"
)

// errNotConnected is returned by SendMsg (and by Release when it has bytes
// to write) outside a connection.
var errNotConnected = fmt.Errorf("vppsock: not connected: %w", net.ErrClosed)

// errMsgTooShort is returned by SendMsg for data shorter than a request
// header.
var errMsgTooShort = errors.New("vppsock: invalid message data, length must be at least 10 bytes")

// maxKeptBuf is the capacity over which a write buffer grown by a large
// message is let go rather than kept for the next one.
const maxKeptBuf = 1 << 20

// brokenError is what every write returns once the connection broke: it
// wraps io.ErrClosedPipe and the cause, so that errors.Is finds either.
type brokenError struct {
	op    string
	cause error
}

func (e *brokenError) Error() string {
	return "vppsock: connection broken (" + e.op + "): " + e.cause.Error()
}

func (e *brokenError) Unwrap() []error { return []error{io.ErrClosedPipe, e.cause} }

// SendMsg sends one request. data is the encoded message with its ID in
// data[0:2]; SendMsg frames a copy of it with the connection's client index
// and context in its request header (data[2:10]) and leaves data itself as
// it was, so the caller may reuse it at once.
//
// Without a Hold in force the frame is written at once, header and data in
// one write. Between Hold and Release it is appended to the held bytes and
// SendMsg returns; if the held bytes reach the hold limit they are written
// then, and holding goes on. SendMsg from any goroutine while held (govpp's
// health-check ping) is held too and goes out with the window.
//
// A write error is returned by the SendMsg that met it (wrapping
// io.ErrClosedPipe), and from then on the connection is broken: SendMsg
// and Release return that error at once, without writing, until Disconnect
// and Connect. The reader meeting the end of the connection breaks it too.
// Outside a connection SendMsg returns an error wrapping net.ErrClosed.
func (c *Client) SendMsg(context uint32, data []byte) error {
	if len(data) < reqHeaderLen {
		return errMsgTooShort
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.sess
	if s == nil {
		return errNotConnected
	}
	if s.broken != nil {
		return s.broken
	}
	c.stats.sent.Add(1)
	if c.holds > 0 {
		c.held = appendRequest(c.held, data, s.clientIndex, context)
		if len(c.held) < c.holdLimit {
			return nil
		}
		return c.writeHeldLocked(s)
	}
	c.scratch = appendRequest(c.scratch[:0], data, s.clientIndex, context)
	err := c.writeLocked(s, c.scratch, "write")
	if cap(c.scratch) > maxKeptBuf {
		c.scratch = nil
	}
	return err
}

// Hold starts (or nests) a window: until the matching Release, SendMsg
// appends to the held bytes instead of writing. Holds nest by count: only
// the Release that brings the count back to zero writes. Held requests are
// not sent, so nobody may wait for their replies before Release; keep the
// window short, too: a govpp health-check ping sent meanwhile waits in it.
func (c *Client) Hold() {
	c.mu.Lock()
	c.holds++
	c.mu.Unlock()
}

// Release ends one Hold. The last one writes the held bytes in as few
// writes as the socket takes and stops holding; it returns the write's
// error, or the broken connection's error (see SendMsg), in which case the
// held bytes are dropped. An inner Release writes nothing and returns nil
// (or the broken connection's error). A Release without a matching Hold
// does nothing and returns nil.
func (c *Client) Release() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.holds == 0 {
		return nil
	}
	c.holds--
	s := c.sess
	if s != nil && s.broken != nil {
		c.held = c.held[:0]
		return s.broken
	}
	if c.holds > 0 || len(c.held) == 0 {
		return nil
	}
	if s == nil { // not reached: Disconnect drops held bytes
		c.held = c.held[:0]
		return errNotConnected
	}
	return c.writeHeldLocked(s)
}

// writeHeldLocked writes the held bytes and empties the held buffer.
func (c *Client) writeHeldLocked(s *session) error {
	err := c.writeLocked(s, c.held, "write held")
	c.held = c.held[:0]
	if cap(c.held) > c.holdLimit+maxKeptBuf {
		c.held = nil
	}
	return err
}

// writeLocked writes b whole, looping on short writes; a failure breaks the
// session (and drops the held bytes). c.mu is held.
func (c *Client) writeLocked(s *session, b []byte, op string) error {
	for len(b) > 0 {
		n, err := s.conn.Write(b)
		c.stats.writes.Add(1)
		b = b[n:]
		if err == nil && n == 0 {
			err = io.ErrShortWrite
		}
		if err != nil {
			c.breakLocked(s, &brokenError{op: op, cause: err})
			return s.broken
		}
	}
	return nil
}

// breakLocked marks s broken with err unless it already is. c.mu is held.
func (c *Client) breakLocked(s *session, err error) {
	if s.broken != nil {
		return
	}
	s.broken = err
	if c.sess == s {
		c.held = c.held[:0]
	}
}

// window is what an adapter that writes windows offers (Client does).
type window interface {
	Hold()
	Release() error
}

// HoldOn and ReleaseOn hold and release a window on adapter a if a writes
// windows (a Client, or a Wrapper of one), and do nothing otherwise;
// Wrapper implements its Hold and Release with them.
func HoldOn(a adapter.VppAPI) {
	if w, ok := a.(window); ok {
		w.Hold()
	}
}

// ReleaseOn is HoldOn's Release: nil for an adapter without windows.
func ReleaseOn(a adapter.VppAPI) error {
	if w, ok := a.(window); ok {
		return w.Release()
	}
	return nil
}
