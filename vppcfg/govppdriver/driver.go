// Package govppdriver implements driverapi.Driver over go.fd.io/govpp v0.13.0
// and the VPP 25.10 binary API: items become nat44_ed, acl, cnat, interface
// and feature messages, dumps become items again, and govpp connection
// events become the layer's interface and reconnect events.
//
// Each item kind is one file (nat44_lb_mapping.go, acl.go, drop_route.go,
// …) that registers the kind's descriptor (kinds.go): the messages it
// sends, the capability of VPP it needs, how its ops become requests and
// how its dump becomes items. Apply and Dump look kinds up and know none;
// adding a kind is adding such a file.
//
// Every request goes through an api.Connection with a context deadline.
// Operations are pipelined on one stream (pipeline.go), so a cold sync does
// not pay one round trip per message. Each Add/Del pair of messages is built
// by one private addDel… function per kind (addDelDropRoute…), and VPP's error codes are
// branched explicitly: a delete that finds nothing is success, an add that
// finds the object is drift.
package govppdriver

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"
	"go.fd.io/govpp/adapter"
	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/memclnt"
	"go.fd.io/govpp/core"

	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
)

// Options configure a Driver. Zero values take the defaults noted.
type Options struct {
	// Logger receives the driver's logs; default logrus.StandardLogger().
	Logger logrus.FieldLogger
	// PipelineDepth is how many requests a window of a stream holds; two
	// windows are in flight at most (see pipe.run); default 256.
	PipelineDepth int
	// ReplyTimeout bounds the wait for one reply; default 10s.
	ReplyTimeout time.Duration
	// CallTimeout is the deadline put on calls whose context has none; default 30s.
	CallTimeout time.Duration
	// ReconnectAttempts and ReconnectInterval are govpp's reconnect loop
	// used by Connect; defaults 1000 and 1s (a VPP restart outlasts govpp's
	// default of 3 × 0.5s).
	ReconnectAttempts int
	ReconnectInterval time.Duration
}

func (o *Options) setDefaults() {
	if o.Logger == nil {
		o.Logger = logrus.StandardLogger()
	}
	if o.PipelineDepth <= 0 {
		o.PipelineDepth = 256
	}
	if o.ReplyTimeout <= 0 {
		o.ReplyTimeout = 10 * time.Second
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = 30 * time.Second
	}
	if o.ReconnectAttempts <= 0 {
		o.ReconnectAttempts = 1000
	}
	if o.ReconnectInterval <= 0 {
		o.ReconnectInterval = time.Second
	}
}

// Driver talks to one VPP through govpp. It implements driverapi.Driver.
type Driver struct {
	conn api.Connection
	opts Options
	log  logrus.FieldLogger

	events chan driverapi.Event
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// disconnect closes a connection the driver opened itself (Connect).
	disconnect func()
	// window is Connect's adapter when it writes a window of requests at
	// once; nil otherwise.
	window WindowWriter
	// adapter is Connect's adapter, and router the same when it routes
	// replies, for the pipes' lane (lane.go): laneFree while no pipe has
	// it; laneNext and laneCache belong to the pipe that has it.
	adapter   adapter.VppAPI
	router    ReplyRouter
	laneFree  atomic.Bool
	laneNext  uint32
	laneCache laneCache

	isConnected atomic.Bool
	// connection ends when the connection it stands for is reported lost;
	// calls are bound to it (withDeadline), so that requests in flight to
	// a VPP that died fail at once instead of after ReplyTimeout each.
	connection atomic.Pointer[connectionLife]
	// caps are the optional capabilities the connected VPP offers.
	caps atomic.Pointer[capabilities]

	mu      sync.Mutex
	stats   map[string]*driverapi.CallStat
	ifNames map[uint32]string
	watch   api.Watcher
}

// connectionLife is the lifetime of one connection to VPP.
type connectionLife struct {
	ctx  context.Context
	lost context.CancelFunc
	// unread is set on the connections after a lost one until a Dump has
	// read VPP through them (see errUnread).
	unread atomic.Bool
}

func newConnectionLife(parent context.Context) *connectionLife {
	ctx, lost := context.WithCancel(parent)
	return &connectionLife{ctx: ctx, lost: lost}
}

// connectionLost ends the current connection's life: its calls in flight
// return now; later calls belong to the next connection, which writes
// nothing before a Dump has read it.
func (d *Driver) connectionLost() {
	next := newConnectionLife(d.ctx)
	next.unread.Store(true)
	d.connection.Swap(next).lost()
}

// errUnread fails the ops of an Apply on a connection no Dump has read
// since the one before it was lost. What the layer believes VPP holds comes
// from the VPP of the lost connection, which may have restarted: a write
// now (a retry due before the layer has seen the connection events) would
// go to the new VPP on that belief, and the layer could report converged
// with most of its state missing. The layer resyncs on the drift.
var errUnread = fmt.Errorf("VPP not read since the connection to it was lost: %w (%w)", driverapi.ErrNotConnected, driverapi.ErrDrift)

var _ driverapi.Driver = (*Driver)(nil)

// New returns a driver over conn. events are govpp's connection events
// (from core.AsyncConnect); every Connected among them is passed on as a
// driverapi.EventConnected, after the driver has checked message compatibility
// and re-subscribed to interface events. With nil events conn must already
// be connected.
func New(conn api.Connection, events <-chan core.ConnectionEvent, opts Options) *Driver {
	opts.setDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	d := &Driver{
		conn:    conn,
		opts:    opts,
		log:     opts.Logger.WithField("component", "govppdriver"),
		events:  make(chan driverapi.Event, 1024),
		ctx:     ctx,
		cancel:  cancel,
		stats:   map[string]*driverapi.CallStat{},
		ifNames: map[uint32]string{},
	}
	d.caps.Store(&capabilities{err: fmt.Errorf("%w: %w", driverapi.ErrDrift, driverapi.ErrNotConnected)})
	d.connection.Store(newConnectionLife(ctx))
	d.laneFree.Store(true)
	d.laneNext = laneFirstContext
	d.wg.Add(1)
	go d.watchConnection(events)
	return d
}

// Connect connects to VPP through adapter a (for example vppsock.New(path),
// which writes a window at once (WindowWriter), or fakevpp.New()) and
// returns a driver over the connection. govpp reconnects by itself, with far
// more attempts than its default three (see Options), because a VPP restart
// takes longer.
func Connect(a adapter.VppAPI, opts Options) (*Driver, error) {
	opts.setDefaults()
	conn, events, err := core.AsyncConnect(a, opts.ReconnectAttempts, opts.ReconnectInterval)
	if err != nil {
		return nil, fmt.Errorf("connect to VPP: %w", err)
	}
	d := New(conn, events, opts)
	d.disconnect = conn.Disconnect
	d.window, _ = a.(WindowWriter)
	if r, ok := a.(ReplyRouter); ok {
		d.adapter, d.router = a, r
	}
	return d, nil
}

// WindowWriter is an adapter that holds the requests sent between Hold and
// Release and writes them together, in one system call where the socket
// takes them (vppsock.Client). The driver holds each window of a pipeline,
// so that VPP reads a window's requests in a few reads instead of one each.
// An adapter that wraps another keeps this by embedding vppsock.Wrapper.
type WindowWriter interface {
	// Hold starts holding requests; holds nest.
	Hold()
	// Release ends a hold; the last one writes what was held. An error
	// means the held requests may have gone out in part.
	Release() error
}

// Close stops the driver's goroutines and closes a connection opened by Connect.
func (d *Driver) Close() {
	d.cancel()
	if d.disconnect != nil {
		d.disconnect()
	}
	d.wg.Wait()
}

// Events implements driverapi.Driver.
func (d *Driver) Events() <-chan driverapi.Event { return d.events }

// CallStats implements driverapi.Driver.
func (d *Driver) CallStats() []driverapi.CallStat {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]driverapi.CallStat, 0, len(d.stats))
	for _, s := range d.stats {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Msg < out[j].Msg })
	return out
}

func (d *Driver) count(msg string, failed bool) {
	d.mu.Lock()
	s := d.stats[msg]
	if s == nil {
		s = &driverapi.CallStat{Msg: msg}
		d.stats[msg] = s
	}
	s.Calls++
	if failed {
		s.Failures++
	}
	d.mu.Unlock()
}

// withDeadline puts CallTimeout on a context that has no deadline, and
// ends it when the current connection is reported lost: a reply that a
// dead VPP will never send is not waited for (a VPP killed in the middle
// of a cold sync cost ReplyTimeout, 10 s, before the layer re-read VPP).
func (d *Driver) withDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	var cancel context.CancelFunc
	if _, ok := ctx.Deadline(); ok {
		ctx, cancel = context.WithCancel(ctx)
	} else {
		ctx, cancel = context.WithTimeout(ctx, d.opts.CallTimeout)
	}
	stop := context.AfterFunc(d.connection.Load().ctx, cancel)
	return ctx, func() {
		stop()
		cancel()
	}
}

// Apply implements driverapi.Driver: it turns each op into its requests and
// sends all of them through one pipeline.
func (d *Driver) Apply(ctx context.Context, ops []driverapi.Op) []driverapi.OpResult {
	if d.connection.Load().unread.Load() {
		return failOps(ops, errUnread)
	}
	ctx, cancel := d.withDeadline(ctx)
	defer cancel()
	p := d.newPipe(ctx)
	defer p.close()
	return d.applyOn(p, ops)
}

// ApplyStream implements driverapi.Streamer: the chunks go through one
// pipe, bound to the connection of the call's start (withDeadline), so
// that once that connection is lost no later chunk reaches a VPP govpp may
// have reconnected to meanwhile.
func (d *Driver) ApplyStream(ctx context.Context, chunks <-chan []driverapi.Op, results chan<- []driverapi.OpResult) {
	if d.connection.Load().unread.Load() {
		for ops := range chunks {
			results <- failOps(ops, errUnread)
		}
		return
	}
	ctx, cancel := d.withDeadline(ctx)
	defer cancel()
	p := d.newPipe(ctx)
	defer p.close()
	for ops := range chunks {
		results <- d.applyOn(p, ops)
	}
}

// failOps is a result for each op, each failed with err.
func failOps(ops []driverapi.Op, err error) []driverapi.OpResult {
	res := make([]driverapi.OpResult, len(ops))
	for i := range res {
		res[i].Err = fmt.Errorf("%s: %w", ops[i], err)
	}
	return res
}

// applyOn turns each op into its requests, sends them on p and returns one
// result per op.
func (d *Driver) applyOn(p *pipe, ops []driverapi.Op) []driverapi.OpResult {
	res := make([]driverapi.OpResult, len(ops))
	caps := d.caps.Load()
	all := make([]*call, 0, len(ops)) // most ops are one call
	for i := range ops {
		calls, err := d.buildOp(caps, &ops[i], &res[i])
		if err != nil {
			res[i].Err = err
			continue
		}
		for _, c := range calls {
			c.op = i
		}
		all = append(all, calls...)
	}
	p.run(all)
	for _, c := range all {
		if c.err != nil && res[c.op].Err == nil {
			res[c.op].Err = fmt.Errorf("%s: %w", ops[c.op], c.err)
		}
	}
	return res
}

var _ driverapi.Streamer = (*Driver)(nil)

// buildOp returns the requests of one op, built by the descriptor of the
// op's kind; their done callbacks write the handle VPP returns into res.
func (d *Driver) buildOp(caps *capabilities, op *driverapi.Op, res *driverapi.OpResult) ([]*call, error) {
	if caps.err != nil {
		return nil, caps.err
	}
	kd := driverOf(op)
	if kd == nil {
		return nil, unsupportedItem(op)
	}
	if !caps.has(kd.needs) {
		return nil, fmt.Errorf("%s: %s: %w", op, kd.needs, driverapi.ErrUnsupported)
	}
	return kd.ops.build(op, res)
}

// watchConnection turns govpp connection events into layer events.
func (d *Driver) watchConnection(events <-chan core.ConnectionEvent) {
	defer d.wg.Done()
	if events == nil {
		d.onConnected()
		<-d.ctx.Done()
		d.stopInterfaceEvents()
		return
	}
	for {
		select {
		case <-d.ctx.Done():
			d.stopInterfaceEvents()
			return
		case ev, ok := <-events:
			if !ok {
				return
			}
			switch ev.State {
			case core.Connected:
				d.onConnected()
			case core.Disconnected, core.NotResponding:
				d.isConnected.Store(false)
				d.connectionLost()
				d.stopInterfaceEvents()
				d.log.WithError(ev.Error).WithField("state", ev.State.String()).Warn("VPP connection lost")
				d.emit(driverapi.Event{Type: driverapi.EventDisconnected})
			case core.Failed:
				d.isConnected.Store(false)
				d.connectionLost()
				d.log.WithError(ev.Error).Error("reconnecting to VPP failed for good; a new connection is needed")
				d.emit(driverapi.Event{Type: driverapi.EventDisconnected})
			}
		}
	}
}

// onConnected runs on every (re)connection: VPP may be a new process with
// other message IDs, interfaces and no event subscription.
func (d *Driver) onConnected() {
	caps := d.checkCompatibility()
	d.caps.Store(caps)
	d.isConnected.Store(true)
	if caps.err != nil {
		d.log.WithError(caps.err).Error("VPP is not compatible with this driver")
	} else {
		d.startInterfaceEvents()
	}
	pid := d.vppProcessID()
	d.log.WithField("vpp_pid", pid).Info("connected to VPP")
	d.emit(driverapi.Event{Type: driverapi.EventConnected, VPPPID: pid})
}

// vppProcessID asks VPP for its process ID (0 if it does not answer); see
// driverapi.Event.VPPPID.
func (d *Driver) vppProcessID() uint32 {
	ctx, cancel := d.withDeadline(d.ctx)
	defer cancel()
	reply := &memclnt.ControlPingReply{}
	if err := d.conn.Invoke(ctx, &memclnt.ControlPing{}, reply); err != nil || reply.Retval != 0 {
		d.log.WithError(err).Warn("control ping failed: VPP's process ID is unknown")
		return 0
	}
	return reply.VpePID
}

// emit delivers an event; connection events wait for room, interface events
// are dropped when nobody reads (the reconciler also polls interfaces).
func (d *Driver) emit(ev driverapi.Event) {
	if ev.Type == driverapi.EventInterfaceAdded || ev.Type == driverapi.EventInterfaceDeleted {
		select {
		case d.events <- ev:
		default:
			d.log.WithField("event", ev.Type.String()).Warn("event queue full; dropping interface event")
		}
		return
	}
	select {
	case d.events <- ev:
	case <-d.ctx.Done():
	}
}
