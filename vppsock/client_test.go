package vppsock

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"go.fd.io/govpp/adapter"

	"github.com/vppsvc/vppsvc/internal/leakcheck"
)

// The handshake registers the client by name and takes the message table
// and the client index of sockclnt_create_reply.
func TestConnectHandshakeAndGetMsgID(t *testing.T) {
	path := sockPath(t)
	f := newFakeVPP(t, path, 200)
	c := New(path)
	c.SetClientName("vppsock-test")
	if _, err := c.GetMsgID(testMsg, testMsgCRC); err == nil {
		t.Fatal("GetMsgID before Connect succeeded")
	}
	if err := c.Connect(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Disconnect() }()
	if err := c.Connect(); err == nil {
		t.Error("a second Connect succeeded")
	}

	f.set(func(f *fakeVPP) {
		if len(f.createNames) != 1 || f.createNames[0] != "vppsock-test" {
			t.Errorf("sockclnt_create names %q, want [vppsock-test]", f.createNames)
		}
	})
	for key, want := range f.ids {
		name, crc := key[:len(key)-9], key[len(key)-8:]
		if id, err := c.GetMsgID(name, crc); err != nil || id != want {
			t.Errorf("GetMsgID(%s, %s) = %d, %v; want %d", name, crc, id, err, want)
		}
	}
	_, err := c.GetMsgID(testMsg, "00000000")
	var unknown *adapter.UnknownMsgError
	if !errors.As(err, &unknown) || unknown.MsgName != testMsg || unknown.MsgCrc != "00000000" {
		t.Errorf("GetMsgID of an unknown CRC = %v, want *adapter.UnknownMsgError", err)
	}
	if s := c.session(); s.clientIndex != f.clientIndex || !s.canDelete || s.deleteID != 201 || s.deleteReplyID != 202 {
		t.Errorf("session: client index %#x, delete %v %d/%d", s.clientIndex, s.canDelete, s.deleteID, s.deleteReplyID)
	}
}

func TestConnectFailures(t *testing.T) {
	before := leakcheck.Goroutines()
	path := sockPath(t)
	if err := New(path).Connect(); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Connect without a socket file = %v, want ErrNotExist", err)
	}

	// A VPP that never answers sockclnt_create: Connect gives up after the
	// connect timeout and leaves nothing running.
	f := newFakeVPP(t, path, 100)
	f.set(func(f *fakeVPP) { f.noCreate = true })
	c := New(path)
	c.SetConnectTimeout(100 * time.Millisecond)
	t0 := time.Now()
	err := c.Connect()
	var nerr net.Error
	if !errors.As(err, &nerr) || !nerr.Timeout() {
		t.Errorf("Connect to a silent VPP = %v, want a timeout", err)
	}
	if d := time.Since(t0); d < 100*time.Millisecond || d > waitTimeout {
		t.Errorf("Connect to a silent VPP took %v", d)
	}
	if c.session() != nil {
		t.Error("a failed Connect left a session")
	}
	f.stop()
	if left := leakcheck.WaitGoroutinesGone(before, waitTimeout); left != "" {
		t.Errorf("goroutines left:\n%s", left)
	}
}

func TestWaitReady(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/sub/api.sock"
	c := New(path)

	c.SetReadyTimeout(50 * time.Millisecond)
	if err := c.WaitReady(); err == nil {
		t.Error("WaitReady without the socket file returned nil")
	}

	// The socket appears (its directory too) while WaitReady waits.
	c.SetReadyTimeout(waitTimeout)
	done := make(chan error, 1)
	go func() { done <- c.WaitReady() }()
	if err := os.Mkdir(dir+"/sub", 0o755); err != nil {
		t.Fatal(err)
	}
	newFakeVPP(t, path, 100)
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("WaitReady = %v", err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("WaitReady did not return")
	}
	if err := c.WaitReady(); err != nil {
		t.Errorf("WaitReady with the socket there = %v", err)
	}
}

// Without Hold every SendMsg is one write of header and data: the server
// reads each message whole, before the next SendMsg, and replies.
func TestSendWithoutHoldWritesEachAtOnce(t *testing.T) {
	path := sockPath(t)
	f := newFakeVPP(t, path, 100)
	c, rec := connectTo(t, path)
	w0 := c.Stats().Writes
	for i := range 10 {
		data := testRequest(t, c, 20+i, byte(i))
		if err := c.SendMsg(uint32(1000+i), data); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(data[2:10], make([]byte, 8)) {
			t.Fatal("SendMsg modified the caller's data")
		}
		f.waitRequests(i + 1)
		f.set(func(f *fakeVPP) {
			if got := f.reads[len(f.reads)-1]; got != 16+len(data) {
				t.Errorf("message %d: the server read %d bytes, want the whole frame (%d)", i, got, 16+len(data))
			}
			got := f.requests[i]
			if binary.BigEndian.Uint32(got[2:6]) != f.clientIndex || binary.BigEndian.Uint32(got[6:10]) != uint32(1000+i) ||
				!bytes.Equal(got[10:], data[10:]) {
				t.Errorf("message %d: the server read % x", i, got)
			}
		})
	}
	if w := c.Stats().Writes - w0; w != 10 {
		t.Errorf("%d writes for 10 messages, want 10", w)
	}
	msgs := rec.wait(10)
	for i, m := range msgs {
		if m.ctx != uint32(1000+i) || m.id != f.base+8 {
			t.Errorf("reply %d: id %d context %d", i, m.id, m.ctx)
		}
	}
	if err := c.SendMsg(1, make([]byte, 9)); err == nil {
		t.Error("SendMsg of 9 bytes succeeded")
	}
}

// A message over the reader's 64 KiB goes out whole and its reply of the
// same size comes back whole, unheld and held.
func TestLargeMessageBothWays(t *testing.T) {
	path := sockPath(t)
	f := newFakeVPP(t, path, 100)
	f.set(func(f *fakeVPP) { f.echo = true })
	c, rec := connectTo(t, path)
	big := testRequest(t, c, 200<<10, 1)
	if err := c.SendMsg(7, big); err != nil {
		t.Fatal(err)
	}
	c.Hold()
	small := testRequest(t, c, 30, 2)
	for i, d := range [][]byte{small, big, small} {
		if err := c.SendMsg(uint32(8+i), d); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Release(); err != nil {
		t.Fatal(err)
	}
	msgs := rec.wait(4)
	for i, want := range [][]byte{big, small, big, small} {
		if m := msgs[i]; m.ctx != uint32(7+i) || !bytes.Equal(m.data[6:], want[10:]) {
			t.Errorf("reply %d: context %d, %d bytes of payload, want %d", i, m.ctx, len(m.data)-6, len(want)-10)
		}
	}
	f.set(func(f *fakeVPP) {
		for i, want := range [][]byte{big, small, big, small} {
			if !bytes.Equal(f.requests[i][10:], want[10:]) {
				t.Errorf("request %d differs", i)
			}
		}
	})
}

// Replies the server writes together are handed to the callback in order
// out of few reads; a reply split across the server's writes is put
// together.
func TestRepliesManyPerReadAndSplit(t *testing.T) {
	path := sockPath(t)
	f := newFakeVPP(t, path, 100)
	c, rec := connectTo(t, path)
	r0 := c.Stats().Reads
	var all []byte
	for i := range 200 {
		all = appendTestFrame(all, []byte{0, byte(i), 0, 0, 0, byte(i), 9, 9})
	}
	f.writeRaw(all)
	msgs := rec.wait(200)
	if r := c.Stats().Reads - r0; r >= 200 {
		t.Errorf("%d reads for 200 replies written at once", r)
	}
	// One reply in three writes: half its header, the rest of the header
	// and some data, the rest.
	one := appendTestFrame(nil, []byte{0, 1, 0, 0, 0, 77, 1, 2, 3, 4, 5})
	for _, part := range [][]byte{one[:8], one[8:20], one[20:]} {
		f.writeRaw(part)
	}
	msgs = rec.wait(201)
	for i, m := range msgs[:200] {
		if m.id != uint16(i) || m.ctx != uint32(i) || len(m.data) != 8 {
			t.Fatalf("reply %d: %+v", i, m)
		}
	}
	if m := msgs[200]; m.id != 1 || m.ctx != 77 || !bytes.Equal(m.data[6:], []byte{1, 2, 3, 4, 5}) {
		t.Errorf("split reply: %+v", m)
	}
}

// VPP closing the connection ends the reader and breaks the connection:
// SendMsg and Release fail at once until Disconnect and Connect.
func TestServerClosesConnection(t *testing.T) {
	path := sockPath(t)
	f := newFakeVPP(t, path, 100)
	c, _ := connectTo(t, path)
	data := testRequest(t, c, 10, 0)
	c.Hold()
	if err := c.SendMsg(1, data); err != nil {
		t.Fatal(err)
	}
	s := c.session()
	f.closeConns()
	waitDone(t, s.done, "the reader to end")

	w0 := c.Stats().Writes
	isClosed := func(err error) bool { return errors.Is(err, net.ErrClosed) || errors.Is(err, io.ErrClosedPipe) }
	if err := c.SendMsg(2, data); !isClosed(err) {
		t.Errorf("held SendMsg after the close = %v", err)
	}
	if err := c.Release(); !isClosed(err) {
		t.Errorf("Release after the close = %v", err)
	}
	if err := c.SendMsg(3, data); !isClosed(err) || !errors.Is(err, io.EOF) {
		t.Errorf("SendMsg after the close = %v, want a closed-pipe error with its cause (EOF)", err)
	}
	if w := c.Stats().Writes - w0; w != 0 {
		t.Errorf("%d writes on a broken connection", w)
	}
	if err := c.Disconnect(); err != nil {
		t.Errorf("Disconnect = %v", err)
	}
	if err := c.SendMsg(4, data); !errors.Is(err, net.ErrClosed) {
		t.Errorf("SendMsg after Disconnect = %v, want net.ErrClosed", err)
	}
	f.set(func(f *fakeVPP) {
		if len(f.deletes) != 0 {
			t.Errorf("sockclnt_delete sent on a broken connection")
		}
	})
}

// A failed write is returned by the SendMsg that met it, and breaks the
// connection: the next SendMsg fails without writing.
func TestWriteErrorBreaksConnection(t *testing.T) {
	path := sockPath(t)
	newFakeVPP(t, path, 100)
	c, _ := connectTo(t, path)
	data := testRequest(t, c, 10, 0)
	if err := c.session().conn.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	w0 := c.Stats().Writes
	err := c.SendMsg(1, data)
	if !errors.Is(err, io.ErrClosedPipe) || !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("SendMsg on a shut-down socket = %v", err)
	}
	if err2 := c.SendMsg(2, data); err2 != err {
		t.Errorf("the next SendMsg = %v, want the same error", err2)
	}
	if w := c.Stats().Writes - w0; w != 1 {
		t.Errorf("%d writes, want 1 (the failed one)", w)
	}
}

// VPP restarts: a new server on the same path, with another message table.
// Disconnect and Connect on the same Client get a new connection, table and
// reader, and the old reader has ended.
func TestReconnectAfterRestart(t *testing.T) {
	before := leakcheck.Goroutines()
	path := sockPath(t)
	f1 := newFakeVPP(t, path, 100)
	c := New(path)
	rec := newRecorder(t)
	c.SetMsgCallback(rec.callback)
	if err := c.Connect(); err != nil {
		t.Fatal(err)
	}
	if err := c.SendMsg(1, testRequest(t, c, 10, 0)); err != nil {
		t.Fatal(err)
	}
	rec.wait(1)
	s1 := c.session()

	c.Hold() // a window open across the restart stays open
	f1.stop()
	waitDone(t, s1.done, "the old reader to end")
	if err := c.Disconnect(); err != nil {
		t.Errorf("Disconnect after VPP died = %v", err)
	}
	if err := c.Connect(); err == nil {
		t.Fatal("Connect with VPP down succeeded")
	}

	f2 := newFakeVPP(t, path, 300)
	if err := c.WaitReady(); err != nil {
		t.Fatal(err)
	}
	if err := c.Connect(); err != nil {
		t.Fatal(err)
	}
	if id, err := c.GetMsgID(testMsg, testMsgCRC); err != nil || id != 307 {
		t.Errorf("GetMsgID after the restart = %d, %v; want the new table's 307", id, err)
	}
	for i := range 3 {
		if err := c.SendMsg(uint32(10+i), testRequest(t, c, 10, 0)); err != nil {
			t.Fatal(err)
		}
	}
	if r := c.Stats().Received; r != 1 {
		t.Errorf("received %d before Release, want 1", r)
	}
	if err := c.Release(); err != nil {
		t.Fatal(err)
	}
	msgs := rec.wait(4)
	for i, m := range msgs[1:] {
		if m.id != 308 || m.ctx != uint32(10+i) {
			t.Errorf("reply %d after the restart: %+v", i, m)
		}
	}
	f2.set(func(f *fakeVPP) {
		if f.badIndex != 0 {
			t.Errorf("%d requests with the old client index", f.badIndex)
		}
	})
	if err := c.Disconnect(); err != nil {
		t.Error(err)
	}
	f2.stop()
	if left := leakcheck.WaitGoroutinesGone(before, waitTimeout); left != "" {
		t.Errorf("goroutines left:\n%s", left)
	}
}

// Disconnect sends sockclnt_delete with the client index, waits for its
// reply (not for its timeout), and leaves no goroutine running, on either
// side.
func TestDisconnectDeletesAndEndsGoroutines(t *testing.T) {
	path := sockPath(t)
	f := newFakeVPP(t, path, 100)
	before := leakcheck.Goroutines()
	c := New(path)
	c.SetDisconnectTimeout(waitTimeout)
	if err := c.Connect(); err != nil {
		t.Fatal(err)
	}
	if err := c.SendMsg(1, testRequest(t, c, 10, 0)); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	if err := c.Disconnect(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(t0); d > waitTimeout/2 {
		t.Errorf("Disconnect took %v: the sockclnt_delete reply was not seen", d)
	}
	// The fake counts its reply once its write returned, which may be
	// after the client has read the reply and Disconnect has returned.
	f.waitFor("the sockclnt_delete reply counted", func(f *fakeVPP) bool { return f.deleteReplyW > 0 })
	f.set(func(f *fakeVPP) {
		if len(f.deletes) != 1 || f.deletes[0] != f.clientIndex || f.deleteReplyW != 1 {
			t.Errorf("sockclnt_delete: %v, replies written %d", f.deletes, f.deleteReplyW)
		}
	})
	if _, err := c.GetMsgID(testMsg, testMsgCRC); err == nil {
		t.Error("the message table outlived the connection")
	}
	if err := c.Disconnect(); err != nil {
		t.Errorf("a second Disconnect = %v", err)
	}
	if left := leakcheck.WaitGoroutinesGone(before, waitTimeout); left != "" {
		t.Errorf("goroutines left:\n%s", left)
	}
}

// A write stuck on a VPP that stopped reading is cut short by Disconnect:
// both return, the SendMsg with an error.
func TestDisconnectUnblocksStuckWrite(t *testing.T) {
	path := sockPath(t)
	f := newFakeVPP(t, path, 100)
	c, _ := connectTo(t, path)
	stall := make(chan struct{})
	defer close(stall) // before the fake's cleanup, which waits for its reader
	f.set(func(f *fakeVPP) { f.stall = stall })
	big := testRequest(t, c, 16<<20, 0) // far more than the socket buffers hold
	errc := make(chan error, 1)
	go func() { errc <- c.SendMsg(1, big) }()
	c.SetDisconnectTimeout(100 * time.Millisecond)
	if err := c.Disconnect(); err != nil {
		t.Errorf("Disconnect = %v", err)
	}
	select {
	case err := <-errc:
		// Either the write timed out (Disconnect came first to the stuck
		// write) or SendMsg found no connection (Disconnect came first).
		var nerr net.Error
		if !(errors.As(err, &nerr) && nerr.Timeout() && errors.Is(err, io.ErrClosedPipe)) && !errors.Is(err, net.ErrClosed) {
			t.Errorf("the stuck SendMsg = %v", err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("the stuck SendMsg did not return")
	}
}

// A VPP that does not answer sockclnt_delete holds Disconnect up for the
// disconnect timeout only.
func TestDisconnectWithoutDeleteReply(t *testing.T) {
	path := sockPath(t)
	f := newFakeVPP(t, path, 100)
	f.set(func(f *fakeVPP) { f.noDelete = true })
	c, _ := connectTo(t, path)
	c.SetDisconnectTimeout(100 * time.Millisecond)
	t0 := time.Now()
	if err := c.Disconnect(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(t0); d < 100*time.Millisecond || d > waitTimeout {
		t.Errorf("Disconnect took %v, want the disconnect timeout", d)
	}
	f.waitFor("sockclnt_delete", func(f *fakeVPP) bool { return len(f.deletes) == 1 })
}

// The sockclnt_delete reply goes to Disconnect, not to the callback.
func TestDeleteReplyNotPassedOn(t *testing.T) {
	path := sockPath(t)
	f := newFakeVPP(t, path, 100)
	c, rec := connectTo(t, path)
	if err := c.Disconnect(); err != nil {
		t.Fatal(err)
	}
	f.waitFor("the delete reply written", func(f *fakeVPP) bool { return f.deleteReplyW == 1 })
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, m := range rec.msgs {
		if m.id == f.base+2 {
			t.Errorf("the callback saw sockclnt_delete_reply")
		}
	}
}
