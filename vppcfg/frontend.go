package vppcfg

import "net/netip"

// FrontendTranslation is what an item that implements a service frontend
// (a NAT44 mapping, a cnat translation) does with the frontend's traffic:
// the service view (`vppsvc render -o services`) groups items by it and
// says where they send.
type FrontendTranslation struct {
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

// FrontendTranslationOf returns the frontend translation of an item, and
// false for kinds that implement no frontend.
func FrontendTranslationOf(it Item) (FrontendTranslation, bool) {
	if it == nil {
		return FrontendTranslation{}, false
	}
	return descriptorOf(it).translation(it)
}
