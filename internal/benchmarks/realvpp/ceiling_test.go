package realvpp

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"go.fd.io/govpp/adapter"
	"go.fd.io/govpp/adapter/socketclient"
	"go.fd.io/govpp/api"
	"go.fd.io/govpp/codec"
	"go.fd.io/govpp/core"

	"github.com/vppsvc/vppsvc/dataplane"
	rv "github.com/vppsvc/vppsvc/realvpp"
	"github.com/vppsvc/vppsvc/vppsock"
)

// VPP's own ceiling: the writes of a cold sync, recorded off the product's
// connection as encoded messages, replayed into a freshly started VPP by a
// client that does nothing else. Two clients:
//
//   - stream: govpp's stream API (core.Connection.NewStream), the messages
//     decoded before the clock starts, one goroutine sending while another
//     reads the replies, at most depth requests unanswered. This is what the
//     product's driver could reach with no VPP layer, renderer or processor
//     above it: the product's calls/s against it is the factor the control
//     plane costs.
//   - wire: the recorded bytes written to VPP's API socket through govpp's
//     socket adapter alone (no encoding, no reply decoding beyond the
//     retval), the same window. The difference to stream is govpp's own cost.
//   - held: the recorded bytes through vppsock, each window of depth
//     requests written in one system call (Hold/Release), two windows in
//     flight: what VPP needs when it reads requests a window at a time, as
//     the product's driver sends them over vppsock.
//
// Both count a reply whose retval is not 0 as failed; a replay into a fresh
// VPP of the writes that built the same state must have none.

// recorder is a client connection to the node's VPP that keeps a copy of
// every state-changing request written through it. It sits inside the
// product's timed cold sync, so a write costs it a lookup in a table by ID
// and a copy into a shared arena under an uncontended lock, and nothing is
// allocated per write once reserve has made room. The clock is read when
// requests reach the socket: at the Release that writes a held window (one
// read for up to a window of requests, where a read a write took a share
// of the sending goroutine), or at once for a request sent outside a
// window.
type recorder struct {
	vppsock.Wrapper // passes the windows and routes on

	mu     sync.Mutex
	names  map[uint16]string // message ID → name_crc
	writes [1 << 16]bool     // message ID → state-changing
	arena  []byte            // the copies of msgs, back to back
	msgs   [][]byte
	// held is the depth of the windows held through the recorder; unsent
	// says a write recorded since has not reached the socket yet.
	held   int
	unsent bool
	// marked is the number of writes before the last mark; first and last
	// are when the first write after it and the last write reached the
	// socket.
	marked      int
	first, last time.Time
}

func newRecorder(a adapter.VppAPI) *recorder {
	return &recorder{Wrapper: vppsock.Wrapper{VppAPI: a}, names: map[uint16]string{}}
}

func (r *recorder) GetMsgID(msgName, msgCrc string) (uint16, error) {
	id, err := r.VppAPI.GetMsgID(msgName, msgCrc)
	if err == nil {
		// govpp asks for every request: the timed sync pays a lookup.
		r.mu.Lock()
		if _, known := r.names[id]; !known {
			r.names[id] = msgName + "_" + msgCrc
			r.writes[id] = !isReadOnly(msgName + "_" + msgCrc)
		}
		r.mu.Unlock()
	}
	return id, err
}

// reserve makes room for n more writes of about size bytes each.
func (r *recorder) reserve(n, size int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = slices.Grow(r.msgs, n)
	r.arena = slices.Grow(r.arena, n*size)
}

func (r *recorder) SendMsg(context uint32, data []byte) error {
	if err := r.VppAPI.SendMsg(context, data); err != nil {
		return err
	}
	if len(data) < 10 {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.writes[binary.BigEndian.Uint16(data)] {
		// A copy of its own: the caller reuses data. Earlier copies keep
		// the arena they were made in when it grows.
		start := len(r.arena)
		r.arena = append(r.arena, data...)
		r.msgs = append(r.msgs, r.arena[start:len(r.arena):len(r.arena)])
		r.unsent = true
		if r.held == 0 {
			r.sent(time.Now())
		}
	}
	return nil
}

// Hold holds a window on the wrapped adapter; the writes sent in it reach
// the socket at the Release that ends the outermost hold.
func (r *recorder) Hold() {
	r.mu.Lock()
	r.held++
	r.mu.Unlock()
	r.Wrapper.Hold()
}

// Release releases a window on the wrapped adapter.
func (r *recorder) Release() error {
	err := r.Wrapper.Release()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.held > 0 {
		r.held--
	}
	if r.held == 0 && r.unsent {
		r.sent(time.Now())
	}
	return err
}

// sent stamps the recorded writes that have just reached the socket.
// Called with mu held.
func (r *recorder) sent(at time.Time) {
	if r.first.IsZero() && len(r.msgs) > r.marked {
		r.first = at
	}
	r.last, r.unsent = at, false
}

// mark starts the sync: the writes after it are what split returns as
// the sync, the ones before as the setup.
func (r *recorder) mark() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.marked, r.first = len(r.msgs), time.Time{}
}

// recording is what a recorder kept: the writes before a mark (the
// agent's start) and after it (the cold sync), with the message names.
type recording struct {
	names       map[uint16]string
	setup, sync [][]byte
	// first and last are when the first and the last write after the
	// mark reached VPP's socket.
	first, last time.Time
}

// split returns the writes before and after the last mark.
func (r *recorder) split() recording {
	r.mu.Lock()
	defer r.mu.Unlock()
	names := make(map[uint16]string, len(r.names))
	for k, v := range r.names {
		names[k] = v
	}
	mark := r.marked
	rec := recording{names: names, setup: r.msgs[:mark:mark], sync: r.msgs[mark:]}
	if len(rec.sync) > 0 {
		rec.first, rec.last = r.first, r.last
	}
	return rec
}

// decode turns recorded requests into govpp messages.
func (rec recording) decode(b testing.TB, raw [][]byte) []api.Message {
	b.Helper()
	protos := map[string]api.Message{}
	for _, msgs := range api.GetRegisteredMessages() {
		for nameCRC, m := range msgs {
			protos[nameCRC] = m
		}
	}
	out := make([]api.Message, len(raw))
	for i, data := range raw {
		nameCRC := rec.names[binary.BigEndian.Uint16(data)]
		proto, ok := protos[nameCRC]
		if !ok {
			b.Fatalf("recorded message %q is not registered with govpp", nameCRC)
		}
		m := reflect.New(reflect.TypeOf(proto).Elem()).Interface().(api.Message)
		if err := codec.DefaultCodec.DecodeMsg(data, m); err != nil {
			b.Fatalf("decode %s: %v", nameCRC, err)
		}
		out[i] = m
	}
	return out
}

// ceilingDepths are the windows the ceiling is measured with; the best
// counts.
var ceilingDepths = []int{256, 1024}

// ceiling is VPP's own rate for a recording's cold-sync writes.
type ceiling struct {
	stream, wire, held            time.Duration // best replay time of each client
	streamDepth, wireDep, heldDep int
	heldCPU, heldVPP              time.Duration // the client's and VPP's CPU during the best held replay
}

// best is the fastest client's time: VPP's ceiling.
func (c ceiling) best() time.Duration { return min(c.stream, c.wire, c.held) }

// measureCeiling replays rec into a freshly restarted VPP once per client
// and depth (the node's topology and the agent's start-up writes first,
// untimed) and keeps each client's best time. It needs the restart
// command: a reset deletes tens of thousands of mappings one by one.
func measureCeiling(b *testing.B, n *rv.Node, rec recording) (c ceiling, ok bool) {
	b.Helper()
	if os.Getenv(dataplane.RestartEnv) == "" {
		b.Logf("no ceiling: it needs %s (a fresh VPP per replay)", dataplane.RestartEnv)
		return c, false
	}
	setup, sync := rec.decode(b, rec.setup), rec.decode(b, rec.sync)
	for _, depth := range ceilingDepths {
		freshNode(b, n)
		replayStream(b, n.Socket(), setup, 1)
		d := replayStream(b, n.Socket(), sync, depth)
		if c.stream == 0 || d < c.stream {
			c.stream, c.streamDepth = d, depth
		}
		freshNode(b, n)
		replayStream(b, n.Socket(), setup, 1)
		d, _ = replayWire(b, socketclient.NewVppClient(n.Socket()), rec.names, rec.sync, depth, false)
		if c.wire == 0 || d < c.wire {
			c.wire, c.wireDep = d, depth
		}
		freshNode(b, n)
		replayStream(b, n.Socket(), setup, 1)
		vpp0 := vppCPU(b, n)
		d, cpu := replayWire(b, vppsock.New(n.Socket()), rec.names, rec.sync, depth, true)
		if c.held == 0 || d < c.held {
			c.held, c.heldDep = d, depth
			c.heldCPU, c.heldVPP = cpu, vppCPU(b, n)-vpp0
		}
	}
	return c, true
}

// freshNode restarts VPP and builds the harness topology again.
func freshNode(b *testing.B, n *rv.Node) {
	b.Helper()
	if err := n.Restart(); err != nil {
		b.Fatal(err)
	}
}

// replayTimeout bounds one whole replay, replyTimeout the wait for one
// reply: a replay into a VPP that stopped answering fails instead of
// standing still.
const (
	replayTimeout = 10 * time.Minute
	replyTimeout  = time.Minute
)

// replayStream sends msgs on one govpp stream, at most depth unanswered,
// replies read by a second goroutine (replay), and returns the time from
// the first send to the last reply. A failed reply fails the benchmark; a
// lost one, a send error or the timeout ends it with that error.
func replayStream(b *testing.B, socket string, msgs []api.Message, depth int) time.Duration {
	b.Helper()
	conn, err := core.Connect(socketclient.NewVppClient(socket))
	if err != nil {
		b.Fatal(err)
	}
	disconnect := sync.OnceFunc(conn.Disconnect)
	defer disconnect()
	timed, cancelTimeout := context.WithTimeout(context.Background(), replayTimeout)
	defer cancelTimeout()
	ctx, cancel := context.WithCancelCause(timed)
	defer cancel(nil)
	// A send blocked in the socket (VPP no longer reading) ends when the
	// connection is closed under it.
	defer context.AfterFunc(timed, disconnect)()
	stream, err := conn.NewStream(ctx, core.WithRequestSize(depth), core.WithReplySize(depth+1), core.WithReplyTimeout(replyTimeout))
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = stream.Close() }()
	r, err := replay(ctx, cancel, stream, msgs, depth)
	if err != nil {
		b.Fatalf("replay of %d requests (depth %d): %v", len(msgs), depth, err)
	}
	if r.failed > 0 {
		b.Errorf("replay into a fresh VPP: %d of %d requests failed, the first %s", r.failed, len(msgs), r.first)
	}
	return r.took
}

// msgStream is what replay uses of a govpp stream (api.Stream).
type msgStream interface {
	SendMsg(api.Message) error
	RecvMsg() (api.Message, error)
}

// replayed is the outcome of a replay: its time, and the replies whose
// retval was not 0.
type replayed struct {
	took   time.Duration
	failed int
	first  string // the first failed reply
}

// replay sends msgs on s, at most depth unanswered, while a second
// goroutine reads the replies, and returns once every reply is read or
// with the first error of either side. s must have been opened with ctx,
// whose cancel it is: a reader that stops (a reply lost, unknown or late)
// cancels ctx, which ends the sender's wait for a slot, and a sender that
// fails cancels ctx, which ends the reader's RecvMsg. Either way the reader
// has returned when replay does.
func replay(ctx context.Context, cancel context.CancelCauseFunc, s msgStream, msgs []api.Message, depth int) (replayed, error) {
	var r replayed
	if len(msgs) == 0 {
		return r, nil
	}
	slots := make(chan struct{}, depth)
	start := time.Now()
	// The first request goes out before the reader starts: govpp's stream
	// resolves a reply by the package of the last message sent, which it
	// records only once the send has returned, and a reply read before that
	// is "unknown" (the reader stopping so left the sender blocked on its
	// slots for good on 2026-11-28).
	slots <- struct{}{}
	if err := s.SendMsg(msgs[0]); err != nil {
		return r, fmt.Errorf("send %s: %w", msgs[0].GetMessageName(), err)
	}
	read := make(chan error, 1)
	go func() {
		err := func() error {
			for i := range msgs {
				reply, err := s.RecvMsg()
				if err != nil {
					return fmt.Errorf("reply %d of %d: %w", i+1, len(msgs), err)
				}
				if v := retvalOf(reply); v != 0 {
					if r.failed == 0 {
						r.first = fmt.Sprintf("%s: %v", reply.GetMessageName(), api.RetvalToVPPApiError(v))
					}
					r.failed++
				}
				<-slots // never waits: each reply answers a request that took a slot
			}
			return nil
		}()
		if err != nil {
			cancel(err)
		}
		read <- err
	}()
	sendErr := func() error {
		for _, m := range msgs[1:] {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return context.Cause(ctx)
			}
			if err := s.SendMsg(m); err != nil {
				return fmt.Errorf("send %s: %w", m.GetMessageName(), err)
			}
		}
		return nil
	}()
	if sendErr != nil {
		cancel(sendErr)
	}
	readErr := <-read
	r.took = time.Since(start)
	if readErr != nil {
		return r, readErr
	}
	return r, sendErr
}

// retvalOf reads a reply's Retval field (0 for a reply without one).
func retvalOf(m api.Message) int32 {
	f := reflect.ValueOf(m).Elem().FieldByName("Retval")
	if !f.IsValid() || f.Kind() != reflect.Int32 {
		return 0
	}
	return int32(f.Int())
}

// replayWire writes the recorded requests to VPP's API socket through a
// socket adapter alone (message IDs mapped by name to the new VPP's) and
// returns the time from the first write to the last reply and the
// process's CPU in that time. Unheld, at most depth are unanswered; held,
// each window of depth goes out at once (vppsock's Hold/Release) once at
// most one window is unanswered. Every write of the recordings is answered
// by one reply whose retval follows the 6-byte header.
func replayWire(b *testing.B, c adapter.VppAPI, names map[uint16]string, raw [][]byte, depth int, held bool) (took, cpu time.Duration) {
	b.Helper()
	if err := c.Connect(); err != nil {
		b.Fatal(err)
	}
	disconnect := sync.OnceFunc(func() { _ = c.Disconnect() })
	defer disconnect()
	// A write blocked in the socket (VPP no longer reading) ends when the
	// connection is closed under it; each reply is waited for a minute.
	defer time.AfterFunc(replayTimeout, disconnect).Stop()
	bufs := remapped(b, c, names, raw)
	s := newWindowSender(b, c, depth, held)
	cpu0, start := processCPU(), time.Now()
	for _, buf := range bufs {
		s.send(buf)
	}
	s.finish()
	took, cpu = time.Since(start), processCPU()-cpu0
	if s.failed > 0 {
		b.Errorf("wire replay (held %v) into a fresh VPP: %d of %d requests failed", held, s.failed, len(bufs))
	}
	return took, cpu
}

// splitNameCRC splits "name_crc" at its last underscore.
func splitNameCRC(s string) (name, crc string) {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '_' {
			return s[:i], s[i+1:]
		}
	}
	return s, ""
}
