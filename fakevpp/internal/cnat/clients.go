package cnat

import "net/netip"

// client is a cnat_client_t: cnat's /32 or /128 FIB entry for one address.
// Every packet VPP routes to a client's address enters ip4-cnat-tx /
// ip6-cnat-tx at FIB-lookup time (README.md#where-cnat-acts).
//
// Clients are made for VIP addresses (by translations) and for the
// destinations of return traffic (learned from new sessions). Whether a client
// is exclusive is fixed when it is created (cnat_client_add returns an
// existing client untouched), so it is decided by whoever sees the address
// first: a translation with IsRealIP=0 makes it exclusive, a translation with
// IsRealIP=1 or a learned client makes it interposed (README.md#translations-and-clients:
// fixed by the first translation of the address).
type client struct {
	addr netip.Addr
	// exclusive: the FIB entry is FIB_ENTRY_FLAG_EXCLUSIVE, parented on a
	// drop; a packet cnat does not translate is dropped. Otherwise the entry
	// is interposed and an untranslated packet follows the route cnat sits on.
	exclusive bool
	trRef     int // translations whose VIP this is
	sessRef   int // sessions that hold the client (see session.go)
}

// clientAdd is cnat_client_add: the existing client, or a new one.
func (p *Plugin) clientAdd(a netip.Addr, exclusive bool) *client {
	if c := p.clients[a]; c != nil {
		return c
	}
	c := &client{addr: a, exclusive: exclusive}
	p.clients[a] = c
	return c
}

// clientLearn is cnat_client_learn plus the reference a return session takes
// (cnat_rsession_create): the first return session towards an address creates
// an interposed client for it, so that replies addressed to it reach cnat.
func (p *Plugin) clientLearn(a netip.Addr) {
	c := p.clientAdd(a, false)
	c.sessRef++
}

// clientTranslationDeleted is cnat_client_translation_deleted.
func (p *Plugin) clientTranslationDeleted(a netip.Addr) {
	c := p.clients[a]
	if c == nil {
		return
	}
	c.trRef--
	p.clientMaybeDestroy(c)
}

// clientSessionFreed is cnat_client_free_by_ip: a session that held the client
// is gone.
func (p *Plugin) clientSessionFreed(a netip.Addr) {
	c := p.clients[a]
	if c == nil {
		return
	}
	c.sessRef--
	p.clientMaybeDestroy(c)
}

// clientMaybeDestroy removes the FIB entry once neither a translation nor a
// session needs it. Until then a deleted translation's exclusive VIP keeps
// dropping new flows (README.md#translations-and-clients).
func (p *Plugin) clientMaybeDestroy(c *client) {
	if c.trRef <= 0 && c.sessRef <= 0 {
		delete(p.clients, c.addr)
	}
}

// Routes reports whether cnat has a FIB entry for addr (a VIP or a learned
// client). The core's FIB lookup must then hand the packet to VIP instead of
// forwarding it (README.md#where-cnat-acts).
func (p *Plugin) Routes(addr netip.Addr) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.clients[addr.Unmap()] != nil
}

// IsVIP reports whether addr is a VIP: the address of a current translation,
// or an exclusive VIP that sessions keep alive after its translations were
// deleted. Learned clients are not VIPs.
func (p *Plugin) IsVIP(addr netip.Addr) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.clients[addr.Unmap()]
	return c != nil && (c.exclusive || c.trRef > 0)
}
