package vppsock

import (
	"sync"

	"go.fd.io/govpp/adapter"
)

// ReplySink takes the replies a route hands over (see Client.RouteReplies).
// It is an alias of an unnamed interface type so that a package can offer
// or use routes without importing this one (govppdriver, fakevpp).
type ReplySink = interface {
	// TakeReply is offered every message whose context is in the route's
	// range, on the reader goroutine; data is valid only during the call.
	// It returns false to leave the message to the message callback.
	TakeReply(msgID uint16, context uint32, data []byte) bool
	// RepliesRead follows the replies taken from one read, when no
	// complete message is left to hand on (the reader is about to wait):
	// replies that came together are taken together.
	RepliesRead()
	// ConnectionLost is called once, when the connection the route takes
	// replies from ends (err says why), or at once when there is none: no
	// reply still awaited will come, and the route is done.
	ConnectionLost(err error)
}

// route is the Client's one route: the context range and the sink.
type route struct {
	lo, hi uint32
	sink   ReplySink
	// took is set by the reader when it handed a reply over since the
	// last RepliesRead. Only the reader goroutine touches it.
	took bool
	lost sync.Once // ConnectionLost
}

func (r *route) covers(context uint32) bool { return context >= r.lo && context < r.hi }

// lose tells the sink, once, that its connection ended.
func (r *route) lose(err error) { r.lost.Do(func() { r.sink.ConnectionLost(err) }) }

// RouteReplies hands the replies whose context lies in [lo, hi) to sink
// instead of the message callback, from now until the returned stop is
// called. It lets a client that encodes its own requests read their replies
// without govpp's core: the core gives every request a context with its
// channel ID (1 and up) in the upper bits, so a range under 1<<17 is never
// one of its own. One route at a time: RouteReplies returns nil while
// another is in place.
//
// When the connection the route takes replies from ends, or there is none,
// the sink's ConnectionLost is called, once; stop the route then.
func (c *Client) RouteReplies(lo, hi uint32, sink ReplySink) (stop func()) {
	r := &route{lo: lo, hi: hi, sink: sink}
	if !c.route.CompareAndSwap(nil, r) {
		return nil
	}
	c.mu.Lock()
	s := c.sess
	var broken error
	if s != nil {
		broken = s.broken
	}
	c.mu.Unlock()
	switch {
	case s == nil:
		r.lose(errNotConnected)
	case broken != nil:
		r.lose(broken) // the reader may be telling it too
	}
	return func() { c.route.CompareAndSwap(r, nil) }
}

// routeReply offers a message to the route, if any; true if the sink took
// it. It runs on the reader goroutine.
func (c *Client) routeReply(msgID uint16, context uint32, data []byte) bool {
	r := c.route.Load()
	if r == nil || !r.covers(context) || !r.sink.TakeReply(msgID, context, data) {
		return false
	}
	r.took = true
	return true
}

// routeRead tells the route that the replies it took are all it gets
// until the reader reads again, when s's reader has no complete message
// left. It runs on the reader goroutine after every message.
func (c *Client) routeRead(s *session) {
	if r := c.route.Load(); r != nil && r.took && !s.fr.buffered() {
		r.took = false
		r.sink.RepliesRead()
	}
}

// routeLost tells the route, if any, that its connection ended.
func (c *Client) routeLost(err error) {
	if r := c.route.Load(); r != nil {
		if r.took {
			r.took = false
			r.sink.RepliesRead()
		}
		r.lose(err)
	}
}

// router is what an adapter that routes replies offers (Client does).
type router interface {
	RouteReplies(lo, hi uint32, sink ReplySink) (stop func())
}

// RouteOn routes replies on adapter a if a routes them (a Client, or a
// Wrapper of one), and returns nil otherwise; Wrapper implements its
// RouteReplies with it.
func RouteOn(a adapter.VppAPI, lo, hi uint32, sink ReplySink) (stop func()) {
	if r, ok := a.(router); ok {
		return r.RouteReplies(lo, hi, sink)
	}
	return nil
}
