package cnat

import (
	"fmt"
	"net/netip"
	"time"
)

// Session locations of the feature-arc nodes (cnat_session_location_t):
// cnat-input keys its entries at INPUT, their return entries at OUTPUT, so
// each is found only by the node of its own location.
const (
	locInput  = 0
	locOutput = 1
)

// InputFeature is cnat-input-ip4 / cnat-input-ip6 (cnat_input_feature_fn in
// cnat_node_feature.c), a feature of the ingress interface's unicast arc that
// VPP orders before acl-plugin-in and so before NAT44-ED. It differs from the
// VIP path (VIP) in four ways:
//
//   - it sees only packets of interfaces it is enabled on, before the FIB;
//   - it never source-NATs (a path's source endpoint is ignored);
//   - its entries live at the INPUT location and their return entries at
//     OUTPUT: replies are translated back by OutputFeature on the interface
//     they leave through, not by the VIP path;
//   - its return entries learn no client (CNAT_SESSION_FLAG_NO_CLIENT).
//
// A packet whose destination is no cnat address, or matches no translation
// or no active path, passes untranslated (VPP: "don't translate").
func (p *Plugin) InputFeature(f Flow, now time.Time) Result {
	p.mu.Lock()
	defer p.mu.Unlock()
	f = f.normalized()
	r, key, done := p.featureSession(f, now, locInput, "cnat-input")
	if done {
		return r
	}
	c := p.clients[f.Dst.Addr()]
	if c == nil {
		return r // not a cnat address: silent, as most traffic on the interface
	}
	var why string
	id, found := p.byKey[trKey{addr: c.addr, port: f.Dst.Port(), proto: f.Proto}]
	var t *translation
	pi := 0
	switch {
	case !f.hasPorts():
		why = fmt.Sprintf("%s does not match translations", describeProto(f))
	case !found:
		why = fmt.Sprintf("no translation for port %d/%s", f.Dst.Port(), protoName(f.Proto))
	default:
		t = p.translations[id]
		var ok bool
		if pi, ok = t.choose(f); !ok {
			why = fmt.Sprintf("translation %d has no active path", t.id)
		}
	}
	if why != "" {
		r.step("cnat-input: %s, not translated", why)
		return r
	}
	r.Matched = true
	r.TranslationID = t.id
	for _, ai := range t.active {
		r.Candidates = append(r.Candidates, netip.AddrPortFrom(t.paths[ai].dst.addr, t.paths[ai].dst.port))
	}
	pa := t.paths[pi]
	fwd := &session{
		key:    key,
		newSrc: f.Src,
		newDst: netip.AddrPortFrom(pa.dst.addr, pa.dst.port),
		viaLB:  true,
		tr:     t,
		route:  pa.route,
	}
	c.sessRef++ // cnat_client_cnt_session
	withReturn := t.flags&flagNoReturnSession == 0
	p.createFeatureSessions(fwd, now, withReturn)
	r.Verdict = Forward
	r.NewSession = true
	r.Flow = fwd.rewrite(f)
	fwd.updateLifetime(f)
	r.step("cnat-input: %s → %s (new session; replies translated back by cnat-output)", f.Dst, fwd.newDst)
	if !withReturn {
		r.step("cnat-input: no return session (NO_RETURN_SESSION): replies are not translated")
	}
	return r
}

// featureSession is what both feature nodes do first: a packet cnat does not
// key passes (done), one that matches an entry at loc is translated by it
// (done); otherwise the caller goes on with key.
func (p *Plugin) featureSession(f Flow, now time.Time, loc uint8, node string) (r Result, key sessionKey, done bool) {
	r = Result{Verdict: Pass, Flow: f, TranslationID: invalidIndex}
	key, ok := sessionKeyOf(f)
	if !ok {
		return r, key, true
	}
	key.loc = loc
	if s := p.sessions[key]; s != nil {
		return hitResult(s, f, now, r, node), key, true
	}
	return r, key, false
}

// createFeatureSessions stores the forward entry of cnat-input and, with
// withReturn, its return entry at the OUTPUT location, which learns no client.
// An existing return entry with the same key is kept, as createSessions does.
func (p *Plugin) createFeatureSessions(fwd *session, now time.Time, withReturn bool) {
	p.createSessions(fwd, now, withReturn, sessNoClient)
}

// OutputFeature is cnat-output-ip4 / cnat-output-ip6 (cnat_output_feature_fn)
// for a packet received on inIf and leaving through outIf, a feature of the
// egress interface's output arc after acl-plugin-out. It translates packets
// that match an OUTPUT entry: the replies of flows cnat-input translated, and
// the later packets of flows it source-NATed itself. A new flow is
// source-NATed when the SNAT policy says so (outputSnat).
func (p *Plugin) OutputFeature(f Flow, inIf, outIf uint32, now time.Time) Result {
	p.mu.Lock()
	defer p.mu.Unlock()
	f = f.normalized()
	r, key, done := p.featureSession(f, now, locOutput, "cnat-output")
	if done {
		return r
	}
	return p.outputSnat(f, key, inIf, outIf, now, r)
}
