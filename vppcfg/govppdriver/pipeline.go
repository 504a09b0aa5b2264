package govppdriver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"slices"
	"sync"
	"syscall"
	"time"

	"go.fd.io/govpp/api"
	"go.fd.io/govpp/core"

	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
)

// call is one request of a pipeline with what to do with its reply.
type call struct {
	req api.Message
	// reply is a prototype of the expected reply type; a reply of any other
	// type means the stream lost its order. It is only read, and may be
	// shared by every call of its message.
	reply api.Message
	// check turns the reply's retval into the call's error: nil for
	// success, and for the VPP errors that mean the desired state holds
	// (NO_SUCH_ENTRY on a delete). vppErr is nil for retval 0. A call of a
	// cold sync's kinds has lazy instead (see verdict).
	check func(vppErr error) error
	lazy  lazyCheck
	// done receives the reply of a successful call (to read a handle).
	done func(reply api.Message)
	// op is the index of the op this call belongs to.
	op  int
	err error
	// ctx and replyID are the request's context and its reply's message
	// ID on a lane (lane.go).
	ctx     uint32
	replyID uint16
}

// verdict is the call's error for the reply's VPP error: check's, or the
// lazy check's, made only when VPP reports an error.
func (c *call) verdict(vppErr error) error {
	if c.check != nil {
		return c.check(vppErr)
	}
	if vppErr == nil {
		return nil
	}
	l := c.lazy
	return l.build(l.isAdd, l.describe(l.isAdd, l.subject))(vppErr)
}

// lazyCheck is the check of a per-item call of a cold sync, made only when
// the call fails: the call holds its ingredients, not a closure over them
// (an allocation a call) nor the description they format (five).
type lazyCheck struct {
	isAdd bool
	// subject is the op's item, which describe names.
	subject  any
	describe func(isAdd bool, subject any) string
	// build makes the check from the description.
	build func(isAdd bool, what string) func(error) error
}

// pipe is the API stream of one Apply or ApplyStream call: opened by the
// first request, closed by the call. Once the stream has lost its order or
// the connection broke, every later request of the call fails with that
// error unsent.
type pipe struct {
	d      *Driver
	ctx    context.Context
	t      transport // nil until the first request
	broken error
	// streamCtx is the stream's context, which the watchdog ends when a
	// reply takes longer than Options.ReplyTimeout (see replyWatchdog).
	streamCtx    context.Context
	cancelStream context.CancelCauseFunc
	watchdog     replyWatchdog
	// windows are run's two lists of calls in flight, kept for the next run.
	windows [2][]*call
}

func (d *Driver) newPipe(ctx context.Context) *pipe { return &pipe{d: d, ctx: ctx} }

func (p *pipe) close() {
	if p.t != nil {
		p.watchdog.stop()
		p.t.close()
		p.cancelStream(nil)
	}
}

// transport carries a pipe's requests to VPP and their replies back, in
// order: the driver's lane past govpp's core when the adapter routes
// replies (lane.go), govpp's stream otherwise.
type transport interface {
	send(c *call) error
	// recv returns the reply to c, the oldest call sent and not answered,
	// or why there is none; a reply of another call is an error (the order
	// is lost). left calls, c the first, await a reply in this go (a hint:
	// they may come together). ctx ends the wait.
	recv(ctx context.Context, c *call, left int) (api.Message, error)
	close()
}

// govppStream is a transport on a govpp stream.
type govppStream struct{ s api.Stream }

func (g govppStream) send(c *call) error { return g.s.SendMsg(c.req) }

func (g govppStream) recv(_ context.Context, c *call, _ int) (api.Message, error) {
	msg, err := g.s.RecvMsg()
	if err == nil && reflect.TypeOf(msg) != reflect.TypeOf(c.reply) {
		err = fmt.Errorf("got %s instead of %s", msg.GetMessageName(), c.reply.GetMessageName())
	}
	return msg, err
}

func (g govppStream) close() { _ = g.s.Close() }

// replyWatchdog bounds the wait for each reply of a pipe's stream with one
// timer, re-armed for each reply, that ends the stream's context with
// govpp's ErrReplyTimeout. govpp's own reply timeout made a timer per reply
// (three allocations and a timer heap insert and delete a call).
type replyWatchdog struct {
	timer   *time.Timer
	timeout time.Duration
}

// start makes the watchdog of a stream whose context cancel ends.
func (w *replyWatchdog) start(timeout time.Duration, cancel context.CancelCauseFunc) {
	w.timeout = timeout
	w.timer = time.AfterFunc(timeout, func() { cancel(fmt.Errorf("%w %s", core.ErrReplyTimeout, timeout)) })
	w.timer.Stop()
}

// arm starts the wait for one reply.
func (w *replyWatchdog) arm() { w.timer.Reset(w.timeout) }

// stop ends the wait: no reply is awaited.
func (w *replyWatchdog) stop() {
	if w.timer != nil {
		w.timer.Stop()
	}
}

// recvErr is the error of a failed receive: the watchdog's, when it ended
// the stream.
func (p *pipe) recvErr(err error) error {
	if cause := context.Cause(p.streamCtx); errors.Is(cause, core.ErrReplyTimeout) {
		return cause
	}
	return err
}

// run sends independent requests on the pipe's stream without waiting for
// each reply. The requests go out in windows of depth: a window is written
// (at once, when the adapter holds a window: WindowWriter), then the
// replies of the window before it are read while VPP works on this one, so
// that VPP always has a window queued and never waits for the product's
// reading. VPP handles the messages of one client in order, so a cold sync
// of tens of thousands of objects costs len/depth round trips instead of
// len. Two windows bound govpp's reply buffer, which drops replies that do
// not fit (streamOptions). A transport error or an out-of-order reply fails
// the calls not yet answered, and those of later runs on the pipe, with
// driverapi.ErrDrift: the layer then re-reads VPP instead of guessing which
// of them VPP executed.
func (p *pipe) run(calls []*call) {
	if len(calls) == 0 {
		return
	}
	if p.broken != nil {
		failAll(calls, p.broken)
		return
	}
	if !p.open() {
		failAll(calls, p.broken)
		return
	}
	depth := p.d.opts.PipelineDepth
	// earlier holds the sent calls of the window before, whose replies are
	// read once the next window is out; now those of the window just sent.
	earlier, now := p.windows[0][:0], p.windows[1][:0]
	for start := 0; start < len(calls); start += depth {
		window := calls[start:min(start+depth, len(calls))]
		unsent := calls[start+len(window):]
		now = p.send(window, unsent, now[:0])
		if !p.receive(earlier, now, unsent) {
			return
		}
		earlier, now = now, earlier
		if p.broken != nil {
			break
		}
	}
	p.receive(earlier, nil, nil)
	p.windows[0], p.windows[1] = earlier[:0], now[:0]
}

// open opens the pipe's transport on its first use: a lane if the driver
// has one free, else a govpp stream; false (and p.broken) if govpp refused.
func (p *pipe) open() bool {
	if p.t != nil {
		return true
	}
	d := p.d
	sctx, cancel := context.WithCancelCause(p.ctx)
	if l := d.openLane(); l != nil {
		l.progress = p.watchdog.arm
		p.t = l
	} else {
		stream, err := d.conn.NewStream(sctx, d.streamOptions(d.opts.PipelineDepth)...)
		if err != nil {
			cancel(nil)
			p.broken = fmt.Errorf("open API stream: %w (%w)", err, driverapi.ErrDrift)
			return false
		}
		p.t = govppStream{stream}
	}
	p.streamCtx, p.cancelStream = sctx, cancel
	p.watchdog.start(d.opts.ReplyTimeout, cancel)
	return true
}

// send writes the requests of one window, appends those that went out to
// sent and returns it. A call that failed to go out has its error; once the
// connection is broken the window's rest and unsent fail unsent, and
// p.broken says why.
func (p *pipe) send(window, unsent []*call, sent []*call) []*call {
	d, ctx := p.d, p.ctx
	if w := d.window; w != nil {
		w.Hold()
	}
	for j, c := range window {
		if err := ctx.Err(); err != nil {
			// The connection this call began on is lost (withDeadline
			// binds ctx to it) or the call timed out: nothing more is
			// sent. govpp may already have reconnected to a restarted
			// VPP, which the resync of that connection fills; a request
			// sent now would be written twice.
			p.broken = fmt.Errorf("not sent: %w (%w)", err, driverapi.ErrDrift)
			failAll(window[j:], p.broken)
			failAll(unsent, p.broken)
			break
		}
		if err := p.t.send(c); err != nil {
			// Nothing reached VPP for this call. After an unknown message
			// or an encode error the others still go; once the socket is
			// broken (VPP died, before govpp's health check reports it)
			// every later send would fail the same way, so the rest of
			// the call is not tried.
			c.err = fmt.Errorf("send %s: %w (%w)", c.req.GetMessageName(), err, driverapi.ErrDrift)
			d.count(c.req.GetMessageName(), true)
			if connectionBroken(err) {
				p.broken = c.err
				failAll(window[j+1:], c.err)
				failAll(unsent, c.err)
				break
			}
			continue
		}
		sent = append(sent, c)
	}
	if w := d.window; w != nil {
		if err := w.Release(); err != nil {
			// The held window did not go out whole: which of its requests
			// VPP read is unknown. Their replies are not awaited.
			err = fmt.Errorf("send a window of %d requests: %w (%w)", len(sent), err, driverapi.ErrDrift)
			p.fail(sent, err)
			if p.broken == nil {
				p.broken = err
				failAll(unsent, err)
			}
			return sent[:0]
		}
	}
	return sent
}

// receive reads the replies of sent in order and gives each call its
// verdict. It returns false if the stream failed: then the calls of sent
// not answered and those of after (sent later, their replies not read)
// fail as drift, unsent fail unsent, and the pipe is broken.
func (p *pipe) receive(sent, after, unsent []*call) bool {
	d := p.d
	for i, c := range sent {
		p.watchdog.arm()
		msg, err := p.t.recv(p.streamCtx, c, len(sent)-i)
		if err != nil {
			err = p.recvErr(err)
			err = fmt.Errorf("reply to %s: %w (%w)", c.req.GetMessageName(), err, driverapi.ErrDrift)
			p.fail(sent[i:], err)
			p.fail(after, err)
			failAll(unsent, err)
			p.broken = err
			p.watchdog.stop()
			return false
		}
		c.err = c.verdict(api.RetvalToVPPApiError(retval(msg)))
		d.count(c.req.GetMessageName(), c.err != nil)
		if c.err == nil && c.done != nil {
			c.done(msg)
		}
	}
	p.watchdog.stop()
	return true
}

// fail gives calls that went out, whose replies will not be read, err, and
// counts them as failed.
func (p *pipe) fail(sent []*call, err error) {
	for _, c := range sent {
		c.err = err
		p.d.count(c.req.GetMessageName(), true)
	}
}

// connectionBroken tells a send error of the connection itself (govpp no
// longer connected, a closed or reset socket) from one of the message.
func connectionBroken(err error) bool {
	var opErr *net.OpError
	return errors.Is(err, core.ErrNotConnected) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) ||
		errors.As(err, &opErr)
}

func failAll(calls []*call, err error) {
	for _, c := range calls {
		if c.err == nil {
			c.err = err
		}
	}
}

// streamOptions sizes govpp's request and reply buffers to two windows and
// turns govpp's reply timeout off (the pipe's watchdog bounds each reply);
// the options exist only on govpp's own connection type.
func (d *Driver) streamOptions(depth int) []api.StreamOption {
	if _, ok := d.conn.(*core.Connection); !ok {
		return nil
	}
	return []api.StreamOption{
		core.WithRequestSize(2 * depth),
		core.WithReplySize(2*depth + 1),
		core.WithReplyTimeout(0),
	}
}

// invoke sends one request and waits for its reply (dumps' companions, probes).
func (d *Driver) invoke(ctx context.Context, req, reply api.Message) error {
	err := d.conn.Invoke(ctx, req, reply)
	if err == nil {
		err = api.RetvalToVPPApiError(retval(reply))
	}
	d.count(req.GetMessageName(), err != nil)
	return err
}

var retvalFields sync.Map // reflect.Type → field index or -1

// retval reads the Retval field every govpp reply message has.
func retval(msg api.Message) int32 {
	v := reflect.ValueOf(msg).Elem()
	idx, ok := retvalFields.Load(v.Type())
	if !ok {
		f, found := v.Type().FieldByName("Retval")
		i := -1
		if found && f.Type.Kind() == reflect.Int32 {
			i = f.Index[0]
		}
		retvalFields.Store(v.Type(), i)
		idx = i
	}
	if idx.(int) < 0 {
		return 0
	}
	return int32(v.Field(idx.(int)).Int())
}

// accept returns a check that treats the listed VPP errors as success and
// marks the usual drift errors (see markDrift).
func accept(what string, ok ...api.VPPApiError) func(error) error {
	return check(what, ok, nil)
}

// check returns a check that treats ok as success and, besides the usual
// ones, the errors in drift as drift.
func check(what string, ok, drift []api.VPPApiError) func(error) error {
	return func(err error) error {
		if err == nil {
			return nil
		}
		var ve api.VPPApiError
		if errors.As(err, &ve) {
			if slices.Contains(ok, ve) {
				return nil
			}
			if slices.Contains(drift, ve) {
				return fmt.Errorf("%s: %w (%w)", what, err, driverapi.ErrDrift)
			}
		}
		return fmt.Errorf("%s: %w", what, markDrift(err))
	}
}

// markDrift marks the errors that show VPP does not hold what the layer
// believes (an add that finds the object, an unknown interface, NAT44 found
// disabled, a bound ACL, a lost reply), so that the reconciler re-reads VPP
// instead of retrying blindly. UNIMPLEMENTED marks a plugin VPP lacks.
func markDrift(err error) error {
	var ve api.VPPApiError
	if !errors.As(err, &ve) {
		return fmt.Errorf("%w (%w)", err, driverapi.ErrDrift)
	}
	switch ve {
	case api.UNIMPLEMENTED:
		return fmt.Errorf("%w (%w)", err, driverapi.ErrUnsupported)
	case api.VALUE_EXIST, api.FEATURE_ALREADY_ENABLED, api.INVALID_SW_IF_INDEX,
		api.UNSUPPORTED, api.ACL_IN_USE_INBOUND, api.ACL_IN_USE_OUTBOUND:
		return fmt.Errorf("%w (%w)", err, driverapi.ErrDrift)
	}
	return err
}

// deleteTolerant treats NO_SUCH_ENTRY on a delete as success: the object
// is gone, which is what the delete wanted. On an add every error counts
// (VALUE_EXIST is drift, see markDrift).
func deleteTolerant(isAdd bool, what string) func(error) error {
	if isAdd {
		return accept(what)
	}
	return accept(what, api.NO_SUCH_ENTRY)
}

// deleteTolerantOf is deleteTolerant for the per-item calls of a cold
// sync: describe formats the call's description only when the call fails.
// Formatting it up front for every call cost five allocations a call, a
// third of the driver's own.
func deleteTolerantOf(isAdd bool, it any, describe func(isAdd bool, it any) string) lazyCheck {
	return lazyCheck{isAdd: isAdd, subject: it, describe: describe, build: deleteTolerant}
}

// acceptOf is accept for the per-item calls of a cold sync, formatting the
// description only when the call fails.
func acceptOf(isAdd bool, it any, describe func(isAdd bool, it any) string) lazyCheck {
	return lazyCheck{isAdd: isAdd, subject: it, describe: describe, build: acceptWhat}
}

func acceptWhat(_ bool, what string) func(error) error { return accept(what) }

// describeAs makes a lazyCheck's describe of a function that names items
// of type T.
func describeAs[T any](describe func(isAdd bool, it T) string) func(bool, any) string {
	return func(isAdd bool, it any) string { return describe(isAdd, it.(T)) }
}

// verb names an add or a delete in errors.
func verb(isAdd bool) string {
	if isAdd {
		return "add"
	}
	return "delete"
}
