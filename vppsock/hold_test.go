package vppsock

import (
	"encoding/binary"
	"testing"
	"time"

	"go.fd.io/govpp/adapter"
)

// Hold, 100 SendMsg, Release: nothing is written before Release, then the
// 100 messages in one write, read by the server in one read, each answered
// in order.
func TestHoldWindowWritesOnRelease(t *testing.T) {
	path := sockPath(t)
	f := newFakeVPP(t, path, 100)
	c, rec := connectTo(t, path)
	w0 := c.Stats().Writes
	var r0 int
	f.set(func(f *fakeVPP) { r0 = len(f.reads) })

	c.Hold()
	for i := range 100 {
		if err := c.SendMsg(uint32(5000+i), testRequest(t, c, 30, byte(i))); err != nil {
			t.Fatal(err)
		}
	}
	if w := c.Stats().Writes - w0; w != 0 {
		t.Fatalf("%d writes before Release", w)
	}
	if err := c.Release(); err != nil {
		t.Fatal(err)
	}
	if w := c.Stats().Writes - w0; w != 1 {
		t.Errorf("%d writes for a window of 100, want 1", w)
	}
	f.waitRequests(100)
	f.set(func(f *fakeVPP) {
		if reads := f.reads[r0:]; len(reads) != 1 {
			t.Errorf("the server read the window in %d reads %v, want 1", len(reads), reads)
		}
		for i, r := range f.requests {
			if binary.BigEndian.Uint32(r[6:10]) != uint32(5000+i) || r[10] != byte(i) {
				t.Fatalf("request %d out of order: % x", i, r[:12])
			}
		}
	})
	requireContextsFrom(t, rec.wait(100), 5000)
	if s := c.Stats(); s.Sent != 100 || s.Received != 100 {
		t.Errorf("stats %+v", s)
	}
}

// Holds nest by count: only the last Release writes, and a Release without
// a Hold is a no-op.
func TestNestedHolds(t *testing.T) {
	path := sockPath(t)
	f := newFakeVPP(t, path, 100)
	c, rec := connectTo(t, path)
	w0 := c.Stats().Writes
	c.Hold()
	c.Hold()
	for i := range 10 {
		if err := c.SendMsg(uint32(i), testRequest(t, c, 10, 0)); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Release(); err != nil {
		t.Fatal(err)
	}
	for i := 10; i < 15; i++ {
		if err := c.SendMsg(uint32(i), testRequest(t, c, 10, 0)); err != nil {
			t.Fatal(err)
		}
	}
	if w := c.Stats().Writes - w0; w != 0 {
		t.Fatalf("%d writes before the outer Release", w)
	}
	if err := c.Release(); err != nil {
		t.Fatal(err)
	}
	if w := c.Stats().Writes - w0; w != 1 {
		t.Errorf("%d writes, want 1", w)
	}
	// Releases without a Hold: nil, nothing written, and the count does not
	// go below zero (the next SendMsg is written at once).
	if err := c.Release(); err != nil {
		t.Errorf("Release without Hold = %v", err)
	}
	if err := c.Release(); err != nil {
		t.Errorf("Release without Hold = %v", err)
	}
	if err := c.SendMsg(15, testRequest(t, c, 10, 0)); err != nil {
		t.Fatal(err)
	}
	if w := c.Stats().Writes - w0; w != 2 {
		t.Errorf("%d writes, want 2", w)
	}
	f.waitRequests(16)
	requireContextsFrom(t, rec.wait(16), 0)
}

// Held bytes that reach the hold limit (256 KiB) are written by the
// SendMsg that reached it, and holding goes on.
func TestHoldLimitWritesEarly(t *testing.T) {
	path := sockPath(t)
	f := newFakeVPP(t, path, 100)
	c, rec := connectTo(t, path)
	w0 := c.Stats().Writes
	const payload = 1000 - reqHeaderLen
	frame := headerLen + reqHeaderLen + payload
	first := (DefaultHoldLimit + frame - 1) / frame // the message that reaches the limit

	c.Hold()
	for i := range 300 {
		if err := c.SendMsg(uint32(i), testRequest(t, c, payload, byte(i))); err != nil {
			t.Fatal(err)
		}
		want := uint64(0)
		if i+1 >= first {
			want = 1
		}
		if w := c.Stats().Writes - w0; w != want {
			t.Fatalf("after %d messages: %d writes, want %d", i+1, w, want)
		}
	}
	// The first 256 are at the server before Release.
	f.waitRequests(first)
	if err := c.Release(); err != nil {
		t.Fatal(err)
	}
	if w := c.Stats().Writes - w0; w != 2 {
		t.Errorf("%d writes, want 2", w)
	}
	f.waitRequests(300)
	requireContextsFrom(t, rec.wait(300), 0)
}

// A SendMsg from another goroutine while held (govpp's health-check ping)
// is held too and goes out with the window, in the order it came.
func TestSendFromOtherGoroutineWhileHeld(t *testing.T) {
	path := sockPath(t)
	f := newFakeVPP(t, path, 100)
	c, rec := connectTo(t, path)
	w0 := c.Stats().Writes
	c.Hold()
	for i := range 5 {
		if err := c.SendMsg(uint32(i), testRequest(t, c, 10, 0)); err != nil {
			t.Fatal(err)
		}
	}
	data := testRequest(t, c, 10, 0)
	errc := make(chan error, 1)
	go func() { errc <- c.SendMsg(999, data) }()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("the other goroutine's SendMsg did not return")
	}
	for i := 5; i < 10; i++ {
		if err := c.SendMsg(uint32(i), testRequest(t, c, 10, 0)); err != nil {
			t.Fatal(err)
		}
	}
	if w := c.Stats().Writes - w0; w != 0 {
		t.Fatalf("%d writes while held", w)
	}
	if err := c.Release(); err != nil {
		t.Fatal(err)
	}
	f.waitRequests(11)
	msgs := rec.wait(11)
	want := []uint32{0, 1, 2, 3, 4, 999, 5, 6, 7, 8, 9}
	for i, m := range msgs {
		if m.ctx != want[i] {
			t.Fatalf("reply %d has context %d, want %d", i, m.ctx, want[i])
		}
	}
	if w := c.Stats().Writes - w0; w != 1 {
		t.Errorf("%d writes, want 1", w)
	}
}

// HoldOn and ReleaseOn reach the window of a Client behind a Wrapper, and
// do nothing for an adapter without windows.
func TestHoldOnReleaseOn(t *testing.T) {
	path := sockPath(t)
	f := newFakeVPP(t, path, 100)
	c, rec := connectTo(t, path)
	wrapped := struct{ adapter.VppAPI }{c} // hides Hold and Release
	HoldOn(Wrapper{c})
	w0 := c.Stats().Writes
	for i := range 3 {
		if err := c.SendMsg(uint32(i), testRequest(t, c, 10, 0)); err != nil {
			t.Fatal(err)
		}
	}
	if w := c.Stats().Writes - w0; w != 0 {
		t.Fatalf("%d writes while held, want 0", w)
	}
	if err := ReleaseOn(Wrapper{c}); err != nil {
		t.Fatal(err)
	}
	if w := c.Stats().Writes - w0; w != 1 {
		t.Fatalf("%d writes after ReleaseOn, want 1", w)
	}
	HoldOn(Wrapper{wrapped}) // no window to hold: the next request goes out at once
	if err := c.SendMsg(3, testRequest(t, c, 10, 0)); err != nil {
		t.Fatal(err)
	}
	if w := c.Stats().Writes - w0; w != 2 {
		t.Fatalf("%d writes, want 2: HoldOn held a window through an adapter without one", w)
	}
	if err := ReleaseOn(Wrapper{wrapped}); err != nil {
		t.Fatal(err)
	}
	f.waitRequests(4)
	requireContextsFrom(t, rec.wait(4), 0)
}
