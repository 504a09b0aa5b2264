package agent

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/vppsvc/vppsvc/agent/inspect"
	"github.com/vppsvc/vppsvc/vppcfg/engine"
)

// Converged reports whether VPP holds everything the processor has handed to
// the renderers: the VPP layer has synced with VPP, is not in the middle of
// applying a change, no item failed, no item waits for an interface and no
// renderer waits for a retried resync. Renderer calls commit synchronously,
// so once a call has returned only failures and missing interfaces can keep
// a change from VPP; while one is applied, the statuses still describe the
// state before it.
//
// Items waiting for an interface count: after a VPP restart, hundreds of NAT
// roles and ACL bindings wait until the CNI has recreated the interfaces,
// and until then the services they implement do not work.
func (a *Agent) Converged() bool {
	return a.ConvergedExceptInterfaces() && a.Reconciler.Stats().WaitingForInterface == 0
}

// ConvergedExceptInterfaces is Converged, except that items waiting for an
// interface do not count. It tells whether the agent has done all it can:
// the rest waits for the CNI (or the host) to create interfaces, and is
// applied when they appear. The run command times syncs with it and judges
// interface waits separately, after a grace period.
func (a *Agent) ConvergedExceptInterfaces() bool {
	st := a.Reconciler.Stats()
	return st.Synced && !st.Applying && st.Failed == 0 && a.Processor.Stats().DirtyRenderers == 0
}

// Divergence says why Converged is false, naming the failed items.
func (a *Agent) Divergence() string {
	var why []string
	st := a.Reconciler.Stats()
	if !st.Synced {
		why = append(why, "the VPP layer has not synced with VPP yet")
	}
	if st.Applying {
		why = append(why, "the VPP layer is applying a change")
	}
	if n := a.Processor.Stats().DirtyRenderers; n > 0 {
		why = append(why, fmt.Sprintf("%d renderer(s) wait for a retried resync", n))
	}
	if w := inspect.InterfaceWaits(a.Reconciler); w.Items > 0 {
		why = append(why, fmt.Sprintf("%d item(s) wait for an interface, the longest since %s (%s)",
			w.Items, w.Since.UTC().Format(time.RFC3339), w.Example))
	}
	for _, s := range a.Reconciler.Statuses() {
		if s.State == engine.StateFailed {
			why = append(why, s.String())
		}
	}
	if len(why) == 0 {
		return "converged"
	}
	return strings.Join(why, "; ")
}

// WaitConverged polls Converged until it holds, ctx ends or timeout passes.
func (a *Agent) WaitConverged(ctx context.Context, timeout time.Duration) error {
	const poll = 5 * time.Millisecond
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for !a.Converged() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("VPP configuration did not converge within %s: %s", timeout, a.Divergence())
		case <-tick.C:
		}
	}
	return nil
}

// Pending returns the items that are neither applied nor failed, with the
// reason each waits for.
func (a *Agent) Pending() []engine.ItemStatus {
	var out []engine.ItemStatus
	for _, s := range a.Reconciler.Statuses() {
		if s.State == engine.StatePending {
			out = append(out, s)
		}
	}
	return out
}
