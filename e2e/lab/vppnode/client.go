package vppnode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"go.fd.io/govpp/adapter"
	"go.fd.io/govpp/adapter/socketclient"
	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/vpe"
	"go.fd.io/govpp/core"

	"github.com/vppsvc/vppsvc/internal/govppnode"
)

// Tag starts the tag of the VPP interfaces a node agent created through
// Client (followed by ":" and the host veth's ifindex).
const Tag = "vppsvc-lab"

// errWrongVersion is wrapped when the VPP behind a socket is not 25.10.
var errWrongVersion = errors.New("wrong VPP version")

// Client is a node agent's connection to its VPP, with the operations
// that build a node. Every operation is idempotent: it reads VPP's state
// first and sends a change only when VPP differs (Changes counts them).
type Client struct {
	conn *core.Connection
	// api is what requests go through: conn, or conn timed (LogCalls).
	api    api.Connection
	socket string
	// hostIfIndex is the kernel's ifindex of a root-namespace link (tests
	// fake it).
	hostIfIndex func(name string) (int, error)

	mu      sync.Mutex
	changes map[string]int
}

// Connect connects to the VPP whose API socket is socket and checks that
// it is VPP 25.10.
func Connect(ctx context.Context, socket string) (*Client, error) {
	return connect(ctx, socketclient.NewVppClient(socket), socket)
}

// connect connects through the adapter a (a socket client, or a test's
// fake) to the VPP at socket.
func connect(ctx context.Context, a adapter.VppAPI, socket string) (*Client, error) {
	conn, err := core.Connect(a)
	if err != nil {
		return nil, fmt.Errorf("connect to VPP at %s: %w", socket, err)
	}
	c := &Client{conn: conn, api: conn, socket: socket, changes: map[string]int{}, hostIfIndex: linkIndex}
	v, err := c.Version(ctx)
	if err != nil {
		conn.Disconnect()
		return nil, err
	}
	if err := checkVersion(v, "the VPP at "+socket); err != nil {
		conn.Disconnect()
		return nil, fmt.Errorf("%w: %w", errWrongVersion, err)
	}
	return c, nil
}

// LogCalls makes the client write one line per request-reply call to w,
// "<begin> <end> <message> <ok>" with times in Unix nanoseconds (the
// format of the node agent's renderer-calls.log): how long VPP's main
// thread, which also forwards, took over each interface the lab creates.
// Dumps are not logged. Call it before the client is shared.
func (c *Client) LogCalls(w io.Writer) {
	c.api = &timedConn{Connection: c.conn, w: w}
}

// timedConn is a connection whose request-reply calls are logged.
type timedConn struct {
	*core.Connection
	mu sync.Mutex
	w  io.Writer
}

func (t *timedConn) Invoke(ctx context.Context, req, reply api.Message) error {
	begin := time.Now()
	err := t.Connection.Invoke(ctx, req, reply)
	end := time.Now()
	t.mu.Lock()
	WriteCall(t.w, begin, end, req.GetMessageName(), err == nil)
	t.mu.Unlock()
	return err
}

// WriteCall writes one line of a lab call log, "<begin> <end> <name> <ok>"
// with times in Unix nanoseconds: the calls of this client (LogCalls) and
// the node agent's renderer calls share it.
func WriteCall(w io.Writer, begin, end time.Time, name string, ok bool) {
	fmt.Fprintf(w, "%d %d %s %t\n", begin.UnixNano(), end.UnixNano(), name, ok)
}

// Close disconnects; VPP keeps running and keeps what was configured.
func (c *Client) Close() { c.conn.Disconnect() }

// Conn is the underlying govpp connection, for calls this package does
// not offer.
func (c *Client) Conn() *core.Connection { return c.conn }

// Version is VPP's version as show_version answers it ("25.10.0-release").
func (c *Client) Version(ctx context.Context) (string, error) {
	r, err := vpe.NewServiceClient(c.api).ShowVersion(ctx, &vpe.ShowVersion{})
	if err != nil {
		return "", fmt.Errorf("show_version at %s: %w", c.socket, err)
	}
	return r.Version, nil
}

// Changes counts the changing requests sent through this client, by
// message name ("af_packet_create_v3"): zero after a plan re-run over a
// VPP that already has it.
func (c *Client) Changes() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.changes))
	for k, v := range c.changes {
		out[k] = v
	}
	return out
}

func (c *Client) changed(msg string) {
	c.mu.Lock()
	c.changes[msg]++
	c.mu.Unlock()
}

// recvAll is govppnode.RecvAll, for the dumps of interfaces.go and io.go
// (the af_packet code, which another change was rewriting when this moved;
// they can call govppnode.RecvAll directly).
func recvAll[T any](s interface {
	Recv() (T, error)
	Close() error
}, err error) ([]T, error) {
	return govppnode.RecvAll(s, err)
}

// linkIndex is the kernel's ifindex of the link name in this process's
// namespace (the root one, where VPP's veth ends are).
func linkIndex(name string) (int, error) {
	i, err := net.InterfaceByName(name)
	if err != nil {
		return 0, err
	}
	return i.Index, nil
}
