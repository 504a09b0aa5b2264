package fakevpp

import (
	"encoding/binary"
	"errors"
	"sync"
)

// ReplySink is what RouteReplies hands replies to: the same unnamed
// interface type as vppsock.ReplySink and govppdriver.ReplySink.
type ReplySink = interface {
	TakeReply(msgID uint16, context uint32, data []byte) bool
	RepliesRead()
	ConnectionLost(err error)
}

// errConnectionClosed is what a route hears when its connection ends.
var errConnectionClosed = errors.New("fakevpp: connection closed")

// replyRoute is a connection's route: replies whose context is in [lo, hi) go to
// sink. The replies answered to one batch of requests reach the sink
// together, as the replies of one socket read do in vppsock.
type replyRoute struct {
	lo, hi uint32
	sink   ReplySink
	lost   sync.Once // ConnectionLost
}

// lose tells the sink, once, that its connection ended.
func (r *replyRoute) lose() { r.lost.Do(func() { r.sink.ConnectionLost(errConnectionClosed) }) }

// take offers a reply to the route (nil takes nothing).
func (r *replyRoute) take(id uint16, data []byte) bool {
	if r == nil || len(data) < 6 {
		return false
	}
	ctx := binary.BigEndian.Uint32(data[2:6])
	return ctx >= r.lo && ctx < r.hi && r.sink.TakeReply(id, ctx, data)
}

// RouteReplies routes the replies of the first connection (see
// client.RouteReplies).
func (v *VPP) RouteReplies(lo, hi uint32, sink ReplySink) (stop func()) {
	return v.def.RouteReplies(lo, hi, sink)
}

// RouteReplies hands the connection's replies whose context is in [lo, hi)
// to sink instead of the message callback until stop, as vppsock.Client
// does on a real socket, so that a client reading them past govpp's core
// (the govpp driver's lane) is tested against the fake. One route at a
// time (nil otherwise); a route made without a connection, or whose
// connection ends (Disconnect, Restart), hears ConnectionLost, once.
func (c *client) RouteReplies(lo, hi uint32, sink ReplySink) (stop func()) {
	r := &replyRoute{lo: lo, hi: hi, sink: sink}
	if !c.replyRoute.CompareAndSwap(nil, r) {
		return nil
	}
	c.v.mu.Lock()
	up := c.connected && !c.broken
	c.v.mu.Unlock()
	if !up {
		r.lose()
	}
	return func() { c.replyRoute.CompareAndSwap(r, nil) }
}
