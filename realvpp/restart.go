package realvpp

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"syscall"
	"time"

	"go.fd.io/govpp/adapter/socketclient"
	"go.fd.io/govpp/core"
)

// ErrNoRestart is returned by Restart when the node was not told how to
// restart its VPP.
var ErrNoRestart = errors.New("realvpp: no restart command (Options.RestartCommand)")

// restartTimeout bounds the wait for a restarted VPP's API socket.
const restartTimeout = 30 * time.Second

// restartCommandTimeout bounds the restart command itself: a command that
// hangs (a stuck systemctl, a script waiting on a VPP that never starts)
// fails the restart instead of holding a test or benchmark forever.
const restartCommandTimeout = 2 * time.Minute

// restartOutputGrace is how long a finished restart command's output is
// still read: a VPP it started in the background may keep the output open
// for as long as it runs.
const restartOutputGrace = 5 * time.Second

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
	if err := runRestartCommand(n.opts.RestartCommand, env, restartCommandTimeout, restartOutputGrace); err != nil {
		return err
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

// runRestartCommand runs command with env added to the environment, in its
// own process group, for at most timeout, and reads its output for at most
// grace after it exits. On timeout the whole group is killed (with a VPP it
// may have started half-way) and an error returned.
func runRestartCommand(command string, env []string, timeout, grace time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = grace
	out, err := cmd.CombinedOutput()
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("restart command %q did not finish within %s (killed): %s", command, timeout, out)
	case errors.Is(err, exec.ErrWaitDelay):
		// It succeeded; what it started still holds the output.
		return nil
	case err != nil:
		return fmt.Errorf("restart command %q: %v: %s", command, err, out)
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
