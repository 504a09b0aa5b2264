// Package vppcfg is the vocabulary of the declarative VPP layer: renderers
// describe the VPP configuration they want as typed items and put them
// through a Client's transactions; the layer's engine (package
// vppcfg/engine) works out and applies the minimal VPP operations, in
// dependency order, with retries, ownership per renderer and a hitless
// resync against what VPP already holds.
//
// Items are plain values (net/netip, no govpp types) with one stable Key
// each. Validate and ValidateSet check items as a commit does, so that a
// renderer's test double of Client rejects what the layer rejects; Example
// shows one renderer's round trip, compiled and run by go test.
//
// Each item kind is described in its own file, kind_<kind>.go: its type,
// key constructor and descriptor (descriptor.go), which the engine's store,
// diff, reconciler and classification look up by Kind through
// vppcfg/internal/core: the engine knows no kind, and this package knows
// nothing of the engine.
//
// Everything that talks to VPP goes through the driver contract of package
// driverapi (its Driver interface), implemented by package govppdriver over
// go.fd.io/govpp; fakevpp stands in for VPP in tests.
package vppcfg
