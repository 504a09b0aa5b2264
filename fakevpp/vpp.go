package fakevpp

import (
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"go.fd.io/govpp/adapter"
	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/memclnt"
)

// VPP is an in-memory VPP 25.10. It implements adapter.VppAPI for one client
// connection (NewAdapter opens more), keeps the plugins' tables, and traces
// packets through them. All methods are safe for concurrent use.
type VPP struct {
	mu sync.Mutex

	seed   uint32 // NAT44-ED's random seed when VPP starts (WithSeed)
	natRNG lcg    // snat_main.random_seed as it walks
	pid    uint32
	uptime time.Duration // the fake clock: time since VPP (re)started

	def        *client
	clients    []*client // every adapter handed out, connected or not
	nextClient uint32
	booted     bool // a client connected: later interfaces are API-created

	ifaces      pool[iface]
	ifaceByName map[string]uint32
	routes      map[netip.Prefix]*route

	state []any // plugin state by index in pipeline().plugins (stateKey)

	call       call          // the request being served (dispatch)
	reqs       []api.Message // one request message per ID (decodeRequest)
	faults     faults
	calls      []int // requests received by message ID (Calls)
	violations []Violation
	seenViol   map[Violation]bool
}

// Option configures New.
type Option func(*VPP)

// WithSeed sets the starting value of NAT44-ED's random seed, from which
// it draws LB backends and ports. VPP never initialises it, so a real VPP
// starts at 0, the default.
func WithSeed(seed int64) Option {
	return func(v *VPP) { v.seed = uint32(seed) }
}

// WithPID sets the VPP process ID reported in ControlPingReply.VpePID. Restart
// changes it.
func WithPID(pid uint32) Option {
	return func(v *VPP) { v.pid = pid }
}

// New returns a VPP that has just booted: only local0 exists and no plugin is
// configured.
func New(opts ...Option) *VPP {
	v := &VPP{pid: 4242, calls: make([]int, len(messages().byID)), reqs: make([]api.Message, len(messages().byID)), seenViol: map[Violation]bool{}}
	for _, o := range opts {
		o(v)
	}
	v.def = v.newClient()
	v.resetTables()
	return v
}

// resetTables gives VPP its boot-time state: local0, table 0, empty plugins.
func (v *VPP) resetTables() {
	v.ifaces = pool[iface]{}
	v.ifaceByName = map[string]uint32{}
	v.routes = map[netip.Prefix]*route{}
	v.uptime = 0
	v.natRNG = lcg(v.seed)
	v.state = make([]any, len(pipeline().plugins))
	for i, p := range pipeline().plugins {
		if p.newState != nil {
			v.state[i] = p.newState(v)
		}
	}
	v.createInterface(localIfName, nil, false)
}

// now returns the fake clock.
func (v *VPP) now() time.Duration { return v.uptime }

// clockEpoch is the wall-clock time the fake VPP "started", for plugins that
// keep time.Time timestamps.
var clockEpoch = time.Date(2025, 10, 27, 0, 0, 0, 0, time.UTC)

// clock returns the fake clock as a time.Time.
func (v *VPP) clock() time.Time { return clockEpoch.Add(v.uptime) }

// Uptime returns the fake clock: the time since New or Restart, as moved by
// Advance.
func (v *VPP) Uptime() time.Duration {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.uptime
}

// Advance moves the fake clock forward: NAT and ACL session timeouts and
// affinity countdowns are evaluated against it. NAT44-ED and ACL sessions
// are reclaimed lazily, as in VPP; plugins with a background scanner in VPP
// run it once here.
func (v *VPP) Advance(d time.Duration) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.uptime += d
	for _, p := range pipeline().plugins {
		if p.clockAdvanced != nil {
			p.clockAdvanced(v)
		}
	}
}

// Calls returns how many requests of each message (by VPP name, for example
// "nat44_add_del_static_mapping_v2") were received since New or ResetCalls,
// failed ones included. Control pings are not counted: govpp sends them on its
// own, for health checks and to end every dump.
func (v *VPP) Calls() map[string]int {
	v.mu.Lock()
	defer v.mu.Unlock()
	m := map[string]int{}
	t := messages()
	for id, n := range v.calls {
		if n > 0 {
			m[t.byID[id].name] = n
		}
	}
	return m
}

// ResetCalls clears the counters of Calls.
func (v *VPP) ResetCalls() {
	v.mu.Lock()
	defer v.mu.Unlock()
	clear(v.calls)
}

// lcg is vppinfra's random_u32 (random.h): seed = 1664525·seed +
// 1013904223 mod 2³². Its low bits have short periods (the lowest
// alternates), which NAT44-ED's draws inherit.
type lcg uint32

func (s *lcg) next() uint32 {
	*s = lcg(1664525*uint32(*s) + 1013904223)
	return uint32(*s)
}

// random32 is NAT44-ED's random_u32(&snat_main.random_seed): the LB
// backend draw (snat_static_mapping_match, nat44_ed.c).
func (v *VPP) random32() uint32 { return v.natRNG.next() }

// edPortsPerThread is snat_main.port_per_thread with one thread: the ports
// from ED_USER_PORT_OFFSET (1024) up.
const edPortsPerThread = 65536 - 1024

// randomPort is 1024 + snat_random_port(0, port_per_thread-1)
// (nat44_ed_inlines.h): the low 16 bits of a draw when they fall in the
// range, else the draw modulo its size. It draws from the same seed as the
// LB choice, so a session that needs a port shifts the next LB draw.
func (v *VPP) randomPort() uint16 {
	w := v.natRNG.next()
	if r := w & 0xffff; r <= edPortsPerThread-1 {
		return uint16(1024 + r)
	}
	return uint16(1024 + w%edPortsPerThread)
}

// dispatch serves one decoded request (id is its message ID) and returns
// what VPP sends back.
func (v *VPP) dispatch(c *client, id uint16, req api.Message) []api.Message {
	t := messages()
	info := &t.byID[id]
	cl := &v.call
	*cl = call{v: v, client: c}
	name := info.name
	if name == (*memclnt.ControlPing)(nil).GetMessageName() {
		return cl.reply(&memclnt.ControlPingReply{ClientIndex: c.index, VpePID: v.pid})
	}
	v.calls[id]++
	if !info.dump {
		if retval, ok := v.faults.take(name); ok {
			if r := t.newReply(info); r != nil {
				setRetval(r, retval)
				return cl.reply(r)
			}
		}
	}
	h := pipeline().byID[id]
	if h == nil {
		v.violate("unmodelled message", fmt.Sprintf("%s is a VPP 25.10 message the fake does not serve; answered with retval %d (UNIMPLEMENTED)", name, int32(api.UNIMPLEMENTED)))
		if r := t.newReply(info); r != nil && !info.dump {
			setRetval(r, int32(api.UNIMPLEMENTED))
			return cl.reply(r)
		}
		return nil
	}
	return h(cl, req)
}

// client is one API connection. VPP answers it in order through an outbox
// drained by a goroutine, as the socket reader of govpp's real adapter does:
// replies must not be delivered inside SendMsg, or a dump longer than govpp's
// reply buffer would stall.
type client struct {
	v         *VPP
	cb        adapter.MsgCallback
	index     uint32
	connected bool
	broken    bool // VPP restarted under this connection
	out       *outbox
	// replyRoute takes the replies of a range of contexts instead of cb (see
	// RouteReplies); the outbox reads it.
	replyRoute atomic.Pointer[replyRoute]

	wantIfEvents bool
	eventPID     uint32
}

func (v *VPP) newClient() *client {
	c := &client{v: v}
	v.clients = append(v.clients, c)
	return c
}

// NewAdapter returns an additional client connection to the same VPP (a CLI
// next to the agent, for example). v itself is the first one.
func (v *VPP) NewAdapter() adapter.VppAPI {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.newClient()
}

var _ adapter.VppAPI = (*VPP)(nil)
var _ adapter.VppAPI = (*client)(nil)

// Connect implements adapter.VppAPI.
func (v *VPP) Connect() error { return v.def.Connect() }

// Disconnect implements adapter.VppAPI.
func (v *VPP) Disconnect() error { return v.def.Disconnect() }

// GetMsgID implements adapter.VppAPI: every message of VPP 25.10 (govpp
// v0.13.0 bindings) has an ID, served or not.
func (v *VPP) GetMsgID(msgName, msgCrc string) (uint16, error) {
	return messages().lookup(msgName, msgCrc)
}

// SendMsg implements adapter.VppAPI.
func (v *VPP) SendMsg(context uint32, data []byte) error { return v.def.SendMsg(context, data) }

// SetMsgCallback implements adapter.VppAPI.
func (v *VPP) SetMsgCallback(cb adapter.MsgCallback) { v.def.SetMsgCallback(cb) }

// WaitReady implements adapter.VppAPI; the fake is always ready.
func (v *VPP) WaitReady() error { return nil }

// Connect implements adapter.VppAPI. The first connection ends VPP's "boot":
// interfaces created before it are startup interfaces (see Restart).
func (c *client) Connect() error {
	v := c.v
	v.mu.Lock()
	defer v.mu.Unlock()
	if c.cb == nil {
		return errors.New("fakevpp: Connect before SetMsgCallback")
	}
	if c.out != nil {
		c.out.close()
	}
	v.nextClient++
	c.index = v.nextClient
	c.connected, c.broken = true, false
	c.wantIfEvents = false
	c.out = newOutbox(c.cb, &c.replyRoute)
	v.booted = true
	return nil
}

// Disconnect implements adapter.VppAPI. VPP's reaper drops the client's event
// registrations.
func (c *client) Disconnect() error {
	v := c.v
	v.mu.Lock()
	defer v.mu.Unlock()
	if c.out != nil {
		c.out.close()
		c.out = nil
	}
	c.connected, c.broken, c.wantIfEvents = false, false, false
	return nil
}

// GetMsgID implements adapter.VppAPI.
func (c *client) GetMsgID(msgName, msgCrc string) (uint16, error) {
	return messages().lookup(msgName, msgCrc)
}

// SetMsgCallback implements adapter.VppAPI.
func (c *client) SetMsgCallback(cb adapter.MsgCallback) {
	c.v.mu.Lock()
	defer c.v.mu.Unlock()
	c.cb = cb
}

// WaitReady implements adapter.VppAPI.
func (c *client) WaitReady() error { return nil }

// errRestarted is what a connection sees after Restart, like a socket reset.
var errRestarted = errors.New("fakevpp: connection reset: VPP restarted")

// SendMsg implements adapter.VppAPI: the request is served at once, in the
// order received, and the answers are queued for delivery.
func (c *client) SendMsg(context uint32, data []byte) error {
	v := c.v
	v.mu.Lock()
	defer v.mu.Unlock()
	switch {
	case c.broken:
		return errRestarted
	case !c.connected:
		return errors.New("fakevpp: not connected")
	}
	t := messages()
	info, req, err := t.decodeRequest(data, v.reqs)
	if err != nil {
		v.violate("undecodable request", err.Error())
		return err
	}
	replies := v.dispatch(c, info.id, req)
	if v.faults.lost {
		v.faults.lost = false
		c.breakConnection()
		return nil
	}
	for _, m := range replies {
		if err := c.out.push(t, m, context, c.index); err != nil {
			v.violate("unencodable reply", err.Error())
		}
	}
	return nil
}

// sendEvent queues an event to every connected client for which sel returns
// a message.
func (v *VPP) sendEvent(sel func(c *client) api.Message) {
	t := messages()
	for _, c := range v.clients {
		if !c.connected || c.broken {
			continue
		}
		m := sel(c)
		if m == nil {
			continue
		}
		if err := c.out.push(t, m, 0, c.index); err != nil {
			v.violate("unencodable event", err.Error())
		}
	}
}

// outbox delivers frames to govpp's callback in order from its own goroutine.
// Frames are encoded one after the other into the queue's buffer; the reader
// takes the whole queue at once, delivers it, and hands its buffers back for
// the next frames, so a steady flow of answers allocates nothing. A callback
// must not keep the data it is given once it returns: govpp's socket adapter
// reads every message into one buffer too, and govpp's core copies it.
type outbox struct {
	route *atomic.Pointer[replyRoute] // the client's
	mu    sync.Mutex
	cond  *sync.Cond
	queue frames // encoded, not yet taken by the reader
	spare frames // delivered, for the next queue
	// closed is set under mu; the reader also reads it between the frames
	// it took, as a closed connection delivers nothing more.
	closed atomic.Bool
}

// frames are encoded messages back to back in buf.
type frames struct {
	buf  []byte
	list []frame
}

// frame is one message of frames: its ID and where its bytes end in buf.
type frame struct {
	id  uint16
	end int
}

// maxSpareFrames bounds the buffer the reader keeps for reuse: one long
// dump does not pin its size for the connection's life.
const maxSpareFrames = 1 << 20

func newOutbox(cb adapter.MsgCallback, r *atomic.Pointer[replyRoute]) *outbox {
	o := &outbox{route: r}
	o.cond = sync.NewCond(&o.mu)
	go o.run(cb)
	return o
}

// push encodes m onto the queue (see msgTable.appendFrame).
func (o *outbox) push(t *msgTable, m api.Message, context, clientIndex uint32) error {
	o.mu.Lock()
	id, buf, err := t.appendFrame(o.queue.buf, m, context, clientIndex)
	o.queue.buf = buf
	if err == nil {
		o.queue.list = append(o.queue.list, frame{id, len(buf)})
	}
	o.mu.Unlock()
	if err == nil {
		o.cond.Signal()
	}
	return err
}

func (o *outbox) close() {
	o.mu.Lock()
	o.closed.Store(true)
	o.queue, o.spare = frames{}, frames{}
	o.mu.Unlock()
	o.cond.Signal()
	if r := o.route.Load(); r != nil {
		r.lose()
	}
}

func (o *outbox) run(cb adapter.MsgCallback) {
	for {
		o.mu.Lock()
		for len(o.queue.list) == 0 && !o.closed.Load() {
			o.cond.Wait()
		}
		if o.closed.Load() {
			o.mu.Unlock()
			return
		}
		batch := o.queue
		o.queue, o.spare = o.spare, frames{}
		o.mu.Unlock()
		start := 0
		r := o.route.Load()
		took := false
		for _, f := range batch.list {
			if o.closed.Load() {
				return
			}
			data := batch.buf[start:f.end:f.end]
			if r.take(f.id, data) {
				took = true
			} else {
				cb(f.id, data)
			}
			start = f.end
		}
		if took {
			r.sink.RepliesRead()
		}
		if cap(batch.buf) > maxSpareFrames {
			continue
		}
		o.mu.Lock()
		if !o.closed.Load() {
			o.spare = frames{buf: batch.buf[:0], list: batch.list[:0]}
		}
		o.mu.Unlock()
	}
}
