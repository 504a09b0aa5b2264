package agent

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/vppsvc/vppsvc/vppcfg"
)

// Converged reports whether VPP holds everything the processor has handed to
// the renderers: the VPP layer has synced with VPP, is not in the middle of
// applying a change, no item failed and no renderer waits for a retried
// resync. Renderer calls commit synchronously, so once a call has returned
// only failures can keep a change from VPP; while one is applied, the
// statuses still describe the state before it.
//
// Items pending for a reason that is not an error — above all an interface
// that does not exist yet — do not count: they wait for the CNI to create
// the interface, not for vppsvc, and are applied when it appears.
func (a *Agent) Converged() bool {
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
	for _, s := range a.Reconciler.Statuses() {
		if s.State == vppcfg.StateFailed {
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
func (a *Agent) Pending() []vppcfg.ItemStatus {
	var out []vppcfg.ItemStatus
	for _, s := range a.Reconciler.Statuses() {
		if s.State == vppcfg.StatePending {
			out = append(out, s)
		}
	}
	return out
}
