// Package inspect is the state inspector's face: the view model of what a
// running agent knows (Snapshot: the services as the processor converted
// them, with each renderer's VPP items and their status in the VPP layer),
// the HTTP API that serves it (Handler), which `vppsvc status` and the lab
// read, and the summary of the items waiting for an interface
// (InterfaceWaits) that the run command's health and the agent's Divergence
// report. The agent wires it (agent.Agent.Inspect); an embedder that only
// runs the agent needs none of it.
package inspect
