package vppsock

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strings"
	"time"

	"go.fd.io/govpp/binapi/memclnt"
	"go.fd.io/govpp/codec"
)

// The handshake's fixed values, as VPP and socketclient have them.
const (
	sockclntCreateID = 15 // sockclnt_create's ID, hard-coded: there is no table yet
	createContext    = 123
	deleteContext    = 124
)

// session is one connection: from a successful Connect to Disconnect.
type session struct {
	conn        *net.UnixConn
	fr          *frameReader
	clientIndex uint32

	deleteID      uint16 // sockclnt_delete in this connection's table
	deleteReplyID uint16 // sockclnt_delete_reply
	canDelete     bool   // both were in the table

	deleted chan struct{} // closed by the reader on sockclnt_delete_reply
	done    chan struct{} // closed when the reader goroutine has ended

	broken error // guarded by Client.mu: set once a write or the reader failed
}

// WaitReady waits until the socket file exists, for at most the ready
// timeout (DefaultReadyTimeout). It polls the file (every 10 ms), so it
// also waits for missing parent directories.
func (c *Client) WaitReady() error {
	deadline := time.Now().Add(c.readyTimeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		_, err := os.Stat(c.path)
		if err == nil {
			return nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("vppsock: VPP API socket: %w", err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("vppsock: timeout (%v) waiting for the VPP API socket %s", c.readyTimeout, c.path)
		}
		<-tick.C
	}
}

// Connect connects to VPP: it dials the socket, registers with
// sockclnt_create, takes the reply's client index and message table, and
// starts the reader goroutine. Every step is bounded by the connect
// timeout. After a Disconnect it connects again (a new connection, a new
// message table, a new reader); on a connected Client it returns an error.
// A Hold in force stays in force across Disconnect and Connect.
func (c *Client) Connect() error {
	c.life.Lock()
	defer c.life.Unlock()
	if c.sess != nil {
		return errors.New("vppsock: already connected")
	}
	if _, err := os.Stat(c.path); err != nil {
		return fmt.Errorf("vppsock: VPP API socket: %w", err)
	}
	d := net.Dialer{Timeout: c.connectTimeout}
	nc, err := d.Dial("unix", c.path)
	if err != nil {
		return fmt.Errorf("vppsock: connect: %w", err)
	}
	s, table, err := c.handshake(nc.(*net.UnixConn))
	if err != nil {
		_ = nc.Close()
		return err
	}
	c.setTable(table)
	c.mu.Lock()
	c.sess = s
	c.held = c.held[:0]
	c.mu.Unlock()
	go c.readLoop(s)
	return nil
}

// handshake sends sockclnt_create and reads its reply, within the connect
// timeout.
func (c *Client) handshake(conn *net.UnixConn) (*session, map[tableKey]uint16, error) {
	if err := conn.SetDeadline(time.Now().Add(c.connectTimeout)); err != nil {
		return nil, nil, fmt.Errorf("vppsock: connect: %w", err)
	}
	req, err := codec.DefaultCodec.EncodeMsg(&memclnt.SockclntCreate{Name: c.name}, sockclntCreateID)
	if err != nil {
		return nil, nil, fmt.Errorf("vppsock: encode sockclnt_create: %w", err)
	}
	// sockclnt_create's header is message ID and context (no client index).
	binary.BigEndian.PutUint32(req[replyContextOffset:], createContext)
	c.stats.writes.Add(1)
	if _, err := conn.Write(appendFrame(nil, req)); err != nil {
		return nil, nil, fmt.Errorf("vppsock: write sockclnt_create: %w", err)
	}
	fr := newFrameReader(conn, readBufSize, &c.stats.reads)
	data, err := fr.next()
	if err != nil {
		return nil, nil, fmt.Errorf("vppsock: read sockclnt_create_reply: %w", err)
	}
	reply := new(memclnt.SockclntCreateReply)
	if err := codec.DefaultCodec.DecodeMsg(data, reply); err != nil {
		return nil, nil, fmt.Errorf("vppsock: decode sockclnt_create_reply: %w", err)
	}
	if reply.Response != 0 {
		return nil, nil, fmt.Errorf("vppsock: sockclnt_create_reply: response error (%d)", reply.Response)
	}
	if err := conn.SetDeadline(time.Time{}); err != nil {
		return nil, nil, fmt.Errorf("vppsock: connect: %w", err)
	}

	s := &session{
		conn:        conn,
		fr:          fr,
		clientIndex: reply.Index,
		deleted:     make(chan struct{}),
		done:        make(chan struct{}),
	}
	table := make(map[tableKey]uint16, len(reply.MessageTable))
	var haveDelete, haveDeleteReply bool
	for _, e := range reply.MessageTable {
		name, _, _ := strings.Cut(e.Name, "\x00")
		name = strings.TrimSuffix(name, "\x13")
		if i := strings.LastIndexByte(name, '_'); i >= 0 {
			table[tableKey{name[:i], name[i+1:]}] = e.Index
		}
		// "sockclnt_delete_<crc>" and "sockclnt_delete_reply_<crc>",
		// whatever the CRCs.
		if rest, ok := strings.CutPrefix(name, "sockclnt_delete_"); ok {
			if crc, ok := strings.CutPrefix(rest, "reply_"); ok && !strings.Contains(crc, "_") {
				s.deleteReplyID, haveDeleteReply = e.Index, true
			} else if !strings.Contains(rest, "_") {
				s.deleteID, haveDelete = e.Index, true
			}
		}
	}
	s.canDelete = haveDelete && haveDeleteReply
	return s, table, nil
}

// Disconnect unregisters with sockclnt_delete (unless the connection is
// broken), waits for its reply at most the disconnect timeout, closes the
// connection and waits for the reader goroutine to end. Held bytes are
// dropped; the hold count is kept. Without a connection it returns nil.
//
// A write stuck on a VPP that stopped reading is cut short by Disconnect
// (its SendMsg or Release returns an error), so Disconnect is bounded too.
func (c *Client) Disconnect() error {
	c.life.Lock()
	defer c.life.Unlock()
	s := c.sess
	if s == nil {
		return nil
	}
	// Bounds the sockclnt_delete write and frees a writer stuck holding mu.
	_ = s.conn.SetWriteDeadline(time.Now().Add(c.disconnectTimeout))

	c.mu.Lock()
	c.held = c.held[:0]
	sentDelete := false
	if s.broken == nil && s.canDelete {
		del, err := codec.DefaultCodec.EncodeMsg(&memclnt.SockclntDelete{Index: s.clientIndex}, s.deleteID)
		if err == nil {
			c.scratch = appendRequest(c.scratch[:0], del, s.clientIndex, deleteContext)
			sentDelete = c.writeLocked(s, c.scratch, "write sockclnt_delete") == nil
		}
	}
	c.sess = nil
	c.mu.Unlock()

	if sentDelete {
		t := time.NewTimer(c.disconnectTimeout)
		select {
		case <-s.deleted:
		case <-s.done: // VPP closed the connection first
		case <-t.C: // accepted, as socketclient does
		}
		t.Stop()
	}
	closeErr := s.conn.Close()
	c.setTable(nil)

	t := time.NewTimer(readerStopTimeout)
	defer t.Stop()
	select {
	case <-s.done:
	case <-t.C:
		return fmt.Errorf("vppsock: disconnect: the reader goroutine is still in the message callback after %v", readerStopTimeout)
	}
	if closeErr != nil {
		return fmt.Errorf("vppsock: disconnect: %w", closeErr)
	}
	return nil
}
