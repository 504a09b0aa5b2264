// Package dataplane is the one seam behind which vppsvc's tests and its
// render/trace commands find a VPP: fakevpp, the emulation every test runs
// on, or a real VPP 25.10 driven by package realvpp. Both build a topology
// the same way, hand out binary-API connections for the agent under test,
// and trace packets into fakevpp's Trace shape, so one test states one
// behaviour and the data plane it runs on is a setting.
package dataplane

import (
	"fmt"
	"net/netip"

	"go.fd.io/govpp/adapter"

	"github.com/vppsvc/vppsvc/fakevpp"
	"github.com/vppsvc/vppsvc/realvpp"
)

// Node is a VPP a test (or the CLI) builds a node in, programs through
// Adapter and sends packets through.
type Node interface {
	// Real tells whether packets cross a real VPP.
	Real() bool
	// AddInterface creates an interface, up, with addresses.
	AddInterface(name string, addrs ...netip.Prefix) error
	// SetUnnumbered makes name borrow the addresses of from (IP enabled
	// without an address of its own, as a CNI builds pod interfaces).
	SetUnnumbered(name, from string) error
	// InterfaceIndex is VPP's sw_if_index of an interface the node made.
	InterfaceIndex(name string) (uint32, bool)
	// AddRoute sends dst out of ifName.
	AddRoute(dst netip.Prefix, ifName string) error
	// Adapter returns a binary-API connection for an agent or driver.
	Adapter() adapter.VppAPI
	// Trace sends a packet in and reports where it went (fakevpp.Trace).
	// On a real VPP, Endpoints holds only the destination VPP chose.
	Trace(p fakevpp.Packet) fakevpp.Trace
	// TraceReply sends the reply of a forwarded trace back in.
	TraceReply(t fakevpp.Trace) fakevpp.Trace
	// Calls counts the requests sent through the node's adapters by
	// message name since ResetCalls.
	Calls() map[string]int
	ResetCalls()
	// Dump is the node's NAT44-ED, cnat and ACL state as stable text: equal
	// dumps mean equal configuration (the format differs per data plane).
	Dump() string
	// Close releases the node; a real VPP is reset and keeps running.
	Close() error
}

// Fake is a Node over fakevpp.
type Fake struct {
	*fakevpp.VPP
	connected bool
}

// NewFake returns a Node over a new fake VPP seeded with seed.
func NewFake(seed int64) *Fake { return &Fake{VPP: fakevpp.New(fakevpp.WithSeed(seed))} }

// Real implements Node.
func (f *Fake) Real() bool { return false }

// AddInterface implements Node.
func (f *Fake) AddInterface(name string, addrs ...netip.Prefix) error {
	f.VPP.AddInterface(name, addrs...)
	return nil
}

// SetUnnumbered implements Node.
func (f *Fake) SetUnnumbered(name, from string) error {
	if !f.VPP.SetUnnumbered(name, from) {
		return fmt.Errorf("unnumbered %s to %s: unknown interface", name, from)
	}
	return nil
}

// AddRoute implements Node.
func (f *Fake) AddRoute(dst netip.Prefix, ifName string) error {
	f.VPP.AddRoute(dst, ifName)
	return nil
}

// Adapter implements Node: the fake itself first, then new clients.
func (f *Fake) Adapter() adapter.VppAPI {
	if !f.connected {
		f.connected = true
		return f.VPP
	}
	return f.VPP.NewAdapter()
}

// Close implements Node.
func (f *Fake) Close() error { return nil }

// Real is a Node over a running VPP.
type Real struct{ *realvpp.Node }

// Real implements Node.
func (Real) Real() bool { return true }

var (
	_ Node = (*Fake)(nil)
	_ Node = Real{}
)
