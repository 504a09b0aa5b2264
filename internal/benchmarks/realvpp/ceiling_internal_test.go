package realvpp

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/memclnt"
	"go.fd.io/govpp/core"

	"github.com/vppsvc/vppsvc/fakevpp"
)

// The ceiling's replay runs without a VPP: a scripted stream, and govpp's
// own stream over the fake VPP.

// replayBound is how long a replay of these tests may take; the old replay
// stood still for good where these tests end in an error.
const replayBound = 10 * time.Second

// scriptedStream answers every request with a ControlPingReply, in order,
// once the request is sent; its reader fails after okReplies replies, its
// sender after okSends sends (0: never). RecvMsg returns when ctx ends.
type scriptedStream struct {
	ctx                 context.Context
	sent                chan api.Message
	okReplies, okSends  int
	sends, replies      atomic.Int32
	receiving           atomic.Int32 // RecvMsg calls in progress
	failRetval, failPer int          // every failPer-th reply has retval failRetval
}

func newScriptedStream(ctx context.Context, n int) *scriptedStream {
	return &scriptedStream{ctx: ctx, sent: make(chan api.Message, n)}
}

func (s *scriptedStream) SendMsg(m api.Message) error {
	if n := int(s.sends.Add(1)); s.okSends > 0 && n > s.okSends {
		return errors.New("scripted send failure")
	}
	s.sent <- m
	return nil
}

func (s *scriptedStream) RecvMsg() (api.Message, error) {
	s.receiving.Add(1)
	defer s.receiving.Add(-1)
	n := int(s.replies.Add(1))
	if s.okReplies > 0 && n > s.okReplies {
		return nil, errors.New("scripted lost reply")
	}
	select {
	case <-s.sent:
	case <-s.ctx.Done():
		return nil, context.Cause(s.ctx)
	}
	reply := &memclnt.ControlPingReply{}
	if s.failPer > 0 && n%s.failPer == 0 {
		reply.Retval = int32(s.failRetval)
	}
	return reply, nil
}

func pings(n int) []api.Message {
	msgs := make([]api.Message, n)
	for i := range msgs {
		msgs[i] = &memclnt.ControlPing{}
	}
	return msgs
}

// boundedReplay runs replay on the stream newStream opens and fails the
// test if it has not returned within replayBound.
func boundedReplay(t *testing.T, newStream func(context.Context) msgStream, msgs []api.Message, depth int) (replayed, error) {
	t.Helper()
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	s := newStream(ctx)
	type outcome struct {
		r   replayed
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		r, err := replay(ctx, cancel, s, msgs, depth)
		done <- outcome{r, err}
	}()
	select {
	case o := <-done:
		return o.r, o.err
	case <-time.After(replayBound):
		cancel(errors.New("test bound"))
		t.Fatalf("replay of %d requests at depth %d still running after %s", len(msgs), depth, replayBound)
		return replayed{}, nil
	}
}

// TestReplayEndsWhenTheReaderStops: a reply that never comes (the reader's
// RecvMsg fails) ends the replay with that error although the sender is
// waiting for a slot, and no RecvMsg is left running.
func TestReplayEndsWhenTheReaderStops(t *testing.T) {
	for _, depth := range []int{1, 4, 256} {
		var s *scriptedStream
		_, err := boundedReplay(t, func(ctx context.Context) msgStream {
			s = newScriptedStream(ctx, 1000)
			s.okReplies = 10
			return s
		}, pings(1000), depth)
		if err == nil || !strings.Contains(err.Error(), "scripted lost reply") {
			t.Errorf("depth %d: err = %v, want the lost reply", depth, err)
		}
		if n := s.receiving.Load(); n != 0 {
			t.Errorf("depth %d: %d RecvMsg calls still running", depth, n)
		}
		if n := int(s.sends.Load()); n > 10+depth {
			t.Errorf("depth %d: %d sends, more than the 10 answered plus the window", depth, n)
		}
	}
}

// TestReplayEndsWhenASendFails: a failed send ends the replay with its
// error and ends the reader, which waits for replies that will not come.
func TestReplayEndsWhenASendFails(t *testing.T) {
	var s *scriptedStream
	_, err := boundedReplay(t, func(ctx context.Context) msgStream {
		s = newScriptedStream(ctx, 1000)
		s.okSends = 20
		return s
	}, pings(1000), 64)
	if err == nil || !strings.Contains(err.Error(), "scripted send failure") {
		t.Errorf("err = %v, want the send failure", err)
	}
	if n := s.receiving.Load(); n != 0 {
		t.Errorf("%d RecvMsg calls still running", n)
	}
}

// TestReplayCountsFailedReplies: a reply with a retval that is not 0 is
// counted and named, the replay goes on to the end.
func TestReplayCountsFailedReplies(t *testing.T) {
	r, err := boundedReplay(t, func(ctx context.Context) msgStream {
		s := newScriptedStream(ctx, 100)
		s.failPer, s.failRetval = 10, int(api.NO_SUCH_ENTRY)
		return s
	}, pings(100), 8)
	if err != nil {
		t.Fatal(err)
	}
	if r.failed != 10 || !strings.Contains(r.first, "control_ping_reply") {
		t.Errorf("failed %d, first %q; want 10 control_ping_reply failures", r.failed, r.first)
	}
}

// TestReplayOnGovppStream replays on govpp's own stream over the fake VPP,
// many times: every reply is read and none fails. (A reply read before the
// first send has returned would be "unknown" to govpp's stream; replay
// avoids that window, which this test hits too rarely to show.)
func TestReplayOnGovppStream(t *testing.T) {
	conn, err := core.Connect(fakevpp.New())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Disconnect()
	for i := 0; i < 50; i++ {
		r, err := boundedReplay(t, func(ctx context.Context) msgStream {
			s, err := conn.NewStream(ctx, core.WithRequestSize(16), core.WithReplySize(17), core.WithReplyTimeout(replayBound))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			return s
		}, pings(200), 16)
		if err != nil {
			t.Fatalf("replay %d: %v", i, err)
		}
		if r.failed != 0 {
			t.Fatalf("replay %d: %d failed replies, the first %s", i, r.failed, r.first)
		}
	}
}
