package host

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
)

// AddAddress puts the address p (address and prefix length, either
// family) on a link of the lab's (ns "" for the root namespace) or inside
// one of its namespaces. IPv6 addresses skip duplicate address detection
// (nodad): usable at once. Adding an address that is there is a no-op.
func (l *Lab) AddAddress(ns, name string, p netip.Prefix) error {
	if !p.IsValid() {
		return fmt.Errorf("address on %s: invalid prefix", name)
	}
	ctx := context.Background()
	if err := l.requireOurLink(ctx, ns, name); err != nil {
		return err
	}
	_, err := l.ip(ctx, addressArgs(ns, name, p)...)
	if err == nil {
		l.log.WithFields(map[string]any{"namespace": ns, "link": name, "address": p.String()}).Debug("address set")
	}
	return err
}

func addressArgs(ns, name string, p netip.Prefix) []string {
	args := nsArgs(ns, family(p.Addr()), "addr", "replace", p.String(), "dev", name)
	if p.Addr().Is6() {
		args = append(args, "nodad")
	}
	return args
}

// Route is a route of a namespace's routing table.
type Route struct {
	// Dst is the destination; 0.0.0.0/0 or ::/0 is the default route.
	Dst netip.Prefix
	// Via is the next hop; the zero Addr makes the route attached to Dev.
	Via netip.Addr
	// Dev is the link the route leaves by.
	Dev string
	// OnLink takes Via as reachable on Dev even outside Dev's subnets
	// (a pod's default route via its node's address).
	OnLink bool
	// Local makes Dst the namespace's own (a route of type local): its
	// kernel accepts packets to it without any interface holding the
	// address, so it is never chosen as a source.
	Local bool
	// Table is the routing table (0: main).
	Table int
}

func (r Route) String() string {
	s := r.Dst.String()
	if r.Local {
		s = "local " + s
	}
	if r.Via.IsValid() {
		s += " via " + r.Via.String()
	}
	s += " dev " + r.Dev
	if r.OnLink {
		s += " onlink"
	}
	if r.Table != 0 {
		s += fmt.Sprintf(" table %d", r.Table)
	}
	return s
}

// routeArgs are the ip arguments of r after "route <verb>".
func routeArgs(r Route) ([]string, error) {
	if !r.Dst.IsValid() || r.Dev == "" {
		return nil, fmt.Errorf("route %v: want a destination and a device", r)
	}
	if r.Via.IsValid() && r.Via.Is4() != r.Dst.Addr().Is4() {
		return nil, fmt.Errorf("route %v: next hop of another family", r)
	}
	dst := r.Dst.Masked().String()
	if r.Dst.Bits() == 0 {
		dst = "default"
	}
	args := []string{dst}
	if r.Local {
		args = []string{"local", dst}
	}
	if r.Via.IsValid() {
		args = append(args, "via", r.Via.String())
	}
	args = append(args, "dev", r.Dev)
	if r.OnLink {
		args = append(args, "onlink")
	}
	if r.Table != 0 {
		args = append(args, "table", strconv.Itoa(r.Table))
	}
	return args, nil
}

// AddRoute installs r in the lab's namespace ns (ip route replace: adding
// it again is a no-op, a different route to the same Dst is replaced).
func (l *Lab) AddRoute(ns string, r Route) error {
	return l.route(ns, "replace", r)
}

// DelRoute removes r from the lab's namespace ns; a missing route is no
// error.
func (l *Lab) DelRoute(ns string, r Route) error {
	err := l.route(ns, "del", r)
	if err != nil && routeMissing(ns, r, l) {
		return nil
	}
	return err
}

func routeMissing(ns string, r Route, l *Lab) bool {
	args, err := routeArgs(r)
	if err != nil {
		return false
	}
	show, dst := []string{family(r.Dst.Addr()), "route", "show"}, args[0]
	if r.Local {
		show, dst = append(show, "table", "local"), args[1]
	}
	if r.Table != 0 {
		show = append(show, "table", strconv.Itoa(r.Table))
	}
	out, err := l.ip(context.Background(), nsArgs(ns, append(show, dst)...)...)
	return err == nil && len(out) == 0
}

func (l *Lab) route(ns, verb string, r Route) error {
	args, err := routeArgs(r)
	if err != nil {
		return err
	}
	ctx := context.Background()
	if err := l.requireOurLink(ctx, ns, r.Dev); err != nil {
		return err
	}
	_, err = l.ip(ctx, nsArgs(ns, append([]string{family(r.Dst.Addr()), "route", verb}, args...)...)...)
	if err == nil {
		l.log.WithFields(map[string]any{"namespace": ns, "route": r.String(), "op": verb}).Debug("route")
	}
	return err
}

// AddNeighbour makes ip a permanent neighbour with hardware address mac on
// the link name of the lab's namespace ns (no ARP or neighbour discovery
// needed, and no expiry). Adding it again is a no-op.
func (l *Lab) AddNeighbour(ns, name string, ip netip.Addr, mac net.HardwareAddr) error {
	if !ip.IsValid() || len(mac) != 6 {
		return fmt.Errorf("neighbour on %s: want an address and a 6-byte MAC (got %v %v)", name, ip, mac)
	}
	ctx := context.Background()
	if err := l.requireOurLink(ctx, ns, name); err != nil {
		return err
	}
	_, err := l.ip(ctx, nsArgs(ns, family(ip), "neigh", "replace", ip.String(), "lladdr", mac.String(), "dev", name, "nud", "permanent")...)
	return err
}

func family(a netip.Addr) string {
	if a.Is4() {
		return "-4"
	}
	return "-6"
}
