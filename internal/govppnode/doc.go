// Package govppnode is what builds a VPP node over govpp, for the harnesses
// that set up a real VPP (realvpp's packet-generator node, the lab's VPP
// nodes) and for the driver's conversions: net/netip to binapi types and
// back, draining a dump's stream, and the messages that put addresses,
// unnumbered interfaces, routes and static neighbours. It knows none of
// the product: its callers add their own bookkeeping and error context.
// fakevpp keeps its own conversions (fakevpp/internal/apiaddr): the oracle
// shares no code with what it checks.
package govppnode
