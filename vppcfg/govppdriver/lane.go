package govppdriver

import (
	"context"
	"encoding/binary"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"

	"go.fd.io/govpp/adapter"
	"go.fd.io/govpp/api"
	"go.fd.io/govpp/codec"
)

// ReplyRouter is an adapter that hands the replies of a range of request
// contexts to a sink instead of govpp's core (vppsock.Client, fakevpp).
// The driver then sends a pipeline's requests itself, encoded into one
// buffer, and reads their replies a read at a time: a lane. govpp's stream
// costs per request a trip through its core's goroutines and channels
// each way, a copy and a decode of every reply into a new message, and a
// lookup of the message's ID by name; at 50,000 requests that was about a
// third of the product's CPU while VPP took the writes. An adapter that
// wraps another keeps this by embedding vppsock.Wrapper.
type ReplyRouter interface {
	// RouteReplies hands the replies whose context lies in [lo, hi) to
	// sink until stop is called; nil if it cannot (one route at a time).
	RouteReplies(lo, hi uint32, sink ReplySink) (stop func())
}

// ReplySink is what a lane gives RouteReplies; it is vppsock.ReplySink,
// an alias of the same unnamed type so that neither package imports the
// other.
type ReplySink = interface {
	TakeReply(msgID uint16, context uint32, data []byte) bool
	RepliesRead()
	ConnectionLost(err error)
}

// The contexts of a lane's requests: govpp's core packs the channel ID
// (1 and up) into a context's bits 17 and up, so none of its contexts is
// under 1<<17, and 0 means an event.
const (
	laneFirstContext = 1
	laneContextSpan  = 1<<17 - laneFirstContext
)

// lane is a pipe's way to VPP past govpp's core, on an adapter that routes
// replies. One pipe uses a lane at a time (Driver.openLane); another pipe
// meanwhile takes govpp's stream. A lane is made for its pipe: the
// adapter's reader may still be in a lane's sink for a moment after its
// route is stopped. govpp's health check does not see a lane's replies;
// its probe goes out after at most the pipe's two windows, which VPP
// answers well within the probe's timeout (govpp_settings.go).
type lane struct {
	d     *Driver
	a     adapter.VppAPI
	stop  func()
	cache *laneCache // the pipe's side, kept for the next lane
	first uint32     // the context of the lane's first request
	cur   replyBatch // replies taken from queue, being read
	pos   int        // the next reply of cur

	// sent counts the requests the lane gave contexts, so that the reader
	// takes only replies to them (a reply to an earlier lane is left to
	// govpp's core, which drops it).
	sent atomic.Uint32
	// awaited are the reply IDs of the lane's requests (a few): an event's
	// header has no context, so its bytes there can fall in the range.
	awaited atomic.Pointer[[]uint16]

	// The reader's side: replies taken since the last RepliesRead.
	rd replyBatch

	mu    sync.Mutex
	queue replyBatch // handed over by the reader, not yet taken
	lost  error
	// want is how many replies the pipe waits for (0: it is not waiting):
	// the reader wakes it once they are all queued, not for each read (VPP
	// writes each reply on its own, so a read often brings one), and
	// meanwhile re-arms the reply watchdog through progress at each read.
	want     int
	progress func()
	ready    chan struct{} // signalled when the wait is over or lost is set
}

// laneCache is what one lane leaves the next: message IDs (looked up again
// for each lane, as the connection may be another), a reply of each ID to
// decode into, and the encoding buffer.
type laneCache struct {
	ids     map[reflect.Type]uint16
	scratch map[uint16]api.Message
	enc     []byte
}

// replyBatch is replies' data back to back in buf.
type replyBatch struct {
	buf  []byte
	list []laneReply
}

type laneReply struct {
	id  uint16
	ctx uint32
	end int // where its data ends in buf
}

func (b *replyBatch) reset() { b.buf, b.list = b.buf[:0], b.list[:0] }

func (b *replyBatch) add(id uint16, ctx uint32, data []byte) {
	b.buf = append(b.buf, data...)
	b.list = append(b.list, laneReply{id: id, ctx: ctx, end: len(b.buf)})
}

// appendBatch appends o's replies to b.
func (b *replyBatch) appendBatch(o *replyBatch) {
	base := len(b.buf)
	b.buf = append(b.buf, o.buf...)
	for _, r := range o.list {
		r.end += base
		b.list = append(b.list, r)
	}
}

// openLane routes the replies of a new lane's contexts to it and returns
// it, or nil if the adapter does not route replies or a lane is in use.
func (d *Driver) openLane() *lane {
	if d.router == nil || !d.laneFree.CompareAndSwap(true, false) {
		return nil
	}
	c := &d.laneCache
	if c.ids == nil {
		c.ids, c.scratch = map[reflect.Type]uint16{}, map[uint16]api.Message{}
	}
	clear(c.ids)
	clear(c.scratch)
	l := &lane{d: d, a: d.adapter, cache: c, first: d.laneNext, ready: make(chan struct{}, 1)}
	l.awaited.Store(new([]uint16))
	l.stop = d.router.RouteReplies(laneFirstContext, laneFirstContext+laneContextSpan, l)
	if l.stop == nil {
		d.laneFree.Store(true)
		return nil
	}
	return l
}

// close stops the lane's route and frees the driver's lane for the next
// pipe, which starts its contexts after this one's.
func (l *lane) close() {
	l.stop()
	l.d.laneNext = l.context(l.sent.Load())
	l.d.laneFree.Store(true)
}

// context is the context of the lane's n-th request.
func (l *lane) context(n uint32) uint32 {
	return laneFirstContext + (l.first-laneFirstContext+n)%laneContextSpan
}

// id is msg's message ID on the pipe's connection.
func (l *lane) id(msg api.Message) (uint16, error) {
	t := reflect.TypeOf(msg)
	if id, ok := l.cache.ids[t]; ok {
		return id, nil
	}
	id, err := l.a.GetMsgID(msg.GetMessageName(), msg.GetCrcString())
	if err != nil {
		return 0, err
	}
	l.cache.ids[t] = id
	return id, nil
}

// send encodes c's request and sends it with the lane's next context.
func (l *lane) send(c *call) error {
	reqID, err := l.id(c.req)
	if err != nil {
		return err
	}
	replyID, err := l.id(c.reply)
	if err != nil {
		return err
	}
	l.await(replyID)
	data, err := l.encode(reqID, c.req)
	if err != nil {
		return err
	}
	n := l.sent.Load()
	c.ctx, c.replyID = l.context(n), replyID
	// Counted before the send: the reply may be read before SendMsg returns.
	l.sent.Store(n + 1)
	return l.a.SendMsg(c.ctx, data)
}

// encode encodes msg with its ID and an empty request header into the
// lane's buffer, as govpp's codec does; the adapter fills the header.
func (l *lane) encode(id uint16, msg api.Message) (data []byte, err error) {
	m, ok := msg.(codec.Marshaler)
	if !ok {
		return codec.DefaultCodec.EncodeMsg(msg, id)
	}
	defer func() {
		if r := recover(); r != nil { // as govpp's codec: a bad message is an error
			data, err = nil, fmt.Errorf("encode %s: %v", msg.GetMessageName(), r)
		}
	}()
	const header = 10 // ID, client index, context
	n := header + m.Size()
	c := l.cache
	if cap(c.enc) < n {
		c.enc = make([]byte, n, max(n, 2*cap(c.enc)))
	}
	b := c.enc[:n]
	clear(b) // fixed-size strings and arrays are copied, not padded
	binary.BigEndian.PutUint16(b, id)
	if _, err := m.Marshal(b[header:]); err != nil {
		return nil, err
	}
	return b, nil
}

// await adds id to the reply IDs the reader takes (copied on write: the
// reader reads them without a lock).
func (l *lane) await(id uint16) {
	ids := *l.awaited.Load()
	if !slices.Contains(ids, id) {
		l.awaited.Store(new(append(slices.Clip(ids), id)))
	}
}

// recv returns the reply to c, the oldest call awaiting one, decoded into
// the lane's message of its type (valid until the next recv); left calls
// (c among them) await a reply. ctx ends the wait (the pipe's reply
// watchdog).
func (l *lane) recv(ctx context.Context, c *call, left int) (api.Message, error) {
	for l.pos == len(l.cur.list) {
		if err := l.take(ctx, left); err != nil {
			return nil, err
		}
	}
	r := l.cur.list[l.pos]
	start := 0
	if l.pos > 0 {
		start = l.cur.list[l.pos-1].end
	}
	l.pos++
	if r.id != c.replyID || r.ctx != c.ctx {
		return nil, fmt.Errorf("got message %d with context %d instead of %s with context %d", r.id, r.ctx, c.reply.GetMessageName(), c.ctx)
	}
	msg := l.cache.scratch[r.id]
	if msg == nil {
		msg = reflect.New(reflect.TypeOf(c.reply).Elem()).Interface().(api.Message)
		l.cache.scratch[r.id] = msg
	}
	if err := codec.DefaultCodec.DecodeMsg(l.cur.buf[start:r.end], msg); err != nil {
		return nil, fmt.Errorf("decode %s: %w", c.reply.GetMessageName(), err)
	}
	return msg, nil
}

// take makes the replies the reader queued cur, waiting for left of them
// when none is queued; it returns the connection's loss once every reply
// that came is read.
func (l *lane) take(ctx context.Context, left int) error {
	for {
		l.mu.Lock()
		if len(l.queue.list) > 0 {
			l.cur.reset()
			l.cur, l.queue = l.queue, l.cur
			l.pos, l.want = 0, 0
			l.mu.Unlock()
			return nil
		}
		lost := l.lost
		if lost == nil {
			l.want = left
		}
		l.mu.Unlock()
		if lost != nil {
			return lost
		}
		select {
		case <-l.ready:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// TakeReply implements ReplySink, on the adapter's reader: it keeps a
// reply to one of the lane's requests.
func (l *lane) TakeReply(msgID uint16, context uint32, data []byte) bool {
	if !slices.Contains(*l.awaited.Load(), msgID) {
		return false
	}
	off := (context + laneContextSpan - l.first) % laneContextSpan
	if off >= l.sent.Load() {
		return false
	}
	l.rd.add(msgID, context, data)
	return true
}

// RepliesRead implements ReplySink: the replies one read brought are
// queued for the pipe together, which is woken once it has what it waits
// for.
func (l *lane) RepliesRead() {
	l.mu.Lock()
	if len(l.queue.list) == 0 {
		l.queue, l.rd = l.rd, l.queue
	} else {
		l.queue.appendBatch(&l.rd)
	}
	l.rd.reset()
	wake := l.want > 0 && len(l.queue.list) >= l.want
	if wake {
		l.want = 0
	} else if l.want > 0 && l.progress != nil {
		// Under the lock: once the pipe has taken its replies (want 0)
		// it may stop the watchdog, and an arm after that would end the
		// stream of a pipe not waiting any more.
		l.progress()
	}
	l.mu.Unlock()
	if wake {
		l.signal()
	}
}

// ConnectionLost implements ReplySink.
func (l *lane) ConnectionLost(err error) {
	l.mu.Lock()
	if l.lost == nil {
		l.lost = fmt.Errorf("connection lost: %w", err)
	}
	l.mu.Unlock()
	l.signal()
}

func (l *lane) signal() {
	select {
	case l.ready <- struct{}{}:
	default:
	}
}
