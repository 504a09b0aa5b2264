package vppcfg

import (
	"net/netip"

	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
)

// printableOf returns the item as `vppsvc render -o json` and `-o yaml`
// print it (docs/cli.md, "The render JSON contract"): a value that
// encoding/json writes with the item's fields under lower-case names, enums
// and VRFs by name; owner, when known, completes the VPP tag the item
// carries. Each kind's descriptor writes its own; kinds without one print as
// String. vppcfg/present exports it as Printable.
func printableOf(it Item, owner string) any {
	if it == nil {
		return nil
	}
	return core.Of(it).Printable(it, owner)
}

// printableTag is the VPP tag of an item with label written by owner; empty
// when either is unknown, so that the document shows no half tag.
func printableTag(owner, label string) string {
	if owner == "" || label == "" {
		return ""
	}
	return core.Tag(owner, label)
}

// printableAddr and printableAddrPort print an unset address as "".
func printableAddr(a netip.Addr) string {
	if !a.IsValid() {
		return ""
	}
	return a.String()
}

func printableAddrPort(a netip.AddrPort) string {
	if !a.IsValid() {
		return ""
	}
	return a.String()
}
