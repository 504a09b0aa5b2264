package vppsock

import (
	"errors"
	"io"
	"sync"
	"testing"

	"go.fd.io/govpp/adapter"
)

// sink is a ReplySink that keeps what it took, the batches RepliesRead
// closed, and the losses; it takes only the message ID it is told to.
type sink struct {
	id      uint16
	mu      sync.Mutex
	open    []received // taken since the last RepliesRead
	batches [][]received
	lost    []error
	changed chan struct{}
}

func newSink(id uint16) *sink { return &sink{id: id, changed: make(chan struct{}, 1)} }

func (s *sink) TakeReply(msgID uint16, context uint32, data []byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if msgID != s.id {
		return false
	}
	s.open = append(s.open, received{id: msgID, ctx: context, data: append([]byte(nil), data...)})
	return true
}

func (s *sink) setID(id uint16) {
	s.mu.Lock()
	s.id = id
	s.mu.Unlock()
}

func (s *sink) RepliesRead() {
	s.mu.Lock()
	s.batches = append(s.batches, s.open)
	s.open = nil
	s.mu.Unlock()
	s.signal()
}

func (s *sink) ConnectionLost(err error) {
	s.mu.Lock()
	s.lost = append(s.lost, err)
	s.mu.Unlock()
	s.signal()
}

func (s *sink) signal() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// wait waits until cond holds (under the sink's lock); after waitTimeout it
// fails the test.
func (s *sink) wait(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for {
		s.mu.Lock()
		ok := cond()
		s.mu.Unlock()
		if ok {
			return
		}
		waitDone(t, s.changed, what)
	}
}

// Replies in the route's range go to the sink, the batch a read brought
// closed by one RepliesRead; replies outside it, and those the sink
// declines, go to the callback. Once stopped, the route takes nothing.
func TestRouteRepliesByContext(t *testing.T) {
	path := sockPath(t)
	newFakeVPP(t, path, 100)
	c, rec := connectTo(t, path)
	replyID, err := c.GetMsgID(testReply, testReplyCRC)
	if err != nil {
		t.Fatal(err)
	}
	s := newSink(replyID)
	stop := c.RouteReplies(1, 1<<17, s)
	if stop == nil {
		t.Fatal("RouteReplies = nil on a Client without a route")
	}
	if again := c.RouteReplies(1, 1<<17, newSink(replyID)); again != nil {
		t.Fatal("a second route was accepted")
	}

	data := testRequest(t, c, 10, 0)
	c.Hold()
	for i := range 50 {
		if err := c.SendMsg(uint32(1+i), data); err != nil { // routed
			t.Fatal(err)
		}
	}
	for _, ctx := range []uint32{0, 1 << 17, 5 << 17} { // govpp core's
		if err := c.SendMsg(ctx, data); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Release(); err != nil {
		t.Fatal(err)
	}
	s.wait(t, "50 routed replies", func() bool {
		n := 0
		for _, b := range s.batches {
			n += len(b)
		}
		return n == 50 && len(s.open) == 0
	})
	got := rec.wait(3)
	for i, want := range []uint32{0, 1 << 17, 5 << 17} {
		if got[i].ctx != want {
			t.Errorf("callback message %d has context %d, want %d", i, got[i].ctx, want)
		}
	}
	s.mu.Lock()
	var all []received
	for _, b := range s.batches {
		if len(b) == 0 {
			t.Errorf("an empty batch: RepliesRead without a reply taken")
		}
		all = append(all, b...)
	}
	if reads := c.Stats().Reads; uint64(len(s.batches)) > reads {
		t.Errorf("%d batches from %d reads", len(s.batches), reads)
	}
	s.mu.Unlock()
	requireContextsFrom(t, all, 1)

	// The sink declines another ID: those replies go to the callback.
	s.setID(replyID + 1)
	if err := c.SendMsg(7, data); err != nil {
		t.Fatal(err)
	}
	if got := rec.wait(4); got[3].ctx != 7 {
		t.Errorf("declined reply has context %d, want 7", got[3].ctx)
	}
	s.setID(replyID)
	stop()
	if err := c.SendMsg(8, data); err != nil {
		t.Fatal(err)
	}
	if got := rec.wait(5); got[4].ctx != 8 {
		t.Errorf("reply after stop has context %d, want 8", got[4].ctx)
	}
	if again := c.RouteReplies(1, 1<<17, s); again == nil {
		t.Error("no route after the first was stopped")
	} else {
		again()
	}
}

// The sink hears once that the connection it takes replies from ended, and
// at once when the route is made without a connection.
func TestRouteConnectionLost(t *testing.T) {
	path := sockPath(t)
	f := newFakeVPP(t, path, 100)
	c, _ := connectTo(t, path)
	s := newSink(0)
	stop := c.RouteReplies(1, 10, s)
	defer stop()
	sess := c.session()
	f.closeConns()
	waitDone(t, sess.done, "the reader to end")
	s.wait(t, "ConnectionLost", func() bool { return len(s.lost) > 0 })
	if err := s.lost[0]; !errors.Is(err, io.ErrClosedPipe) || !errors.Is(err, io.EOF) {
		t.Errorf("ConnectionLost(%v), want the broken connection's error", err)
	}
	stop()

	late := newSink(0)
	stop = c.RouteReplies(1, 10, late) // the session is broken already
	if len(late.lost) != 1 {
		t.Errorf("a route made on a broken connection heard %d losses, want 1", len(late.lost))
	}
	stop()
	if err := c.Disconnect(); err != nil {
		t.Fatal(err)
	}
	none := newSink(0)
	stop = c.RouteReplies(1, 10, none)
	if len(none.lost) != 1 {
		t.Errorf("a route made without a connection heard %d losses, want 1", len(none.lost))
	}
	stop()
	s.mu.Lock()
	if len(s.lost) != 1 {
		t.Errorf("the first sink heard %d losses, want 1", len(s.lost))
	}
	s.mu.Unlock()
}

// RouteOn finds the route through a Wrapper, and none through an adapter
// that hides it.
func TestRouteOn(t *testing.T) {
	path := sockPath(t)
	newFakeVPP(t, path, 100)
	c, _ := connectTo(t, path)
	hidden := struct{ adapter.VppAPI }{c}
	if stop := RouteOn(Wrapper{hidden}, 1, 10, newSink(0)); stop != nil {
		t.Error("RouteOn routed through an adapter without routes")
	}
	stop := RouteOn(Wrapper{c}, 1, 10, newSink(0))
	if stop == nil {
		t.Fatal("RouteOn did not route on a Client")
	}
	stop()
}
