// Package presentation is the bridge between the kind files of vppcfg, which
// say how their items are shown, and vppcfg/present, which shows them to
// operators: vppcfg registers its descriptors' hooks here at init, and
// present reads them, so that renderers' package vppcfg does not export
// what only the CLI uses, and each kind's presentation stays in its file.
package presentation

import (
	"net/netip"

	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
)

// Translation is a frontend translation as the kind files give it; Protocol
// is a vppcfg.Protocol, which this package cannot name without a cycle.
type Translation struct {
	Frontend netip.AddrPort
	Protocol uint8
	Backends []netip.AddrPort
	Name     string
	Flags    []string
}

// Hooks are the per-kind presentations, each dispatching on the item's kind
// descriptor. They are never nil once vppcfg is initialized.
type Hooks struct {
	CLI         func(it driverapi.Item) []string
	Printable   func(it driverapi.Item, owner string) any
	Translation func(it driverapi.Item) (Translation, bool)
}

var hooks Hooks

// Register installs vppcfg's hooks; vppcfg calls it once, at init.
func Register(h Hooks) { hooks = h }

// Get returns the hooks vppcfg registered.
func Get() Hooks { return hooks }
