package govppdriver

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/memclnt"
	"go.fd.io/govpp/core"
)

// exchange is one request and the replies it brings: details (any number,
// or none) ended by one reply. A dump's details have no reply of their own,
// so a control ping sent after the dump ends it; a request with a reply of
// its own (a plain call, a get with a cursor) is ended by that reply.
type exchange struct {
	req api.Message
	// details is a message of the details' type, or nil if the request
	// brings none. On a lane every detail is decoded into it in turn.
	details api.Message
	// each is called with every detail, which is valid only until it
	// returns.
	each func(detail api.Message)
	// reply receives the reply that ends the exchange; nil: the request is
	// a dump, which a control ping ends.
	reply api.Message
}

// exchange runs x by lane when the adapter routes replies and no pipe has
// the lane, by govpp's stream otherwise; a reply's retval other than 0 is
// the error. A dump's replies on a lane never pass through govpp's core,
// which reads its table of message IDs for each of them and races its own
// rewrite of that table when it reconnects (docs/reliability.md, "govpp's
// reconnect race").
func (d *Driver) exchange(ctx context.Context, x *exchange) error {
	var err error
	if l := d.openLaneFor(x); l != nil {
		err = l.exchange(ctx, x)
		l.close()
	} else {
		err = d.exchangeByStream(ctx, x)
	}
	d.count(x.req.GetMessageName(), err != nil)
	return err
}

// openLaneFor opens a lane for x if every reply x brings can go by lane:
// the adapters route by the context where a reply's header has it, and a
// few replies have a request's header, with the client index before the
// context (feature_is_enabled_reply in VPP 25.10's feature.api).
func (d *Driver) openLaneFor(x *exchange) *lane {
	for _, m := range []api.Message{x.details, x.reply} {
		if m != nil && m.GetMessageType() != api.ReplyMessage {
			return nil
		}
	}
	return d.openLane()
}

// invoke sends one request and waits for its reply (dumps' companions,
// probes, subscriptions).
func (d *Driver) invoke(ctx context.Context, req, reply api.Message) error {
	return d.exchange(ctx, &exchange{req: req, reply: reply})
}

// exchange runs x on the lane. Its wait for each read of replies is bounded
// by the driver's reply timeout, as a pipe's.
func (l *lane) exchange(ctx context.Context, x *exchange) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var watchdog replyWatchdog
	watchdog.start(l.d.opts.ReplyTimeout, cancel)
	defer watchdog.stop()

	end := x.reply
	if end == nil {
		end = &memclnt.ControlPingReply{}
	}
	endID, err := l.id(end)
	if err != nil {
		return err
	}
	l.await(endID)
	detailsID := uint16(0)
	if x.details != nil {
		if detailsID, err = l.id(x.details); err != nil {
			return err
		}
		l.await(detailsID)
	}
	reqCtx, err := l.sendMsg(x.req)
	if err != nil {
		return err
	}
	endCtx := reqCtx
	if x.reply == nil {
		if endCtx, err = l.sendMsg(&memclnt.ControlPing{}); err != nil {
			return err
		}
	}
	for {
		for l.pos == len(l.cur.list) {
			watchdog.arm()
			if err := l.take(ctx, 1); err != nil {
				if cause := context.Cause(ctx); errors.Is(cause, core.ErrReplyTimeout) {
					return cause
				}
				return err
			}
		}
		r, data := l.next()
		switch {
		case x.details != nil && r.id == detailsID && r.ctx == reqCtx:
			if err := decode(data, x.details); err != nil {
				return err
			}
			x.each(x.details)
		case r.id == endID && r.ctx == endCtx:
			if err := decode(data, end); err != nil {
				return err
			}
			return api.RetvalToVPPApiError(retval(end))
		default:
			return fmt.Errorf("got message %d with context %d in reply to %s with context %d", r.id, r.ctx, x.req.GetMessageName(), reqCtx)
		}
	}
}

// exchangeByStream runs x on a govpp stream of its own, each reply awaited
// for at most the driver's reply timeout (govpp's streams wait for good by
// default).
func (d *Driver) exchangeByStream(ctx context.Context, x *exchange) error {
	var opts []api.StreamOption
	if _, ok := d.conn.(*core.Connection); ok {
		opts = append(opts, core.WithReplyTimeout(d.opts.ReplyTimeout))
	}
	s, err := d.conn.NewStream(ctx, opts...)
	if err != nil {
		return err
	}
	// Closed on every way out: left open, the replies still coming would
	// wait on it (see ReplyHandoverTimeout).
	defer s.Close()
	if err := s.SendMsg(x.req); err != nil {
		return err
	}
	if x.reply == nil {
		if err := s.SendMsg(&memclnt.ControlPing{}); err != nil {
			return err
		}
	}
	for {
		m, err := s.RecvMsg()
		if err != nil {
			return err
		}
		t := reflect.TypeOf(m)
		switch {
		case x.details != nil && t == reflect.TypeOf(x.details):
			x.each(m)
		case x.reply == nil && t == reflect.TypeFor[*memclnt.ControlPingReply]():
			return api.RetvalToVPPApiError(retval(m))
		case x.reply != nil && t == reflect.TypeOf(x.reply):
			reflect.ValueOf(x.reply).Elem().Set(reflect.ValueOf(m).Elem())
			return api.RetvalToVPPApiError(retval(m))
		default:
			return fmt.Errorf("got %s in reply to %s", m.GetMessageName(), x.req.GetMessageName())
		}
	}
}
