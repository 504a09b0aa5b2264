package agent

import "github.com/vppsvc/vppsvc/agent/inspect"

// Inspect takes a snapshot of the agent's state for the state inspector
// (inspect.Take; serve it with inspect.Handler).
func (a *Agent) Inspect() *inspect.Snapshot {
	return inspect.Take(a.Processor, a.Renderers, a.Reconciler)
}
