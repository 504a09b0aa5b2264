package realvpp

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"reflect"
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
//
// Both count a reply whose retval is not 0 as failed; a replay into a fresh
// VPP of the writes that built the same state must have none.

// recorder is a client connection to the node's VPP that keeps a copy of
// every state-changing request written through it.
type recorder struct {
	adapter.VppAPI

	mu    sync.Mutex
	names map[uint16]string // message ID → name_crc
	msgs  [][]byte
	at    []time.Time // when each of msgs was written
}

func newRecorder(a adapter.VppAPI) *recorder { return &recorder{VppAPI: a, names: map[uint16]string{}} }

func (r *recorder) GetMsgID(msgName, msgCrc string) (uint16, error) {
	id, err := r.VppAPI.GetMsgID(msgName, msgCrc)
	if err == nil {
		r.mu.Lock()
		r.names[id] = msgName + "_" + msgCrc
		r.mu.Unlock()
	}
	return id, err
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
	if name, ok := r.names[binary.BigEndian.Uint16(data)]; ok && !isReadOnly(name) {
		r.msgs = append(r.msgs, append([]byte(nil), data...))
		r.at = append(r.at, time.Now())
	}
	return nil
}

// mark is the number of writes recorded so far.
func (r *recorder) mark() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.msgs)
}

// recording is what a recorder kept: the writes before a mark (the
// agent's start) and after it (the cold sync), with the message names.
type recording struct {
	names       map[uint16]string
	setup, sync [][]byte
	// first and last are when the first and the last write after the
	// mark went out.
	first, last time.Time
}

func (r *recorder) split(mark int) recording {
	r.mu.Lock()
	defer r.mu.Unlock()
	names := make(map[uint16]string, len(r.names))
	for k, v := range r.names {
		names[k] = v
	}
	rec := recording{names: names, setup: r.msgs[:mark:mark], sync: r.msgs[mark:]}
	if len(rec.sync) > 0 {
		rec.first, rec.last = r.at[mark], r.at[len(r.at)-1]
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
	stream, wire         time.Duration // best replay time of each client
	streamDepth, wireDep int
}

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
		d = replayWire(b, n.Socket(), rec.names, rec.sync, depth)
		if c.wire == 0 || d < c.wire {
			c.wire, c.wireDep = d, depth
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

// replayStream sends msgs on one govpp stream, at most depth unanswered,
// replies read by a second goroutine, and returns the time from the first
// send to the last reply. A failed reply fails the benchmark.
func replayStream(b *testing.B, socket string, msgs []api.Message, depth int) time.Duration {
	b.Helper()
	conn, err := core.Connect(socketclient.NewVppClient(socket))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Disconnect()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	stream, err := conn.NewStream(ctx, core.WithRequestSize(depth), core.WithReplySize(depth+1), core.WithReplyTimeout(time.Minute))
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = stream.Close() }()
	slots := make(chan struct{}, depth)
	type result struct {
		failed int
		first  string
		err    error
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		var r result
		for range msgs {
			reply, err := stream.RecvMsg()
			if err != nil {
				r.err = err
				break
			}
			if v := retvalOf(reply); v != 0 {
				if r.failed == 0 {
					r.first = fmt.Sprintf("%s: %v", reply.GetMessageName(), api.RetvalToVPPApiError(v))
				}
				r.failed++
			}
			<-slots
		}
		done <- r
	}()
	for _, m := range msgs {
		slots <- struct{}{}
		if err := stream.SendMsg(m); err != nil {
			b.Fatalf("send %s: %v", m.GetMessageName(), err)
		}
	}
	r := <-done
	took := time.Since(start)
	if r.err != nil {
		b.Fatalf("replay: %v", r.err)
	}
	if r.failed > 0 {
		b.Errorf("replay into a fresh VPP: %d of %d requests failed, the first %s", r.failed, len(msgs), r.first)
	}
	return took
}

// retvalOf reads a reply's Retval field (0 for a reply without one).
func retvalOf(m api.Message) int32 {
	f := reflect.ValueOf(m).Elem().FieldByName("Retval")
	if !f.IsValid() || f.Kind() != reflect.Int32 {
		return 0
	}
	return int32(f.Int())
}

// replayWire writes the recorded requests to VPP's API socket through
// govpp's socket adapter alone (message IDs mapped by name to the new VPP's),
// at most depth unanswered, and returns the time from the first write to
// the last reply. Every write of the recordings is answered by one reply
// whose retval follows the 6-byte header.
func replayWire(b *testing.B, socket string, names map[uint16]string, raw [][]byte, depth int) time.Duration {
	b.Helper()
	c := socketclient.NewVppClient(socket)
	if err := c.Connect(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = c.Disconnect() }()
	ids := map[uint16]uint16{}
	for old, nameCRC := range names {
		name, crc := splitNameCRC(nameCRC)
		if id, err := c.GetMsgID(name, crc); err == nil {
			ids[old] = id
		}
	}
	bufs := make([][]byte, len(raw))
	for i, data := range raw {
		id, ok := ids[binary.BigEndian.Uint16(data)]
		if !ok {
			b.Fatalf("message %s unknown to the restarted VPP", names[binary.BigEndian.Uint16(data)])
		}
		bufs[i] = append([]byte(nil), data...)
		binary.BigEndian.PutUint16(bufs[i], id)
	}
	replies := make(chan int32, depth+1)
	c.SetMsgCallback(func(_ uint16, data []byte) {
		var v int32
		if len(data) >= 10 {
			v = int32(binary.BigEndian.Uint32(data[6:10]))
		}
		replies <- v
	})
	failed, inFlight := 0, 0
	wait := func() {
		select {
		case v := <-replies:
			if v != 0 {
				failed++
			}
			inFlight--
		case <-time.After(time.Minute):
			b.Fatalf("no reply from VPP for a minute (%d in flight)", inFlight)
		}
	}
	start := time.Now()
	for i, buf := range bufs {
		for inFlight >= depth {
			wait()
		}
		if err := c.SendMsg(uint32(i+1), buf); err != nil {
			b.Fatal(err)
		}
		inFlight++
	}
	for inFlight > 0 {
		wait()
	}
	took := time.Since(start)
	if failed > 0 {
		b.Errorf("wire replay into a fresh VPP: %d of %d requests failed", failed, len(bufs))
	}
	return took
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
