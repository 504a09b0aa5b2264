package govppdriver

import (
	"net/netip"

	"go.fd.io/govpp/binapi/cnat"
	"go.fd.io/govpp/binapi/ip_types"

	"github.com/vppsvc/vppsvc/internal/govppnode"
)

// What the cnat kinds share (cnat_*.go).

// endpoint is a literal cnat endpoint. SwIfIndex must be ~0: with the Go
// zero value VPP would take the address of local0 (none) and ignore Addr.
func endpoint(ap netip.AddrPort, family netip.Addr) cnat.CnatEndpoint {
	a := ap.Addr()
	if !a.IsValid() {
		a = unspecified(family)
	}
	af := ip_types.ADDRESS_IP4
	if a.Is6() {
		af = ip_types.ADDRESS_IP6
	}
	return cnat.CnatEndpoint{Addr: govppnode.Address(a), SwIfIndex: anyInterface, IfAf: af, Port: ap.Port()}
}

func boolU8(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}
