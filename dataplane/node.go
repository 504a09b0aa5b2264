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
	"go.fd.io/govpp/api"

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
	// AddTable creates VRF table id of a family (ip_table_add_del).
	AddTable(id uint32, ip6 bool) error
	// SetTable moves an interface into table id of a family; VPP refuses
	// it while the interface has an address of the family, so add
	// interfaces meant for a VRF without addresses and use AddAddress.
	SetTable(name string, id uint32, ip6 bool) error
	// AddAddress and DelAddress change an interface's addresses at run
	// time (what NAT44-ED and cnat follow).
	AddAddress(name string, p netip.Prefix) error
	DelAddress(name string, p netip.Prefix) error
	// AddRouteIn sends dst out of ifName in table.
	AddRouteIn(table uint32, dst netip.Prefix, ifName string) error
	// AddRouteToTable looks dst up again in table next when it is
	// matched in table (a route from a pod VRF into the host's table).
	AddRouteToTable(table uint32, dst netip.Prefix, next uint32) error
	// AddNeighbour makes ip a static neighbour on ifName.
	AddNeighbour(ifName string, ip netip.Addr) error
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

// AddTable implements Node.
func (f *Fake) AddTable(id uint32, ip6 bool) error {
	f.VPP.AddTable(id, ip6)
	return nil
}

// SetTable implements Node.
func (f *Fake) SetTable(name string, id uint32, ip6 bool) error {
	return retvalErr(f.VPP.SetInterfaceTable(name, id, ip6), "table %d for %s", id, name)
}

// AddAddress implements Node.
func (f *Fake) AddAddress(name string, p netip.Prefix) error {
	return retvalErr(f.VPP.AddAddress(name, p), "address %s on %s", p, name)
}

// DelAddress implements Node.
func (f *Fake) DelAddress(name string, p netip.Prefix) error {
	return retvalErr(f.VPP.DelAddress(name, p), "delete address %s on %s", p, name)
}

// AddRouteIn implements Node.
func (f *Fake) AddRouteIn(table uint32, dst netip.Prefix, ifName string) error {
	if !f.VPP.AddRouteIn(table, dst, ifName) {
		return fmt.Errorf("route %s via %s in table %d: unknown interface or table", dst, ifName, table)
	}
	return nil
}

// AddRouteToTable implements Node.
func (f *Fake) AddRouteToTable(table uint32, dst netip.Prefix, next uint32) error {
	if !f.VPP.AddRouteToTable(table, dst, next) {
		return fmt.Errorf("route %s in table %d via table %d: unknown table", dst, table, next)
	}
	return nil
}

// AddNeighbour implements Node.
func (f *Fake) AddNeighbour(ifName string, ip netip.Addr) error {
	if !f.VPP.AddNeighbour(ifName, ip) {
		return fmt.Errorf("neighbour %s on %s: unknown interface", ip, ifName)
	}
	return nil
}

// retvalErr turns a VPP retval into an error that carries it (errors.As
// to api.VPPApiError), as a real VPP's reply does through govpp.
func retvalErr(rv int32, format string, args ...any) error {
	if rv == 0 {
		return nil
	}
	return fmt.Errorf(format+": %w", append(args, api.VPPApiError(rv))...)
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
