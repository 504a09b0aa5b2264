package realvpp

import (
	"encoding/binary"
	"testing"
	"time"

	"go.fd.io/govpp/adapter"
)

// The raw-socket clients of the ceiling and the floor: recorded requests
// renumbered for a restarted VPP, replies read as their retvals, and a
// sender that keeps a window of requests unanswered, or two held windows.

// remapped copies raw (recorded requests) with their message IDs as c's
// VPP numbers them, found by name and CRC.
func remapped(b *testing.B, c adapter.VppAPI, names map[uint16]string, raw [][]byte) [][]byte {
	b.Helper()
	ids := map[uint16]uint16{}
	out := make([][]byte, len(raw))
	for i, data := range raw {
		old := binary.BigEndian.Uint16(data)
		id, ok := ids[old]
		if !ok {
			name, crc := splitNameCRC(names[old])
			var err error
			if id, err = c.GetMsgID(name, crc); err != nil {
				b.Fatalf("message %s unknown to the restarted VPP: %v", names[old], err)
			}
			ids[old] = id
		}
		out[i] = append([]byte(nil), data...)
		binary.BigEndian.PutUint16(out[i], id)
	}
	return out
}

// retvals makes c hand every reply's retval (after the 6-byte header) to
// the returned channel, which holds room for two windows of depth.
func retvals(c adapter.VppAPI, depth int) chan int32 {
	replies := make(chan int32, 2*depth+1)
	c.SetMsgCallback(func(_ uint16, data []byte) {
		var v int32
		if len(data) >= 10 {
			v = int32(binary.BigEndian.Uint32(data[6:10]))
		}
		replies <- v
	})
	return replies
}

// holder is an adapter that writes held requests a window at a time
// (vppsock.Client).
type holder interface {
	Hold()
	Release() error
}

// windowSender sends requests on c with at most depth unanswered, or,
// held, in held windows of depth with at most two unanswered. Every wait
// for a reply is bounded by replyTimeout.
type windowSender struct {
	b                  *testing.B
	c                  adapter.VppAPI
	held               holder // nil: unheld
	depth              int
	replies            chan int32
	inWindow, inFlight int
	sent, failed       int
}

func newWindowSender(b *testing.B, c adapter.VppAPI, depth int, held bool) *windowSender {
	s := &windowSender{b: b, c: c, depth: depth, replies: retvals(c, depth)}
	if held {
		s.held = c.(holder)
		s.held.Hold()
	}
	return s
}

func (s *windowSender) send(data []byte) {
	if s.held == nil {
		for s.inFlight >= s.depth {
			s.wait()
		}
	}
	if err := s.c.SendMsg(uint32(s.sent+1), data); err != nil {
		s.b.Fatal(err)
	}
	s.sent++
	s.inFlight++
	if s.held == nil {
		return
	}
	if s.inWindow++; s.inWindow < s.depth {
		return
	}
	s.inWindow = 0
	if err := s.held.Release(); err != nil {
		s.b.Fatal(err)
	}
	for s.inFlight > s.depth {
		s.wait()
	}
	s.held.Hold()
}

// finish writes what is held and waits for every reply.
func (s *windowSender) finish() {
	if s.held != nil {
		if err := s.held.Release(); err != nil {
			s.b.Fatal(err)
		}
	}
	for s.inFlight > 0 {
		s.wait()
	}
}

func (s *windowSender) wait() {
	select {
	case v := <-s.replies:
		if v != 0 {
			s.failed++
		}
		s.inFlight--
	case <-time.After(replyTimeout):
		s.b.Fatalf("no reply from VPP for %s (%d in flight)", replyTimeout, s.inFlight)
	}
}
