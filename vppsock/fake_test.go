package vppsock

import (
	"encoding/binary"
	"net"
	"sync"
	"testing"
	"time"

	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/memclnt"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/codec"
)

// waitTimeout bounds every wait of the tests: reaching it fails the test.
const waitTimeout = 10 * time.Second

// fakeVPP is a VPP API socket server for the tests: it answers
// sockclnt_create with a small message table, answers every request with
// one reply (its ID the request's plus one, its context the request's),
// answers sockclnt_delete, records what it read, and can close its
// connections. It parses the framing with its own code, not the package's.
type fakeVPP struct {
	t           testing.TB
	path        string
	ln          *net.UnixListener
	base        uint16            // the ID of the first message after the handshake's
	ids         map[string]uint16 // "name_crc" → ID, what sockclnt_create_reply carries
	clientIndex uint32
	record      bool // keep every request and read (off in benchmarks)
	wg          sync.WaitGroup

	mu           sync.Mutex
	conns        []net.Conn
	createNames  []string
	deletes      []uint32 // client index of every sockclnt_delete
	deleteReplyW int      // sockclnt_delete replies written without error
	requests     [][]byte // request data in order (handshake and delete aside)
	nrequests    int
	badIndex     int           // requests with a wrong client index
	reads        []int         // the size of every read after the handshake's
	silent       bool          // answer no request (sockclnt_* still answered)
	noDelete     bool          // do not answer sockclnt_delete
	noCreate     bool          // do not answer sockclnt_create
	echo         bool          // replies carry the request's payload (else 16 zero bytes)
	stall        chan struct{} // when set, reading stops until it is closed
	changed      chan struct{}
}

// Message names of the fake's table.
const (
	testMsg      = "test_msg"
	testMsgCRC   = "12345678"
	testReply    = "test_msg_reply"
	testReplyCRC = "87654321"
)

func msgKey(m api.Message) string { return m.GetMessageName() + "_" + m.GetCrcString() }

// newFakeVPP listens on path; its message IDs start at base (so that a
// restarted fake can carry another table).
func newFakeVPP(t testing.TB, path string, base uint16) *fakeVPP {
	t.Helper()
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeVPP{
		t: t, path: path, ln: ln, base: base, clientIndex: 0x01020304 + uint32(base),
		record: true, changed: make(chan struct{}, 1),
		ids: map[string]uint16{
			msgKey(&memclnt.SockclntCreateReply{}):              base,
			msgKey(&memclnt.SockclntDelete{}):                   base + 1,
			msgKey(&memclnt.SockclntDeleteReply{}):              base + 2,
			msgKey(&memclnt.ControlPing{}):                      base + 3,
			msgKey(&memclnt.ControlPingReply{}):                 base + 4,
			msgKey(&nat44_ed.Nat44AddDelStaticMappingV2{}):      base + 5,
			msgKey(&nat44_ed.Nat44AddDelStaticMappingV2Reply{}): base + 6,
			testMsg + "_" + testMsgCRC:                          base + 7,
			testReply + "_" + testReplyCRC:                      base + 8,
		},
	}
	f.wg.Add(1)
	go f.accept()
	t.Cleanup(f.stop)
	return f
}

func (f *fakeVPP) accept() {
	defer f.wg.Done()
	for {
		conn, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.mu.Lock()
		f.conns = append(f.conns, conn)
		f.mu.Unlock()
		f.wg.Add(1)
		go f.serve(conn)
	}
}

// stop closes the listener (which removes the socket file) and every
// connection, and waits for the fake's goroutines.
func (f *fakeVPP) stop() {
	_ = f.ln.Close()
	f.closeConns()
	done := make(chan struct{})
	go func() { f.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(waitTimeout):
		f.t.Errorf("fake VPP: goroutines still running after %v", waitTimeout)
	}
}

// closeConns closes the fake's side of every connection (VPP dying).
func (f *fakeVPP) closeConns() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.conns {
		_ = c.Close()
	}
}

func (f *fakeVPP) signal() {
	select {
	case f.changed <- struct{}{}:
	default:
	}
}

// set changes the fake's state under its lock.
func (f *fakeVPP) set(change func(f *fakeVPP)) {
	f.mu.Lock()
	change(f)
	f.mu.Unlock()
}

// waitFor waits until cond (called under the fake's lock) holds; after
// waitTimeout it fails the test.
func (f *fakeVPP) waitFor(what string, cond func(f *fakeVPP) bool) {
	f.t.Helper()
	timer := time.NewTimer(waitTimeout)
	defer timer.Stop()
	for {
		f.mu.Lock()
		ok := cond(f)
		f.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-f.changed:
		case <-timer.C:
			f.t.Fatalf("fake VPP: timeout (%v) waiting for %s", waitTimeout, what)
		}
	}
}

func (f *fakeVPP) waitRequests(n int) {
	f.t.Helper()
	f.waitFor("requests", func(f *fakeVPP) bool { return f.nrequests >= n })
}

func (f *fakeVPP) serve(conn net.Conn) {
	defer f.wg.Done()
	buf := make([]byte, 64<<10)
	var pending []byte
	handshakeDone := false
	for {
		f.mu.Lock()
		stall := f.stall
		f.mu.Unlock()
		if stall != nil {
			<-stall
		}
		n, err := conn.Read(buf)
		if n > 0 {
			pending = append(pending, buf[:n]...)
			var out []byte
			wroteDeleteReply := false
			for len(pending) >= 16 {
				l := int(binary.BigEndian.Uint32(pending[8:12]))
				if len(pending) < 16+l {
					break
				}
				var isDelete bool
				out, isDelete = f.handle(pending[16:16+l], out)
				wroteDeleteReply = wroteDeleteReply || isDelete
				pending = pending[16+l:]
			}
			pending = append([]byte(nil), pending...)
			f.mu.Lock()
			if handshakeDone && f.record {
				f.reads = append(f.reads, n)
			}
			f.mu.Unlock()
			handshakeDone = true
			if len(out) > 0 {
				_, werr := conn.Write(out)
				if werr == nil && wroteDeleteReply {
					f.set(func(f *fakeVPP) { f.deleteReplyW++ })
				}
			}
			f.signal()
		}
		if err != nil {
			return
		}
	}
}

// handle takes one request and appends the frames of its reply to out; it
// tells whether the request was sockclnt_delete and was answered.
func (f *fakeVPP) handle(data []byte, out []byte) ([]byte, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := binary.BigEndian.Uint16(data)
	switch id {
	case sockclntCreateID:
		req := new(memclnt.SockclntCreate)
		if err := codec.DefaultCodec.DecodeMsg(data, req); err != nil {
			f.t.Errorf("fake VPP: decode sockclnt_create: %v", err)
		}
		if ctx := binary.BigEndian.Uint32(data[2:6]); ctx != createContext {
			f.t.Errorf("fake VPP: sockclnt_create context %d, want %d", ctx, createContext)
		}
		f.createNames = append(f.createNames, req.Name)
		if f.noCreate {
			return out, false
		}
		reply := &memclnt.SockclntCreateReply{Index: f.clientIndex}
		for name, id := range f.ids {
			reply.MessageTable = append(reply.MessageTable, memclnt.MessageTableEntry{Index: id, Name: name})
		}
		reply.Count = uint16(len(reply.MessageTable))
		b, err := codec.DefaultCodec.EncodeMsg(reply, f.base)
		if err != nil {
			f.t.Errorf("fake VPP: encode sockclnt_create_reply: %v", err)
		}
		binary.BigEndian.PutUint32(b[6:10], createContext)
		return appendTestFrame(out, b), false
	case f.base + 1: // sockclnt_delete
		f.deletes = append(f.deletes, binary.BigEndian.Uint32(data[2:6]))
		if f.noDelete {
			return out, false
		}
		b, _ := codec.DefaultCodec.EncodeMsg(&memclnt.SockclntDeleteReply{}, f.base+2)
		copy(b[2:6], data[6:10])
		return appendTestFrame(out, b), true
	}
	f.nrequests++
	if f.record {
		f.requests = append(f.requests, append([]byte(nil), data...))
	}
	if binary.BigEndian.Uint32(data[2:6]) != f.clientIndex {
		f.badIndex++
	}
	if f.silent {
		return out, false
	}
	reply := make([]byte, 6, 6+16)
	binary.BigEndian.PutUint16(reply, id+1)
	copy(reply[2:6], data[6:10])
	if f.echo {
		reply = append(reply, data[10:]...)
	} else {
		reply = append(reply, make([]byte, 16)...)
	}
	return appendTestFrame(out, reply), false
}

// writeRaw writes b on the fake's last connection.
func (f *fakeVPP) writeRaw(b []byte) {
	f.t.Helper()
	f.mu.Lock()
	conn := f.conns[len(f.conns)-1]
	f.mu.Unlock()
	if _, err := conn.Write(b); err != nil {
		f.t.Fatalf("fake VPP: write: %v", err)
	}
}

// appendTestFrame frames data, written apart from the package's appendFrame
// so that the tests check the framing rather than assume it.
func appendTestFrame(out, data []byte) []byte {
	var h [16]byte
	binary.BigEndian.PutUint32(h[8:12], uint32(len(data)))
	return append(append(out, h[:]...), data...)
}
