package realvpp

import (
	"context"
	"fmt"
	"syscall"

	"go.fd.io/govpp/binapi/memclnt"
)

// PID is the process ID of the VPP behind the socket, from its control
// ping reply.
func (n *Node) PID() (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	r := &memclnt.ControlPingReply{}
	if err := n.conn.Invoke(ctx, &memclnt.ControlPing{}, r); err != nil {
		return 0, fmt.Errorf("control ping: %w", err)
	}
	if r.VpePID == 0 {
		return 0, fmt.Errorf("control ping: VPP reported no process ID")
	}
	return int(r.VpePID), nil
}

// Signal sends sig to the VPP process (SIGKILL to crash it, SIGSTOP and
// SIGCONT to freeze and thaw it); VPP must run on this machine. pid is
// PID's answer, read while VPP answered.
func Signal(pid int, sig syscall.Signal) error {
	if err := syscall.Kill(pid, sig); err != nil {
		return fmt.Errorf("signal %s to VPP (pid %d): %w", sig, pid, err)
	}
	return nil
}
