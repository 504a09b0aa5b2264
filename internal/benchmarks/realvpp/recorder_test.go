package realvpp

import (
	"encoding/binary"
	"testing"
	"time"

	"go.fd.io/govpp/adapter"
)

// idsAdapter numbers two messages and accepts every send.
type idsAdapter struct{ adapter.VppAPI } // nil: only the methods below are called

func (idsAdapter) GetMsgID(name, _ string) (uint16, error) {
	if name == "control_ping" {
		return 2, nil
	}
	return 1, nil
}

func (idsAdapter) SendMsg(uint32, []byte) error { return nil }

// TestRecorderStampsWhenWritesReachTheSocket: the recorder keeps the
// state-changing requests only, splits them at the mark, and dates the
// sync's first and last write by when they left: a held window at its
// outermost Release, a request outside a window at once.
func TestRecorderStampsWhenWritesReachTheSocket(t *testing.T) {
	r := newRecorder(idsAdapter{})
	for _, m := range []string{"nat44_add_del_lb_static_mapping", "control_ping"} {
		if _, err := r.GetMsgID(m, "crc"); err != nil {
			t.Fatal(err)
		}
	}
	send := func(id uint16) {
		t.Helper()
		b := make([]byte, 12)
		binary.BigEndian.PutUint16(b, id)
		if err := r.SendMsg(0, b); err != nil {
			t.Fatal(err)
		}
	}
	send(1) // the setup
	r.mark()
	r.Hold()
	r.Hold() // holds nest
	send(1)
	send(2) // a read: not recorded
	if err := r.Release(); err != nil {
		t.Fatal(err)
	}
	if !r.first.IsZero() {
		t.Fatal("a write still held was dated")
	}
	before := time.Now()
	if err := r.Release(); err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	time.Sleep(time.Millisecond)
	send(1) // outside a window
	rec := r.split()
	if len(rec.setup) != 1 || len(rec.sync) != 2 {
		t.Fatalf("setup %d, sync %d writes; want 1 and 2", len(rec.setup), len(rec.sync))
	}
	if rec.first.Before(before) || rec.first.After(after) {
		t.Fatalf("first write at %v, not at the outermost Release (%v–%v)", rec.first, before, after)
	}
	if !rec.last.After(after) {
		t.Fatalf("last write at %v, not when the unheld write went (after %v)", rec.last, after)
	}
}
