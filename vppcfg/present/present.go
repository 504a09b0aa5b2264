// Package present shows vppcfg items to operators: the VPP CLI lines that
// create an item (`vppsvc render -o vppcli`), the item as the render
// document prints it (`-o json`, `-o yaml`), and the service frontend it
// implements (`-o services`). Each kind writes its presentation in its kind
// file in vppcfg; this package is where the CLI reads it, so that renderers,
// which never show items, do not see it in vppcfg.
package present

import (
	"net/netip"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/internal/presentation"
)

// CLICommands returns the VPP CLI lines an operator would type to create
// the item (VPP 25.10 syntax). Where the CLI cannot express a field that the
// binary API sets, the line carries a "# api:" comment naming it; kinds
// without a CLI form of their own (an ACL binding: VPP takes an interface's
// whole list) get a comment saying so. Nil for a nil item.
func CLICommands(it vppcfg.Item) []string {
	return presentation.Get().CLI(it)
}

// Printable returns the item as `vppsvc render -o json` and `-o yaml` print
// it (docs/cli.md, "The render JSON contract"): a value that encoding/json
// writes with the item's fields under lower-case names, enums and VRFs by
// name; owner, when known, completes the VPP tag the item carries. Kinds
// without a printable form print as their String.
func Printable(it vppcfg.Item, owner string) any {
	return presentation.Get().Printable(it, owner)
}

// FrontendTranslation is what an item that implements a service frontend
// (a NAT44 mapping, a cnat translation) does with the frontend's traffic:
// the service view groups items by it and says where they send.
type FrontendTranslation struct {
	// Frontend and Protocol are what clients reach.
	Frontend netip.AddrPort
	Protocol vppcfg.Protocol
	// Backends are where the item sends, in its own order.
	Backends []netip.AddrPort
	// Name is the short name operators know the object by ("lb-mapping"),
	// and Flags the options that change how it translates
	// ("self-twice-nat", "out2in-only", "affinity 30s", "interposed",
	// "maglev", "snat 1/2"), as the service view prints them.
	Name  string
	Flags []string
}

// FrontendTranslationOf returns the frontend translation of an item, and
// false for kinds that implement no frontend.
func FrontendTranslationOf(it vppcfg.Item) (FrontendTranslation, bool) {
	t, ok := presentation.Get().Translation(it)
	if !ok {
		return FrontendTranslation{}, false
	}
	return FrontendTranslation{Frontend: t.Frontend, Protocol: vppcfg.Protocol(t.Protocol),
		Backends: t.Backends, Name: t.Name, Flags: t.Flags}, true
}
