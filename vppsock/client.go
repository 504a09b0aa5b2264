package vppsock

import (
	"sync"
	"sync/atomic"
	"time"

	"go.fd.io/govpp/adapter"
)

// Defaults, the same as govpp's socketclient.
const (
	DefaultClientName        = "govppsock"
	DefaultConnectTimeout    = 3 * time.Second
	DefaultDisconnectTimeout = 100 * time.Millisecond
	DefaultReadyTimeout      = 3 * time.Second
)

// DefaultHoldLimit is how many held bytes SendMsg lets build up between Hold
// and Release before it writes them (and keeps holding).
const DefaultHoldLimit = 256 << 10

// readerStopTimeout bounds Disconnect's wait for the reader goroutine after
// the connection is closed: the reader leaves as soon as the callback in
// progress (if any) returns.
const readerStopTimeout = 5 * time.Second

// Client is a govpp adapter (adapter.VppAPI) on VPP's API socket whose
// writes can be held and made in one go: see Hold. Its methods are safe for
// concurrent use; Connect and Disconnect are serialised with each other.
type Client struct {
	path              string
	name              string
	connectTimeout    time.Duration
	disconnectTimeout time.Duration
	readyTimeout      time.Duration
	holdLimit         int

	callback atomic.Pointer[adapter.MsgCallback]
	route    atomic.Pointer[route] // see RouteReplies

	tableMu sync.RWMutex
	table   map[tableKey]uint16 // message ID of the current connection

	// life serialises Connect and Disconnect. sess is written with both
	// life and mu held, so either one is enough to read it.
	life sync.Mutex

	// mu guards the writes: the connection's writes, the hold count and
	// buffers, and the session's broken state.
	mu      sync.Mutex
	sess    *session
	holds   int
	held    []byte // frames appended between Hold and Release
	scratch []byte // the frame of an unheld SendMsg

	stats struct{ sent, received, writes, reads atomic.Uint64 }
}

// New returns a Client for the VPP API socket at socketPath (the default,
// adapter.DefaultBinapiSocket, when empty). It connects on Connect.
func New(socketPath string) *Client {
	if socketPath == "" {
		socketPath = adapter.DefaultBinapiSocket
	}
	c := &Client{
		path:              socketPath,
		name:              DefaultClientName,
		connectTimeout:    DefaultConnectTimeout,
		disconnectTimeout: DefaultDisconnectTimeout,
		readyTimeout:      DefaultReadyTimeout,
		holdLimit:         DefaultHoldLimit,
	}
	c.SetMsgCallback(nil)
	return c
}

// SetClientName sets the name the client registers with in
// sockclnt_create (DefaultClientName by default). Call it before Connect.
func (c *Client) SetClientName(name string) { c.name = name }

// SetConnectTimeout bounds Connect's dial and its sockclnt_create exchange.
// Call it before Connect.
func (c *Client) SetConnectTimeout(d time.Duration) { c.connectTimeout = d }

// SetDisconnectTimeout bounds Disconnect's write of sockclnt_delete and its
// wait for the reply. Call it before Disconnect.
func (c *Client) SetDisconnectTimeout(d time.Duration) { c.disconnectTimeout = d }

// SetReadyTimeout bounds WaitReady's wait for the socket file.
func (c *Client) SetReadyTimeout(d time.Duration) { c.readyTimeout = d }

// SetHoldLimit sets how many held bytes SendMsg lets build up before it
// writes them (DefaultHoldLimit by default). Call it before use.
func (c *Client) SetHoldLimit(n int) { c.holdLimit = n }

// SetMsgCallback sets the function the reader goroutine calls with every
// message from VPP. The data passed to it is valid only during the call:
// it lies in the reader's buffer, which the next read overwrites, so a
// callback that keeps it must copy it (govpp core's callback does). The
// callback runs on the reader goroutine and holds up the reading of the
// following messages while it runs. A nil callback drops messages.
func (c *Client) SetMsgCallback(cb adapter.MsgCallback) {
	if cb == nil {
		cb = func(uint16, []byte) {}
	}
	c.callback.Store(&cb)
}

// GetMsgID returns the ID of the message msgName with CRC msgCrc in the
// message table of the current connection, or an *adapter.UnknownMsgError.
func (c *Client) GetMsgID(msgName, msgCrc string) (uint16, error) {
	c.tableMu.RLock()
	id, ok := c.table[tableKey{msgName, msgCrc}]
	c.tableMu.RUnlock()
	if !ok {
		return 0, &adapter.UnknownMsgError{MsgName: msgName, MsgCrc: msgCrc}
	}
	return id, nil
}

// tableKey is a message's name and CRC, as GetMsgID is asked for them:
// govpp core asks once a request, and a key of the two strings needs no
// "name_crc" built (and allocated) for each.
type tableKey struct{ name, crc string }

func (c *Client) setTable(t map[tableKey]uint16) {
	c.tableMu.Lock()
	c.table = t
	c.tableMu.Unlock()
}

// Stats counts what a Client did over its life, across connections.
type Stats struct {
	Sent     uint64 // messages accepted by SendMsg (written or held)
	Received uint64 // messages handed on, to the callback or a route
	Writes   uint64 // write calls on the connection, handshakes included
	Reads    uint64 // read calls on the connection, handshakes included
}

// Stats returns the counts so far.
func (c *Client) Stats() Stats {
	return Stats{
		Sent:     c.stats.sent.Load(),
		Received: c.stats.received.Load(),
		Writes:   c.stats.writes.Load(),
		Reads:    c.stats.reads.Load(),
	}
}

var _ adapter.VppAPI = (*Client)(nil)
