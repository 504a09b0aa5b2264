// Package tracetest is the harness of the renderers' packet-trace tests and
// end-to-end benchmarks: Kubernetes objects go through the processor, the
// renderers, the VPP layer (store, reconciler, govpp driver) and the fake
// VPP, and packets are then traced through the fake's data plane. The
// tests assert behaviour (who reaches which endpoint, with or without
// source NAT, what is dropped), not item layout.
//
// It holds what does not depend on the renderer under test: quiet test
// logs and govpp's test timings (quiet.go), traced flows and what they
// must do (env.go), builders of Kubernetes objects (objects.go), counting
// VPP calls (calls.go) and the loop of the endpoint-change benchmarks
// (bench.go). The agent itself is started by internal/agenttest, in each
// test package's _test files: renderer packages never import the
// processor, which the agent reaches, so neither does this one.
package tracetest
