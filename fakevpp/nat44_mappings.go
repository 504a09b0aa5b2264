package fakevpp

import (
	"fmt"
	"net/netip"

	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/binapi/nat_types"
)

// mappingKind tells the three kinds of records that share VPP's one
// static-mapping pool and external-key namespace.
type mappingKind uint8

const (
	smStatic mappingKind = iota
	smIdentity
	smLB
)

// smFlagMask are the API flags a mapping keeps.
const smFlagMask = nat_types.NAT_IS_ADDR_ONLY | nat_types.NAT_IS_TWICE_NAT | nat_types.NAT_IS_SELF_TWICE_NAT | nat_types.NAT_IS_OUT2IN_ONLY

// mapping is a static, identity or load-balanced mapping.
type mapping struct {
	index     uint32
	kind      mappingKind
	flags     nat_types.NatConfigFlags // API flags as added, masked with smFlagMask
	local     netip.Addr               // 0.0.0.0 for LB mappings
	localPort uint16
	ext       netip.Addr
	extPort   uint16
	proto     uint8
	vrf       uint32     // resolved local VRF (static mappings)
	poolAddr  netip.Addr // PoolIPAddress: exact twice-NAT source
	tag       string
	identVrfs pool[uint32] // identity mappings: one entry per VRF
	affinity  uint32
	locals    pool[lbLocal] // LB mappings
}

func (m *mapping) addrOnly() bool   { return m.flags&nat_types.NAT_IS_ADDR_ONLY != 0 }
func (m *mapping) out2inOnly() bool { return m.flags&nat_types.NAT_IS_OUT2IN_ONLY != 0 }
func (m *mapping) twice() bool      { return m.flags&nat_types.NAT_IS_TWICE_NAT != 0 }

// selfTwice is SELF_TWICE_NAT without TWICE_NAT (TWICE_NAT wins).
func (m *mapping) selfTwice() bool {
	return !m.twice() && m.flags&nat_types.NAT_IS_SELF_TWICE_NAT != 0
}

// lbLocal is one backend of an LB mapping; cum is its cumulative weight in
// pool order (VPP's "prefix"), kept in 8 bits as VPP keeps it
// (nat44_lb_addr_port_t.prefix is a u8): past 255 it wraps.
type lbLocal struct {
	addr netip.Addr
	port uint16
	prob uint8
	vrf  uint32
	cum  uint8
}

func (l *lbLocal) ep() netip.AddrPort { return netip.AddrPortFrom(l.addr, l.port) }

// extKey is the external key: one namespace for all mappings, no VRF. zero
// spells out the padding the compiler would insert: a key without padding
// is hashed and compared by a map as one block of memory instead of field by
// field, and every request and every packet looks mappings up by it.
type extKey struct {
	addr  netip.Addr
	port  uint16
	proto uint8
	zero  [5]uint8
}

// localKey indexes mappings by local side (not for out2in-only ones). zero
// is padding spelled out, as in extKey.
type localKey struct {
	addr  netip.Addr
	port  uint16
	proto uint8
	zero  uint8
	fib   uint32
}

// resolveRec is an interface-bound mapping record (VPP's sm_to_resolve): the
// external address is the interface's first IPv4 address once it has one.
type resolveRec struct {
	local        netip.Addr
	lport, eport uint16
	proto        uint8
	vrf          uint32 // as sent (~0 is not resolved here)
	sw           uint32
	flags        nat_types.NatConfigFlags
	identity     bool
	poolAddr     netip.Addr
	tag          string
	resolved     bool
}

// smArgs are the arguments of VPP's nat44_ed_add/del_static_mapping.
type smArgs struct {
	local, ext   netip.Addr
	lport, eport uint16
	proto        uint8
	vrf          uint32
	sw           uint32 // ~0 unless interface-bound
	flags        nat_types.NatConfigFlags
	identity     bool
	poolAddr     netip.Addr
	tag          string
}

func (a smArgs) addrOnly() bool   { return a.flags&nat_types.NAT_IS_ADDR_ONLY != 0 }
func (a smArgs) out2inOnly() bool { return a.flags&nat_types.NAT_IS_OUT2IN_ONLY != 0 }

func (r *resolveRec) args(ext netip.Addr) smArgs {
	return smArgs{local: r.local, ext: ext, lport: r.lport, eport: r.eport, proto: r.proto, vrf: r.vrf,
		sw: r.sw, flags: r.flags, identity: r.identity, poolAddr: r.poolAddr, tag: r.tag}
}

func (a smArgs) String() string {
	kind := "static mapping"
	if a.identity {
		kind = "identity mapping"
	}
	return fmt.Sprintf("%s %s:%d ↔ %s:%d proto %d vrf %d flags %s", kind, a.local, a.lport, a.ext, a.eport, a.proto, int32(a.vrf), flagString(a.flags))
}

// staticRequest converts the API message like VPP's handler: ports only when
// not ADDR_ONLY, the external address only when ExternalSwIfIndex is ~0.
func staticRequest(flags nat_types.NatConfigFlags, local, ext netip.Addr, proto uint8, lport, eport uint16, sw interface_types.InterfaceIndex, vrf uint32, pool netip.Addr, tag string) smArgs {
	a := smArgs{local: local, proto: proto, vrf: vrf, sw: uint32(sw), flags: flags & smFlagMask, poolAddr: pool, tag: tag}
	if !a.addrOnly() {
		a.lport, a.eport = lport, eport
	}
	if a.sw == anyVRF {
		a.ext = ext
	} else {
		a.ext = netip.IPv4Unspecified()
	}
	return a
}

func natStaticMappingV2(c *call, req *nat44_ed.Nat44AddDelStaticMappingV2) []api.Message {
	var pool netip.Addr
	if p := ip4(req.PoolIPAddress); !p.IsUnspecified() {
		pool = p
	}
	a := staticRequest(req.Flags, ip4(req.LocalIPAddress), ip4(req.ExternalIPAddress), req.Protocol,
		req.LocalPort, req.ExternalPort, req.ExternalSwIfIndex, req.VrfID, pool, req.Tag)
	return c.reply(&nat44_ed.Nat44AddDelStaticMappingV2Reply{Retval: c.v.nat().staticMapping(c.v, a, req.IsAdd)})
}

func natStaticMappingLegacy(c *call, req *nat44_ed.Nat44AddDelStaticMapping) []api.Message {
	a := staticRequest(req.Flags, ip4(req.LocalIPAddress), ip4(req.ExternalIPAddress), req.Protocol,
		req.LocalPort, req.ExternalPort, req.ExternalSwIfIndex, req.VrfID, netip.Addr{}, req.Tag)
	return c.reply(&nat44_ed.Nat44AddDelStaticMappingReply{Retval: c.v.nat().staticMapping(c.v, a, req.IsAdd)})
}

func natIdentityMapping(c *call, req *nat44_ed.Nat44AddDelIdentityMapping) []api.Message {
	a := smArgs{identity: true, vrf: req.VrfID, sw: uint32(req.SwIfIndex), flags: req.Flags & nat_types.NAT_IS_ADDR_ONLY, tag: req.Tag}
	if !a.addrOnly() {
		a.lport, a.eport, a.proto = req.Port, req.Port, req.Protocol
	}
	if a.sw == anyVRF {
		a.local, a.ext = ip4(req.IPAddress), ip4(req.IPAddress)
	} else {
		a.local, a.ext = netip.IPv4Unspecified(), netip.IPv4Unspecified()
	}
	return c.reply(&nat44_ed.Nat44AddDelIdentityMappingReply{Retval: c.v.nat().staticMapping(c.v, a, req.IsAdd)})
}

// staticMapping is nat44_ed_add/del_static_mapping: flag validation, then the
// interface-bound record if any, then the mapping itself.
func (n *natState) staticMapping(v *VPP, a smArgs, isAdd bool) int32 {
	if !n.enabled {
		return int32(api.UNSUPPORTED)
	}
	if rv := n.validateFlags(v, a); rv != 0 {
		return rv
	}
	if a.sw == anyVRF {
		if isAdd {
			return n.addStaticInternal(v, a)
		}
		return n.delStaticInternal(v, a)
	}
	if a.sw == 0 && isAdd {
		v.violate("mapping bound to local0",
			fmt.Sprintf("%s has ExternalSwIfIndex/SwIfIndex 0 (local0, which never has an address): it stays pending forever; send ^uint32(0) for a literal address", a))
	}
	i := n.findResolve(a)
	if !isAdd {
		if i < 0 {
			return int32(api.NO_SUCH_ENTRY)
		}
		n.delResolve(i)
		ifc := v.iface(a.sw)
		if ifc == nil {
			return 0
		}
		addr, ok := v.firstAddr(ifc, false)
		if !ok {
			return 0
		}
		a.ext = addr
		return n.delStaticInternal(v, a)
	}
	if i >= 0 {
		return int32(api.VALUE_EXIST)
	}
	rp := &resolveRec{local: a.local, lport: a.lport, eport: a.eport, proto: a.proto, vrf: a.vrf, sw: a.sw,
		flags: a.flags, identity: a.identity, poolAddr: a.poolAddr, tag: a.tag}
	n.resolve = append(n.resolve, rp)
	ifc := v.iface(a.sw)
	if ifc == nil {
		return 0
	}
	addr, ok := v.firstAddr(ifc, false)
	if !ok {
		return 0
	}
	a.ext = addr
	rp.resolved = true
	rv := n.addStaticInternal(v, a)
	if rv != 0 {
		if j := n.findResolve(a); j >= 0 {
			n.delResolve(j)
		}
	}
	return rv
}

// validateFlags rejects combinations VPP refuses. ADDR_ONLY with (SELF_)TWICE_NAT
// is refused with -126 and flagged, because a control plane that sends it
// expects something VPP cannot do.
func (n *natState) validateFlags(v *VPP, a smArgs) int32 {
	twice := a.flags&(nat_types.NAT_IS_TWICE_NAT|nat_types.NAT_IS_SELF_TWICE_NAT) != 0
	if a.identity && a.out2inOnly() {
		return int32(api.UNSUPPORTED)
	}
	if twice && (a.addrOnly() || a.identity) {
		v.violate("ADDR_ONLY with TWICE_NAT", fmt.Sprintf("%s: twice-NAT cannot be combined with an address-only mapping (VPP returns -126)", a))
		return int32(api.UNSUPPORTED)
	}
	return 0
}

// findResolve is nat44_ed_get_resolve_record.
func (n *natState) findResolve(a smArgs) int {
	for i, rp := range n.resolve {
		if rp.sw != a.sw || rp.vrf != a.vrf {
			continue
		}
		bothAddrOnly := rp.flags&nat_types.NAT_IS_ADDR_ONLY != 0 && a.addrOnly()
		switch {
		case rp.identity && a.identity:
			if !bothAddrOnly && (rp.eport != a.eport || rp.proto != a.proto) {
				continue
			}
		case rp.local == a.local:
			if !bothAddrOnly && (rp.lport != a.lport || rp.eport != a.eport || rp.proto != a.proto) {
				continue
			}
		default:
			continue
		}
		return i
	}
	return -1
}

// delResolve removes record i like vec_del1: the last record moves into its
// slot, so the dump order changes.
func (n *natState) delResolve(i int) {
	last := len(n.resolve) - 1
	n.resolve[i] = n.resolve[last]
	n.resolve = n.resolve[:last]
}

// resolveVRF maps ~0 to the enable-time inside VRF.
func (n *natState) resolveVRF(vrf uint32) uint32 {
	if vrf == anyVRF {
		return n.insideVrf
	}
	return vrf
}

// addStaticInternal is nat44_ed_add_static_mapping_internal.
func (n *natState) addStaticInternal(v *VPP, a smArgs) int32 {
	if a.addrOnly() {
		a.lport, a.eport, a.proto = 0, 0, 0
	}
	if a.identity {
		a.lport, a.local = a.eport, a.ext
	}
	if m := n.byExt[extKey{addr: a.ext, port: a.eport, proto: a.proto}]; m != nil {
		// Only an identity mapping accepts the same key again, as another VRF.
		if m.kind != smIdentity {
			return int32(api.VALUE_EXIST)
		}
		vrf := n.resolveVRF(a.vrf)
		if _, dup := m.identVrfs.find(func(x *uint32) bool { return *x == vrf }); dup != nil {
			return int32(api.VALUE_EXIST)
		}
		if !a.identity {
			v.violate("static mapping merged into identity mapping",
				fmt.Sprintf("%s has the external key of identity mapping %s:%d; VPP silently adds VRF %d to the identity mapping and returns 0", a, m.ext, m.extPort, vrf))
		}
		vv := vrf
		m.identVrfs.add(&vv)
		n.lockTable(v, vrf)
		n.byLocal[localKey{addr: m.local, port: m.localPort, proto: m.proto, fib: vrf}] = m
		return 0
	}
	vrf := n.resolveVRF(a.vrf)
	n.lockTable(v, vrf)
	if !a.out2inOnly() && !a.identity {
		if n.byLocal[localKey{addr: a.local, port: a.lport, proto: a.proto, fib: vrf}] != nil {
			n.unlockTable(v, vrf)
			return int32(api.VALUE_EXIST)
		}
	}
	m := &mapping{kind: smStatic, flags: a.flags, local: a.local, localPort: a.lport, ext: a.ext, extPort: a.eport,
		proto: a.proto, poolAddr: a.poolAddr, tag: a.tag}
	if a.identity {
		m.kind = smIdentity
		vv := vrf
		m.identVrfs.add(&vv)
	} else {
		m.vrf = vrf
	}
	m.index = n.mappings.add(m)
	if !a.out2inOnly() {
		n.byLocal[localKey{addr: m.local, port: m.localPort, proto: m.proto, fib: vrf}] = m
	}
	n.byExt[extKey{addr: m.ext, port: m.extPort, proto: m.proto}] = m
	n.registerAddr(v, m.ext, true)
	return 0
}

// delStaticInternal is nat44_ed_del_static_mapping_internal: the mapping is
// found by external key only; the local key removed is the one in the
// request, so a request that differs from the add corrupts the indexes.
func (n *natState) delStaticInternal(v *VPP, a smArgs) int32 {
	if a.addrOnly() {
		a.lport, a.eport, a.proto = 0, 0, 0
	}
	if a.identity {
		a.lport, a.local = a.eport, a.ext
	}
	m := n.byExt[extKey{addr: a.ext, port: a.eport, proto: a.proto}]
	if m == nil {
		return int32(api.NO_SUCH_ENTRY)
	}
	var fib uint32
	if a.identity {
		if m.kind != smIdentity {
			return int32(api.NO_SUCH_ENTRY)
		}
		vrf := n.resolveVRF(a.vrf)
		idx, x := m.identVrfs.find(func(x *uint32) bool { return *x == vrf })
		if x == nil {
			return int32(api.NO_SUCH_ENTRY)
		}
		m.identVrfs.del(idx)
		fib = vrf
	} else {
		switch {
		case m.kind != smStatic:
			v.violate("static mapping delete on another kind",
				fmt.Sprintf("%s deletes an %s mapping's key through the static-mapping message; VPP half-deletes it", a, kindName(m.kind)))
		case m.flags != a.flags:
			v.violate("mapping deleted with different flags",
				fmt.Sprintf("%s: added with flags %s; VPP's indexes are left inconsistent", a, flagString(m.flags)))
		case !a.out2inOnly() && (m.local != a.local || m.localPort != a.lport || m.vrf != n.resolveVRF(a.vrf)):
			v.violate("mapping deleted with different local",
				fmt.Sprintf("%s: the mapping's local is %s:%d vrf %d; VPP removes the request's local key and keeps the mapping's", a, m.local, m.localPort, m.vrf))
		}
		fib = m.vrf
	}
	if !a.out2inOnly() {
		delete(n.byLocal, localKey{addr: a.local, port: a.lport, proto: a.proto, fib: fib})
	}
	n.deleteStaticSessions(v, m.local, m.localPort, m.proto, fib, a.addrOnly(), a.ext, a.eport)
	n.unlockTable(v, fib)
	remove := m.kind == smStatic || (m.kind == smIdentity && m.identVrfs.len() == 0)
	if remove {
		delete(n.byExt, extKey{addr: a.ext, port: a.eport, proto: a.proto})
		n.mappings.del(m.index)
		n.registerAddr(v, a.ext, false)
	}
	return 0
}

func kindName(k mappingKind) string {
	switch k {
	case smIdentity:
		return "identity"
	case smLB:
		return "load-balanced"
	default:
		return "static"
	}
}

// flagString renders NAT config flags compactly for steps and dumps.
func flagString(f nat_types.NatConfigFlags) string {
	names := []struct {
		f nat_types.NatConfigFlags
		s string
	}{
		{nat_types.NAT_IS_ADDR_ONLY, "addr-only"}, {nat_types.NAT_IS_TWICE_NAT, "twice-nat"},
		{nat_types.NAT_IS_SELF_TWICE_NAT, "self-twice-nat"}, {nat_types.NAT_IS_OUT2IN_ONLY, "out2in-only"},
		{nat_types.NAT_IS_INSIDE, "inside"}, {nat_types.NAT_IS_OUTSIDE, "outside"},
	}
	s := ""
	for _, x := range names {
		if f&x.f != 0 {
			if s != "" {
				s += "|"
			}
			s += x.s
		}
	}
	if s == "" {
		return "none"
	}
	return s
}

// natStaticMappingDump lists static mappings in pool order, then every
// non-identity interface-bound record (a resolved one therefore appears
// twice).
func natStaticMappingDump(c *call, _ *nat44_ed.Nat44StaticMappingDump) []api.Message {
	n := c.v.nat()
	var out []api.Message
	n.mappings.each(func(_ uint32, m *mapping) bool {
		if m.kind != smStatic {
			return true
		}
		d := &nat44_ed.Nat44StaticMappingDetails{
			Flags: m.flags, LocalIPAddress: apiIP4(m.local), ExternalIPAddress: apiIP4(m.ext),
			ExternalSwIfIndex: interface_types.InterfaceIndex(anyVRF), VrfID: m.vrf, Tag: m.tag,
		}
		if !m.addrOnly() {
			d.Protocol, d.LocalPort, d.ExternalPort = m.proto, m.localPort, m.extPort
		}
		out = append(out, d)
		return true
	})
	for _, rp := range n.resolve {
		if rp.identity {
			continue
		}
		d := &nat44_ed.Nat44StaticMappingDetails{
			Flags:          rp.flags & (nat_types.NAT_IS_TWICE_NAT | nat_types.NAT_IS_ADDR_ONLY),
			LocalIPAddress: apiIP4(rp.local), ExternalSwIfIndex: interface_types.InterfaceIndex(rp.sw),
			VrfID: rp.vrf, Tag: rp.tag,
		}
		if rp.flags&nat_types.NAT_IS_ADDR_ONLY == 0 {
			d.Protocol, d.LocalPort, d.ExternalPort = rp.proto, rp.lport, rp.eport
		}
		out = append(out, d)
	}
	return out
}

// natIdentityMappingDump lists one entry per (identity mapping, VRF), then
// the identity interface-bound records.
func natIdentityMappingDump(c *call, _ *nat44_ed.Nat44IdentityMappingDump) []api.Message {
	n := c.v.nat()
	var out []api.Message
	n.mappings.each(func(_ uint32, m *mapping) bool {
		if m.kind != smIdentity {
			return true
		}
		m.identVrfs.each(func(_ uint32, vrf *uint32) bool {
			out = append(out, &nat44_ed.Nat44IdentityMappingDetails{
				Flags: m.flags & nat_types.NAT_IS_ADDR_ONLY, IPAddress: apiIP4(m.local), Port: m.localPort,
				Protocol: m.proto, SwIfIndex: interface_types.InterfaceIndex(anyVRF), VrfID: *vrf, Tag: m.tag,
			})
			return true
		})
		return true
	})
	for _, rp := range n.resolve {
		if !rp.identity {
			continue
		}
		out = append(out, &nat44_ed.Nat44IdentityMappingDetails{
			Flags: rp.flags & nat_types.NAT_IS_ADDR_ONLY, Port: rp.lport, Protocol: rp.proto,
			SwIfIndex: interface_types.InterfaceIndex(rp.sw), VrfID: rp.vrf, Tag: rp.tag,
		})
	}
	return out
}

// deleteStaticSessions is nat_ed_static_mapping_del_sessions: static, non-LB
// sessions of the mapping's local; for a port mapping only the first one
// found is deleted (VPP quirk: the loop breaks after one).
func (n *natState) deleteStaticSessions(v *VPP, local netip.Addr, lport uint16, proto uint8, fib uint32, addrOnly bool, ext netip.Addr, eport uint16) {
	deleted, left := false, 0
	n.sessions.each(func(_ uint32, s *session) bool {
		if s.inFib != fib || s.in.Addr() != local {
			return true
		}
		if !addrOnly && (s.out.Addr() != ext || s.out.Port() != eport || s.in.Port() != lport || s.proto != proto) {
			return true
		}
		if s.flags&sfLB != 0 || s.flags&sfStatic == 0 {
			return true
		}
		if deleted && !addrOnly {
			left++
			return true
		}
		n.deleteSession(v, s)
		deleted = true
		return true
	})
	if left > 0 {
		v.violate("static mapping delete left sessions",
			fmt.Sprintf("%s:%d ↔ %s:%d: VPP deletes only the first session of a port mapping; %d more keep translating until they time out", local, lport, ext, eport, left))
	}
}

// natLbStaticMapping adds or deletes an LB mapping.
func natLbStaticMapping(c *call, req *nat44_ed.Nat44AddDelLbStaticMapping) []api.Message {
	v, n := c.v, c.v.nat()
	var flags nat_types.NatConfigFlags
	if req.Flags&nat_types.NAT_IS_TWICE_NAT != 0 {
		flags |= nat_types.NAT_IS_TWICE_NAT
	} else if req.Flags&nat_types.NAT_IS_SELF_TWICE_NAT != 0 {
		flags |= nat_types.NAT_IS_SELF_TWICE_NAT
	}
	flags |= req.Flags & nat_types.NAT_IS_OUT2IN_ONLY
	key := extKey{addr: ip4(req.ExternalAddr), port: req.ExternalPort, proto: req.Protocol}
	r := &nat44_ed.Nat44AddDelLbStaticMappingReply{}
	if !n.enabled {
		r.Retval = int32(api.UNSUPPORTED)
		return c.reply(r)
	}
	if req.IsAdd {
		r.Retval = n.addLB(v, key, flags, req)
	} else {
		r.Retval = n.delLB(v, key, flags)
	}
	return c.reply(r)
}

func (n *natState) addLB(v *VPP, key extKey, flags nat_types.NatConfigFlags, req *nat44_ed.Nat44AddDelLbStaticMapping) int32 {
	if n.byExt[key] != nil {
		return int32(api.VALUE_EXIST)
	}
	if len(req.Locals) < 2 {
		return int32(api.INVALID_VALUE)
	}
	if flags&nat_types.NAT_IS_OUT2IN_ONLY == 0 && indexAddr(n.addrs, key.addr) < 0 {
		return int32(api.NO_SUCH_ENTRY)
	}
	if len(req.Locals) > 255 {
		v.violate("LB mapping with more than 255 locals",
			fmt.Sprintf("%s:%d has %d locals; VPP's decoder loops on a u8 index and never returns", key.addr, key.port, len(req.Locals)))
	}
	m, block := newLBMapping(len(req.Locals))
	*m = mapping{kind: smLB, flags: flags, local: netip.IPv4Unspecified(), ext: key.addr, extPort: key.port,
		proto: key.proto, affinity: req.Affinity, tag: req.Tag, locals: m.locals}
	m.index = n.mappings.add(m)
	n.byExt[key] = m
	for i, l := range req.Locals {
		loc := &block[i]
		*loc = lbLocal{addr: ip4(l.Addr), port: l.Port, prob: l.Probability, vrf: l.VrfID}
		if !m.out2inOnly() {
			// VPP registers LB locals in FIB 0 at add time, whatever VrfID says.
			n.byLocal[localKey{addr: loc.addr, port: loc.port, proto: m.proto, fib: 0}] = m
			if loc.vrf != 0 {
				v.violate("LB local in a non-zero VRF",
					fmt.Sprintf("LB %s:%d local %s VRF %d: VPP indexes it in FIB 0 at add time and removes it from FIB %d at delete", key.addr, key.port, loc.ep(), loc.vrf, loc.vrf))
			}
		}
		m.locals.add(loc)
	}
	n.lockLocalTables(v, block)
	m.recomputeWeights()
	if m.totalWeight() == 0 {
		v.violate("LB probabilities all 0", fmt.Sprintf("%s:%d: VPP divides by zero on the first packet; the fake drops it", key.addr, key.port))
	}
	return 0
}

// lockLocalTables takes a lock on the table of each local's VRF, as VPP does
// for each local it adds, with one update for each run of locals in one VRF.
func (n *natState) lockLocalTables(v *VPP, locals []lbLocal) {
	for i := 0; i < len(locals); {
		j := i + 1
		for j < len(locals) && locals[j].vrf == locals[i].vrf {
			j++
		}
		n.lockTableN(v, locals[i].vrf, j-i)
		i = j
	}
}

// lbMapping is an LB mapping allocated together with its first locals: the
// usual one (two locals: two backends, or one and the renderers'
// placeholder) is one allocation instead of three.
type lbMapping struct {
	mapping
	block [2]lbLocal
	items [2]*lbLocal
}

// newLBMapping returns an empty LB mapping whose locals pool has room for n
// locals, and n zero locals to fill (all in as few allocations as it can).
func newLBMapping(n int) (*mapping, []lbLocal) {
	if n > len(lbMapping{}.block) {
		m := &mapping{}
		m.locals.items = make([]*lbLocal, 0, n)
		return m, make([]lbLocal, n)
	}
	lm := &lbMapping{}
	lm.locals.items = lm.items[:0]
	return &lm.mapping, lm.block[:n]
}

func (m *mapping) recomputeWeights() {
	var cum uint8
	m.locals.each(func(_ uint32, l *lbLocal) bool {
		cum += l.prob // wraps past 255, as VPP's u8 prefix does
		l.cum = cum
		return true
	})
}

func (m *mapping) totalWeight() uint32 {
	var t uint32
	m.locals.each(func(_ uint32, l *lbLocal) bool {
		t += uint32(l.prob)
		return true
	})
	return t
}

func (n *natState) delLB(v *VPP, key extKey, flags nat_types.NatConfigFlags) int32 {
	m := n.byExt[key]
	if m == nil {
		return int32(api.NO_SUCH_ENTRY)
	}
	if m.kind != smLB {
		return int32(api.INVALID_VALUE)
	}
	if m.flags != flags {
		v.violate("mapping deleted with different flags",
			fmt.Sprintf("LB %s:%d: added with %s, deleted with %s; VPP's local index is left inconsistent", key.addr, key.port, flagString(m.flags), flagString(flags)))
	}
	delete(n.byExt, key)
	m.locals.each(func(_ uint32, l *lbLocal) bool {
		n.unlockTable(v, l.vrf)
		if flags&nat_types.NAT_IS_OUT2IN_ONLY == 0 {
			delete(n.byLocal, localKey{addr: l.addr, port: l.port, proto: m.proto, fib: l.vrf})
		}
		n.deleteLBSessions(v, l.addr, l.port)
		return true
	})
	n.flushAffinity(m)
	n.mappings.del(m.index)
	return 0
}

// deleteLBSessions deletes every LB session toward addr:port, whichever LB
// mapping created it.
func (n *natState) deleteLBSessions(v *VPP, addr netip.Addr, port uint16) {
	n.sessions.each(func(_ uint32, s *session) bool {
		if s.flags&sfLB != 0 && s.in.Addr() == addr && s.in.Port() == port {
			n.deleteSession(v, s)
		}
		return true
	})
}

// natLbLocal adds or deletes one backend of an LB mapping.
func natLbLocal(c *call, req *nat44_ed.Nat44LbStaticMappingAddDelLocal) []api.Message {
	v, n := c.v, c.v.nat()
	r := &nat44_ed.Nat44LbStaticMappingAddDelLocalReply{}
	r.Retval = func() int32 {
		if !n.enabled {
			return int32(api.UNSUPPORTED)
		}
		m := n.byExt[extKey{addr: ip4(req.ExternalAddr), port: req.ExternalPort, proto: req.Protocol}]
		if m == nil {
			return int32(api.NO_SUCH_ENTRY)
		}
		if m.kind != smLB {
			return int32(api.INVALID_VALUE)
		}
		addr, port, vrf := ip4(req.Local.Addr), req.Local.Port, req.Local.VrfID
		idx, match := m.locals.find(func(l *lbLocal) bool { return l.addr == addr && l.port == port && l.vrf == vrf })
		if req.IsAdd {
			if match != nil {
				return int32(api.VALUE_EXIST)
			}
			n.lockTable(v, vrf)
			if !m.out2inOnly() {
				n.byLocal[localKey{addr: addr, port: port, proto: m.proto, fib: vrf}] = m
			}
			m.locals.add(&lbLocal{addr: addr, port: port, prob: req.Local.Probability, vrf: vrf})
		} else {
			if match == nil {
				return int32(api.NO_SUCH_ENTRY)
			}
			if m.locals.len() < 3 {
				return int32(api.UNSPECIFIED)
			}
			n.unlockTable(v, vrf)
			if !m.out2inOnly() {
				delete(n.byLocal, localKey{addr: addr, port: port, proto: m.proto, fib: vrf})
			}
			n.deleteLBSessions(v, addr, port)
			m.locals.del(idx)
		}
		m.recomputeWeights()
		if m.totalWeight() == 0 {
			v.violate("LB probabilities all 0", fmt.Sprintf("%s:%d: VPP divides by zero on the first packet; the fake drops it", m.ext, m.extPort))
		}
		return 0
	}()
	return c.reply(r)
}

// natLbStaticMappingDump lists LB mappings. VPP 25.10 never fills Affinity in
// the details (it is always 0), and the fake reproduces that.
func natLbStaticMappingDump(c *call, _ *nat44_ed.Nat44LbStaticMappingDump) []api.Message {
	n := c.v.nat()
	var out []api.Message
	n.mappings.each(func(_ uint32, m *mapping) bool {
		if m.kind != smLB {
			return true
		}
		d := &nat44_ed.Nat44LbStaticMappingDetails{ExternalAddr: apiIP4(m.ext), ExternalPort: m.extPort,
			Protocol: m.proto, Flags: m.flags, Tag: m.tag}
		m.locals.each(func(_ uint32, l *lbLocal) bool {
			d.Locals = append(d.Locals, nat44_ed.Nat44LbAddrPort{Addr: apiIP4(l.addr), Port: l.port, Probability: l.prob, VrfID: l.vrf})
			return true
		})
		d.LocalNum = uint32(len(d.Locals))
		out = append(out, d)
		return true
	})
	return out
}
