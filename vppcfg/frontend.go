package vppcfg

import (
	"net/netip"

	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
	"github.com/vppsvc/vppsvc/vppcfg/internal/presentation"
)

// frontendTranslation is what an item that implements a service frontend
// (a NAT44 mapping, a cnat translation) does with the frontend's traffic:
// the service view (`vppsvc render -o services`) groups items by it and
// says where they send. vppcfg/present exports it as FrontendTranslation.
type frontendTranslation struct {
	// Frontend and Protocol are what clients reach.
	Frontend netip.AddrPort
	Protocol Protocol
	// Backends are where the item sends, in its own order.
	Backends []netip.AddrPort
	// Name is the short name operators know the object by ("lb-mapping"),
	// and Flags the options that change how it translates
	// ("self-twice-nat", "out2in-only", "affinity 30s", "interposed",
	// "maglev", "snat 1/2"), as the service view prints them.
	Name  string
	Flags []string
}

// translationOf returns the frontend translation of an item, and false
// for kinds that implement no frontend.
func translationOf(it Item) (frontendTranslation, bool) {
	if it == nil {
		return frontendTranslation{}, false
	}
	t, ok := core.Of(it).Translation(it)
	return frontendTranslation{Frontend: t.Frontend, Protocol: Protocol(t.Protocol), Backends: t.Backends,
		Name: t.Name, Flags: t.Flags}, ok
}

// The presentations are for the CLI, not for renderers: vppcfg/present reads
// them through this bridge, so that they stay out of vppcfg's exports.
func init() {
	presentation.Register(presentation.Hooks{
		CLI:       cliCommands,
		Printable: printableOf,
		Translation: func(it Item) (presentation.Translation, bool) {
			if it == nil {
				return presentation.Translation{}, false
			}
			return core.Of(it).Translation(it)
		},
	})
}
