package cnat

import (
	"fmt"
	"net/netip"

	"go.fd.io/govpp/binapi/cnat"

	"github.com/vppsvc/vppsvc/fakevpp/internal/apiaddr"
)

// Translation flags as stored in cnat_translation_t.flags. ALLOC_PORT and
// NO_RETURN_SESSION are the API values; flagExclusive is CNAT_FLAG_EXCLUSIVE,
// which cnat_api.c ORs in when IsRealIP is 0. An API Flags value with bit 1
// set therefore also makes a new VIP exclusive.
const (
	flagAllocPort       = uint8(cnat.CNAT_TRANSLATION_ALLOC_PORT)        // 1
	flagExclusive       = uint8(2)                                       // CNAT_FLAG_EXCLUSIVE
	flagNoReturnSession = uint8(cnat.CNAT_TRANSLATION_NO_RETURN_SESSION) // 4
)

// Path (tracker) flags, cnat_trk_flag_t. The API's CNAT_EPT_NO_NAT is 1, which
// is the internal "active" bit and is recomputed; the internal no-NAT bit (2)
// is only read by the cnat-input/output feature nodes, never on the VIP path.
const (
	trkActive       = uint8(1)
	trkTestDisabled = uint8(0x80) // skipped when building a maglev table
)

// path is a cnat_ep_trk_t: a backend (dst) and the source to use (src).
type path struct {
	dst, src endpoint
	flags    uint8 // flags as sent, with trkActive recomputed
	// route is the backend's FIB entry the path tracks while active
	// (routes.go).
	route *backendRoute
}

// active is README.md#endpoints: a path is active only when both endpoints are resolved.
func (pa path) active() bool { return pa.flags&trkActive != 0 }

// track is cnat_tracker_track: recompute the active bit.
func (pa *path) track() {
	if pa.dst.resolved && pa.src.resolved {
		pa.flags |= trkActive
	} else {
		pa.flags &^= trkActive
	}
}

// translation is a cnat_translation_t.
type translation struct {
	id     uint32
	vip    endpoint
	proto  uint8
	flags  uint8
	lbType cnat.CnatLbType
	fhc    uint32 // as sent at creation; 0 = IP_FLOW_HASH_DEFAULT
	paths  []path
	// active lists the indices of the active paths in path order
	// (ct_active_paths); load balancing picks among them.
	active []int
	// maglev maps the 1009 maglev slots to indices into active; nil unless
	// lbType is maglev and a path is active.
	maglev []int
	// client is the VIP address the translation is keyed and referenced on;
	// invalid while the VIP is an unresolved interface.
	client netip.Addr
}

// trKey is the cnat_translation_db key of a resolved VIP. zero spells out
// the padding the compiler would insert: a key without padding is hashed and
// compared as one block of memory instead of field by field.
type trKey struct {
	addr  netip.Addr
	port  uint16
	proto uint8
	zero  [5]uint8
}

func (t *translation) key() trKey { return trKey{addr: t.client, port: t.vip.port, proto: t.proto} }

// restack is cnat_translation_stack: rebuild the active set and, for maglev,
// the lookup table (only when a path is active, as in VPP).
func (t *translation) restack() {
	t.active = t.active[:0]
	for i := range t.paths {
		t.paths[i].track()
		if t.paths[i].active() {
			t.active = append(t.active, i)
		}
	}
	t.maglev = nil
	if t.lbType == cnat.CNAT_LB_TYPE_MAGLEV && len(t.active) > 0 {
		t.maglev = buildMaglev(t)
	}
}

// validProto is ip_proto_decode: the protocol must be one VPP's protocols.def
// names. Numbers 61, 63, 99, 114 and 144–252 are not; 0 (HOPOPT) is.
func validProto(p uint8) bool {
	switch {
	case p == 61, p == 63, p == 99, p == 114:
		return false
	case p >= 144 && p <= 252:
		return false
	}
	return true
}

// TranslationUpdate handles CnatTranslationUpdate (README.md#translations-and-clients).
//
// Order of checks as in vl_api_cnat_translation_update_t_handler: protocol
// (-153), then the path list (empty: VPP 25.10 sizes a vector for index 2³²−1
// and aborts, so the fake answers -7 and records a violation), then each
// path's src and dst endpoint (-97), then the VIP (-97). Errors carry ID ~0.
//
// An existing (VIP address, port, protocol) is updated in place and keeps its
// ID: Flags and the whole path list are replaced; LbType, FlowHashConfig and
// the VIP endpoint as first given are kept. Sessions are not touched.
func (p *Plugin) TranslationUpdate(m *cnat.CnatTranslationUpdate) *cnat.CnatTranslationUpdateReply {
	p.mu.Lock()
	defer p.mu.Unlock()
	in := &m.Translation
	fail := func(rv int32) *cnat.CnatTranslationUpdateReply {
		return &cnat.CnatTranslationUpdateReply{Retval: rv, ID: invalidIndex}
	}
	proto := uint8(in.IPProto)
	if !validProto(proto) {
		return fail(rvInvalidProtocol)
	}
	if len(in.Paths) == 0 {
		p.violate("cnat translation with no paths",
			fmt.Sprintf("CnatTranslationUpdate %s/%d: VPP 25.10 aborts (vec_validate of index 2^32-1); the fake returns -7",
				endpointSummary(in.Vip), proto))
		return fail(rvInvalidValue)
	}
	paths := make([]path, len(in.Paths))
	for i, ap := range in.Paths {
		src, rv := p.decodeField(ap.SrcEp, endpointField{name: "SrcEp", path: i})
		if rv != rvOK {
			return fail(rv)
		}
		dst, rv := p.decodeField(ap.DstEp, endpointField{name: "DstEp", path: i})
		if rv != rvOK {
			return fail(rv)
		}
		paths[i] = path{dst: dst, src: src, flags: ap.Flags}
	}
	vip, rv := p.decodeEndpoint(in.Vip, "Vip")
	if rv != rvOK {
		return fail(rv)
	}
	flags := in.Flags
	if in.IsRealIP == 0 {
		flags |= flagExclusive
	}

	p.resolve(&vip)
	var t *translation
	if vip.resolved {
		p.clientAdd(vip.addr, flags&flagExclusive != 0)
		if id, ok := p.byKey[trKey{addr: vip.addr, port: vip.port, proto: proto}]; ok {
			t = p.translations[id]
		}
	} else if dup := p.findUnresolvedTwin(vip, proto); dup != nil {
		p.violate("cnat translation update of an unresolved interface VIP creates a duplicate",
			fmt.Sprintf("VIP %s proto %d already has ID %d; VPP's lookup key for unresolved VIPs never matches the stored one", vip, proto, dup.id))
	}
	if t == nil {
		t = &translation{
			id:     p.allocID(),
			vip:    vip,
			proto:  proto,
			lbType: in.LbType,
			fhc:    uint32(in.FlowHashConfig),
		}
		p.translations[t.id] = t
		if vip.resolved {
			p.attachClient(t, vip.addr)
		}
	}
	t.flags = flags
	// cnat_translation_update releases every tracker before it tracks the
	// new paths: a backend entry only this translation held goes, even
	// when the backend stays (README.md#backend-routes).
	p.releasePaths(t)
	for i := range paths {
		p.resolve(&paths[i].src)
		p.resolve(&paths[i].dst)
		p.checkFamilies(t, paths[i])
	}
	t.paths = paths
	t.restack()
	p.trackPaths(t)
	return &cnat.CnatTranslationUpdateReply{Retval: rvOK, ID: t.id}
}

// TranslationDel handles CnatTranslationDel: -6 for a free ID, otherwise the
// translation goes and its ID is the next one handed out. Its sessions stay
// until they expire, and so does the VIP's FIB entry while they exist.
func (p *Plugin) TranslationDel(m *cnat.CnatTranslationDel) *cnat.CnatTranslationDelReply {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.get(m.ID) == nil {
		return &cnat.CnatTranslationDelReply{Retval: rvNoSuchEntry}
	}
	p.deleteTranslation(m.ID)
	return &cnat.CnatTranslationDelReply{Retval: rvOK}
}

func (p *Plugin) get(id uint32) *translation {
	if uint64(id) >= uint64(len(p.translations)) {
		return nil
	}
	return p.translations[id]
}

// allocID is pool_get: the most recently freed ID, else the next new one.
func (p *Plugin) allocID() uint32 {
	if n := len(p.freeIDs); n > 0 {
		id := p.freeIDs[n-1]
		p.freeIDs = p.freeIDs[:n-1]
		return id
	}
	p.translations = append(p.translations, nil)
	return uint32(len(p.translations) - 1)
}

func (p *Plugin) deleteTranslation(id uint32) {
	t := p.translations[id]
	p.releasePaths(t)
	if t.client.IsValid() {
		// cnat_remove_translation_from_db deletes the key whatever ID it
		// holds.
		delete(p.byKey, t.key())
		p.clientTranslationDeleted(t.client)
	}
	p.translations[id] = nil
	p.freeIDs = append(p.freeIDs, id)
}

// attachClient keys t on the VIP address a and takes a reference on its
// client (cnat_add_translation_to_db + cnat_client_translation_added). A
// later translation with the same key replaces the db entry, as the bihash
// add does.
func (p *Plugin) attachClient(t *translation, a netip.Addr) {
	t.client = a
	p.byKey[t.key()] = t.id
	p.clients[a].trRef++
}

// vipAddressChanged is cnat_if_addr_add_del_translation_cb for an interface
// VIP. An added address resolves an unresolved VIP. A deleted address
// un-resolves it — VPP forgets the client index before releasing it, so the old
// address keeps its cnat FIB entry for good — and re-resolves to the first
// remaining address.
func (p *Plugin) vipAddressChanged(t *translation, addr netip.Addr, added bool) {
	if added && t.vip.resolved {
		return
	}
	if t.client.IsValid() {
		delete(p.byKey, t.key())
	}
	if !added {
		if t.client.IsValid() {
			p.violate("cnat interface VIP lost its address",
				fmt.Sprintf("translation %d: VPP 25.10 leaks the cnat FIB entry of %s (client reference never released)", t.id, t.client))
		}
		t.vip.resolved = false
		t.client = netip.Addr{}
		a, ok := p.ifAddress(t.vip.sw, t.vip.ip6)
		if !ok {
			return
		}
		addr = a
	}
	t.vip.addr, t.vip.resolved = addr, true
	p.clientAdd(addr, t.flags&flagExclusive != 0)
	p.attachClient(t, addr)
}

// findUnresolvedTwin returns a translation on the same unresolved interface
// VIP key, if any.
func (p *Plugin) findUnresolvedTwin(vip endpoint, proto uint8) *translation {
	for _, t := range p.translations {
		if t != nil && !t.vip.resolved && t.vip.sw == vip.sw && t.vip.ip6 == vip.ip6 &&
			t.vip.port == vip.port && t.proto == proto {
			return t
		}
	}
	return nil
}

// checkFamilies records a path whose resolved endpoints are of another family
// than the VIP: VPP copies the raw ip46 value into the packet (see as46). A
// zero source address is fine in either family (it only means "no SNAT").
func (p *Plugin) checkFamilies(t *translation, pa path) {
	for i, ep := range []endpoint{pa.dst, pa.src} {
		if i == 1 && ep.addr.IsUnspecified() {
			continue
		}
		if ep.resolved && t.vip.resolved && ep.ip6 != t.vip.ip6 {
			p.violate("cnat path mixes address families",
				fmt.Sprintf("translation %d VIP %s path endpoint %s", t.id, t.vip, ep))
		}
	}
}

// endpointSummary renders an undecoded endpoint for violation details.
func endpointSummary(e cnat.CnatEndpoint) string {
	if uint32(e.SwIfIndex) == invalidIndex {
		a, _ := apiaddr.From(e.Addr)
		return fmt.Sprintf("%s:%d", a, e.Port)
	}
	return fmt.Sprintf("sw%d:%d", e.SwIfIndex, e.Port)
}
