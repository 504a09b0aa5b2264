// Package cnat emulates the cnat plugin of VPP 25.10 (API cnat 0.3.0) for
// fakevpp: its binary-API handlers, its VIP path (ip4-cnat-tx / ip6-cnat-tx),
// the cnat-snat-ip4/ip6 feature, sessions with their lifetimes, the source-port
// allocator and the learned clients.
//
// The package is self-contained: the fakevpp core owns the interfaces, the FIB
// and the packet pipeline and calls in here through a thin adapter. See
// README.md for the wiring and for the facts checked against VPP's code.
//
// The VPP behaviour it follows is stated in fakevpp/internal/cnat/README.md, whose
// sections the comments cite as README.md#<anchor>.
package cnat

import (
	"net/netip"
	"sync"
)

// invalidIndex is VPP's ~0: "no interface" in endpoints, "no ID" in replies.
const invalidIndex = ^uint32(0)

// Interfaces is what the plugin needs to know about the core's interfaces.
// cnat endpoints and the SNAT addresses may name an interface instead of an
// address (README.md#endpoints); VPP then uses the interface's first address of the family.
type Interfaces interface {
	// Exists reports whether sw is an existing sw_if_index (VPP's
	// VALIDATE_SW_IF_INDEX, used by CnatSnatPolicyAddDelIf).
	Exists(sw uint32) bool
	// Address returns the first address of the family configured on sw (what
	// ip4_interface_first_address / ip6_interface_first_address return), or
	// false when sw has none or does not exist.
	Address(sw uint32, ip6 bool) (netip.Addr, bool)
	// HostEntry reports whether table 0 holds an entry for a's host prefix
	// (/32, /128) from another source than cnat: a route, an interface's
	// own address, a neighbour's adjacency entry. Such an entry outlives
	// cnat's path trackers
	// (README.md#backend-routes).
	HostEntry(a netip.Addr) bool
}

// Violation records a request or packet for which real VPP would crash,
// behave in an undefined way, or silently do something a control plane almost
// certainly did not mean (the Go zero-value pitfalls of README.md#endpoints). The same shape
// as the core's fakevpp.Violation so the adapter can copy them over.
type Violation struct {
	Message string // short and stable; tests may match it
	Detail  string // the objects involved
}

// Plugin is the whole cnat state of one VPP instance (README.md#translations-and-clients). All methods are
// safe for concurrent use.
type Plugin struct {
	mu  sync.Mutex
	ifs Interfaces

	violations []Violation
	seenViol   map[Violation]bool

	// translations is VPP's translation pool: index = ID, nil = free slot.
	// freeIDs is the pool's free list, reused LIFO (README.md#translations-and-clients).
	translations []*translation
	freeIDs      []uint32
	// routes are the backends' host entries the path trackers hold, by
	// address (routes.go).
	routes map[netip.Addr]*backendRoute
	// byKey is cnat_translation_db for resolved VIPs: (VIP address, port,
	// protocol) → ID. Unresolved interface VIPs are never found (see
	// README.md, "unresolved VIP key").
	byKey map[trKey]uint32

	// clients are cnat's FIB entries: one per VIP address and per learned
	// return-traffic destination (README.md#translations-and-clients).
	clients map[netip.Addr]*client

	sessions map[sessionKey]*session
	seq      uint64 // creation counter, orders SessionDump

	snat  snatConfig
	ports portAllocator
}

// New returns an empty plugin, as VPP has it right after start. ifs may be nil
// (no interface exists and none has an address).
func New(ifs Interfaces) *Plugin {
	p := &Plugin{ifs: ifs, seenViol: map[Violation]bool{}}
	p.reset()
	return p
}

// Reset models a VPP restart (docs/fakevpp.md#restart): every translation, session, client, SNAT
// setting, enabled feature and allocated port is gone, and translation IDs
// start again at 0. Recorded violations are kept: they describe what the
// control plane did, not VPP state.
func (p *Plugin) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reset()
}

func (p *Plugin) reset() {
	p.translations = nil
	p.freeIDs = nil
	p.byKey = map[trKey]uint32{}
	p.clients = map[netip.Addr]*client{}
	p.sessions = map[sessionKey]*session{}
	p.routes = map[netip.Addr]*backendRoute{}
	p.seq = 0
	p.snat = newSnatConfig()
	p.ports = portAllocator{}
}

// Violations returns the violations recorded since New or ClearViolations, in
// the order they happened. Identical repeats are kept once.
func (p *Plugin) Violations() []Violation {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Violation(nil), p.violations...)
}

// ClearViolations forgets the recorded violations. The fake's core calls it
// after every request, so it allocates nothing.
func (p *Plugin) ClearViolations() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.violations = p.violations[:0] // Violations hands out copies
	clear(p.seenViol)
}

func (p *Plugin) violate(message, detail string) {
	v := Violation{Message: message, Detail: detail}
	if p.seenViol[v] {
		return
	}
	p.seenViol[v] = true
	p.violations = append(p.violations, v)
}

// ifExists and ifAddress shield the rest of the package from a nil Interfaces.
func (p *Plugin) ifExists(sw uint32) bool {
	return p.ifs != nil && p.ifs.Exists(sw)
}

func (p *Plugin) ifAddress(sw uint32, ip6 bool) (netip.Addr, bool) {
	if p.ifs == nil {
		return netip.Addr{}, false
	}
	a, ok := p.ifs.Address(sw, ip6)
	a = a.Unmap()
	if !ok || !a.IsValid() || a.Is6() != ip6 {
		return netip.Addr{}, false
	}
	return a, true
}
