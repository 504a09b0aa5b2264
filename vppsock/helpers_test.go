package vppsock

import (
	"encoding/binary"
	"sync"
	"testing"
	"time"
)

// received is one message the callback saw.
type received struct {
	id   uint16
	ctx  uint32
	data []byte
}

// recorder is a message callback that keeps a copy of every message.
type recorder struct {
	t       testing.TB
	mu      sync.Mutex
	msgs    []received
	changed chan struct{}
}

func newRecorder(t testing.TB) *recorder {
	return &recorder{t: t, changed: make(chan struct{}, 1)}
}

func (r *recorder) callback(id uint16, data []byte) {
	r.mu.Lock()
	r.msgs = append(r.msgs, received{id: id, ctx: binary.BigEndian.Uint32(data[2:6]), data: append([]byte(nil), data...)})
	r.mu.Unlock()
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

// wait waits until n messages were received and returns them; after
// waitTimeout it fails the test.
func (r *recorder) wait(n int) []received {
	r.t.Helper()
	timer := time.NewTimer(waitTimeout)
	defer timer.Stop()
	for {
		r.mu.Lock()
		if len(r.msgs) >= n {
			out := append([]received(nil), r.msgs...)
			r.mu.Unlock()
			return out
		}
		got := len(r.msgs)
		r.mu.Unlock()
		select {
		case <-r.changed:
		case <-timer.C:
			r.t.Fatalf("timeout (%v) waiting for %d replies, got %d", waitTimeout, n, got)
		}
	}
}

// connectTo returns a Client connected to the fake at path with a
// recorder as its callback; the test's cleanup disconnects it.
func connectTo(t testing.TB, path string) (*Client, *recorder) {
	t.Helper()
	c := New(path)
	rec := newRecorder(t)
	c.SetMsgCallback(rec.callback)
	if err := c.Connect(); err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { _ = c.Disconnect() })
	return c, rec
}

// testRequest returns the data of a test_msg request: its ID, an empty
// request header, and payload bytes numbered from seed.
func testRequest(t testing.TB, c *Client, payload int, seed byte) []byte {
	t.Helper()
	id, err := c.GetMsgID(testMsg, testMsgCRC)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, reqHeaderLen+payload)
	binary.BigEndian.PutUint16(data, id)
	for i := range payload {
		data[reqHeaderLen+i] = seed + byte(i)
	}
	return data
}

// waitDone waits for ch to be closed; after waitTimeout it fails the test.
func waitDone(t testing.TB, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(waitTimeout):
		t.Fatalf("timeout (%v) waiting for %s", waitTimeout, what)
	}
}

// session returns the client's current session (nil when disconnected).
func (c *Client) session() *session {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sess
}

func sockPath(t testing.TB) string { return t.TempDir() + "/api.sock" }

// requireContextsFrom fails the test unless the replies carry the contexts
// first, first+1, … in turn: the requests went out, and were answered, in
// the order they were sent.
func requireContextsFrom(t *testing.T, replies []received, first uint32) {
	t.Helper()
	for i, m := range replies {
		if m.ctx != first+uint32(i) {
			t.Fatalf("reply %d has context %d, want %d", i, m.ctx, first+uint32(i))
		}
	}
}
