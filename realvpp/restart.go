package realvpp

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"time"

	"go.fd.io/govpp/adapter/socketclient"
	"go.fd.io/govpp/core"
)

// ErrNoRestart is returned by Restart when the node was not told how to
// restart its VPP.
var ErrNoRestart = errors.New("realvpp: no restart command (Options.RestartCommand)")

// restartTimeout bounds the wait for a restarted VPP's API socket.
const restartTimeout = 30 * time.Second

// step is one topology change the node made, replayed after a restart the
// way a CNI re-creates its interfaces.
type step struct {
	addIface   string
	addrs      []netip.Prefix
	unnumbered [2]string
	route      netip.Prefix
	via        string
	// vrf.go's changes
	table   *tableStep
	address *addrStep
	routeIn *routeStep
	nbr     *nbrStep
}

type tableStep struct {
	id    uint32
	ip6   bool
	iface string // set: the interface moved into the table
}

type addrStep struct {
	iface string
	p     netip.Prefix
	add   bool
}

type routeStep struct {
	table   uint32
	dst     netip.Prefix
	via     string
	toTable bool
	next    uint32
}

type nbrStep struct {
	iface string
	ip    netip.Addr
}

// Restart restarts VPP with the node's restart command (a shell command
// line such as "systemctl restart vpp"), waits for its API to answer, and
// re-creates the interfaces, unnumbered links and routes the node had, in
// the order it made them. Connections handed out by Adapter see the
// restart as govpp sees one: they break and reconnect.
func (n *Node) Restart() error { return n.restart(nil) }

// RestartWithEnv is Restart with env ("KEY=value" entries) added to the
// environment of the restart command, for a command that reads its VPP's
// settings from there (e.g. a smaller main heap for one test). The next
// Restart runs the command with the test's own environment again.
func (n *Node) RestartWithEnv(env ...string) error { return n.restart(env) }

func (n *Node) restart(env []string) error {
	if n.opts.RestartCommand == "" {
		return ErrNoRestart
	}
	n.mu.Lock()
	steps := n.steps
	n.mu.Unlock()
	n.conn.Disconnect()
	cmd := exec.Command("sh", "-c", n.opts.RestartCommand)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("restart command %q: %v: %s", n.opts.RestartCommand, err, out)
	}
	deadline := time.Now().Add(restartTimeout)
	for {
		conn, err := core.Connect(socketclient.NewVppClient(n.socket))
		if err == nil {
			n.conn = conn
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("VPP at %s did not come back within %s: %w", n.socket, restartTimeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	n.mu.Lock()
	n.ifaces, n.nbrs, n.steps, n.nextID = nil, map[nbrKey]bool{}, nil, 0
	n.mu.Unlock()
	for _, s := range steps {
		if err := n.replay(s); err != nil {
			return fmt.Errorf("re-creating the topology after the restart: %w", err)
		}
	}
	return nil
}

func (n *Node) replay(s step) error {
	switch {
	case s.table != nil && s.table.iface != "":
		return n.SetTable(s.table.iface, s.table.id, s.table.ip6)
	case s.table != nil:
		return n.AddTable(s.table.id, s.table.ip6)
	case s.address != nil:
		return n.addDelAddress(s.address.iface, s.address.p, s.address.add)
	case s.routeIn != nil && s.routeIn.toTable:
		return n.AddRouteToTable(s.routeIn.table, s.routeIn.dst, s.routeIn.next)
	case s.routeIn != nil:
		return n.AddRouteIn(s.routeIn.table, s.routeIn.dst, s.routeIn.via)
	case s.nbr != nil:
		return n.AddNeighbour(s.nbr.iface, s.nbr.ip)
	case s.addIface != "":
		return n.AddInterface(s.addIface, s.addrs...)
	case s.unnumbered[0] != "":
		return n.SetUnnumbered(s.unnumbered[0], s.unnumbered[1])
	}
	return n.AddRoute(s.route, s.via)
}
