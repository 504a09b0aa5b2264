package vppcfg

import (
	"fmt"
	"net/netip"
	"strconv"

	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
)

// DropRoute drops, in the FIB of table VRF, every packet to Prefix that no
// translation rewrote first (ip_route_add_del with one drop path). Renderers
// use it for what kube-proxy rejects: a ClusterIP's ports the service does
// not expose, and the service CIDR's addresses no service holds. A more
// specific route (a cnat VIP's /32 or /128) still wins, and NAT44-ED and
// cnat's input features rewrite the destination before the lookup, so
// translated traffic never meets the route.
//
// VPP routes carry no tag: the driver marks the path of a DropRoute with a
// path preference of its own and reads back only drop routes with that
// mark, so routes of other control planes are never taken for vppsvc's.
type DropRoute struct {
	Prefix netip.Prefix
	VRF    uint32
}

// dropRouteKey keys a drop route by table and prefix.
func dropRouteKey(prefix netip.Prefix, vrf uint32) Key {
	// One allocation: a key is built on every diff of the service.
	var buf [64]byte
	b := append(buf[:0], "vrf"...)
	b = strconv.AppendUint(b, uint64(vrf), 10)
	b = append(b, '/')
	b = prefix.AppendTo(b)
	return Key{Kind: KindDropRoute, Name: string(b)}
}

func (r *DropRoute) Key() Key   { return dropRouteKey(r.Prefix, r.VRF) }
func (r *DropRoute) kind() Kind { return KindDropRoute }
func (r *DropRoute) Equal(o Item) bool {
	other, ok := o.(*DropRoute)
	return ok && *r == *other
}
func (r *DropRoute) String() string {
	return fmt.Sprintf("ip route add %s table %d via drop", r.Prefix, r.VRF)
}

func init() {
	register(kindSpec[*DropRoute]{
		Kind: KindDropRoute, Name: "drop-route",
		Validate: func(k Key, v *DropRoute) error {
			if !v.Prefix.IsValid() || v.Prefix != v.Prefix.Masked() || v.Prefix.Addr().Is4In6() {
				return invalid(k, "Prefix", "%s is not a masked IPv4 or IPv6 prefix", v.Prefix)
			}
			if v.VRF == AnyVRF {
				return invalid(k, "VRF", "%d is VPP's \"any VRF\" marker, not a table", v.VRF)
			}
			return nil
		},
		CLI: func(v *DropRoute) []string {
			return []string{fmt.Sprintf("ip route add %s table %d via drop  # api: path preference %#x marks it as vppsvc's", v.Prefix, v.VRF, core.DropRoutePreference)}
		},
		Printable: func(v *DropRoute, _ string) any {
			return printableDropRoute{Prefix: v.Prefix.String(), Table: v.VRF}
		},
		Untagged: func(v *DropRoute) untaggedTraits { return untaggedTraits{addr: v.Prefix.Addr()} },
	})
}

// printableDropRoute is DropRoute as the render document prints it.
type printableDropRoute struct {
	Prefix string `json:"prefix"`
	Table  uint32 `json:"table"`
}
