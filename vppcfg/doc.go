// Package vppcfg is the declarative VPP layer: renderers describe the VPP
// configuration they want as typed items, and the layer works out and applies
// the minimal VPP operations, in dependency order, with retries, ownership per
// renderer and a hitless resync against what VPP already holds.
//
// Items are plain values (net/netip, no govpp types) with one stable Key
// each. A renderer puts and deletes them through its Client's transactions;
// Example shows one renderer's round trip, compiled and run by go test.
//
// Each item kind is described in its own file, kind_<kind>.go: its type,
// key constructor and descriptor (descriptor.go), which the store, diff,
// reconciler and classification look up by Kind: the engine knows no kind.
//
// Everything that talks to VPP goes through the driver contract of package
// driverapi (its Driver interface), implemented by package govppdriver over
// go.fd.io/govpp; fakevpp stands in for VPP in tests.
package vppcfg
