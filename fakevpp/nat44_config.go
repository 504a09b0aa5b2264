package fakevpp

import (
	"fmt"
	"net/netip"

	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip_types"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/binapi/nat_types"
)

const natPlugin = "nat44-ed"

// anyVRF is ~0: "any VRF" in pools, "use the enable-time inside VRF" in
// mappings.
const anyVRF = ^uint32(0)

// defaultSessions is the per-thread session limit used when enable sends 0.
const defaultSessions = 63 * 1024

// natTimeouts are in seconds.
type natTimeouts struct{ udp, tcpEstablished, tcpTransitory, icmp uint32 }

var defaultTimeouts = natTimeouts{udp: 300, tcpEstablished: 7440, tcpTransitory: 240, icmp: 60}

// natIface is a NAT interface record: a role record in the interface pool,
// or an output-feature record (both flags set, as VPP does internally).
type natIface struct {
	sw              uint32
	inside, outside bool
}

// natAddr is a pool address; vrf is anyVRF when any inside VRF may use it.
type natAddr struct {
	addr netip.Addr
	vrf  uint32
}

// natState is everything NAT44-ED keeps (docs/fakevpp.md#nat44-ed-state-and-messages).
type natState struct {
	enabled               bool
	insideVrf, outsideVrf uint32
	sessionLimit          uint32
	forwarding            bool
	timeouts              natTimeouts
	buckets               uint32            // translation_buckets: set by enable, kept by disable
	vrfLimits             map[uint32]uint32 // nat44_set_session_limit, by VRF
	vrfTables             pool[natVrfTable] // nat44_ed_add_del_vrf_table (nat44_vrf.go)
	ifaces                pool[natIface]
	outputs               pool[natIface]
	fibRefs               map[uint32]int // NAT interfaces per FIB; 0 expires its sessions
	addrs, twiceAddrs     []natAddr
	tableLocks            map[uint32]int // FIB tables NAT created or locked
	mappings              pool[mapping]
	byExt                 map[extKey]*mapping
	byLocal               map[localKey]*mapping
	resolve               []*resolveRec
	addrResolve           []*addrResolve           // pool addresses taken from interfaces (nat44_ifaddr.go)
	regs                  map[natRegKey]int        // receive-entry registrations (nat44_receive.go)
	receive               map[natReceiveKey]uint32 // receive entries: the interface that added each
	sessions              pool[session]
	flows                 map[flowKey]*session
	affinity              map[affKey]*affinityRec
	lru                   sessionLRU
}

func newNATState(v *VPP) any {
	n := &natState{timeouts: defaultTimeouts}
	n.reset(v)
	return n
}

// reset empties every table; timeouts and receive-entry registrations
// survive (semantics: disable keeps them).
func (n *natState) reset(v *VPP) {
	for vrf, k := range n.tableLocks {
		for ; k > 0; k-- {
			v.unlockTable(vrf)
		}
	}
	// Receive-entry registrations survive: what disabling leaves of them
	// is what VPP leaks (disableReceiveEntries).
	t, b, regs, receive := n.timeouts, n.buckets, n.regs, n.receive
	*n = natState{timeouts: t, buckets: b, regs: regs, receive: receive}
	if n.regs == nil {
		n.regs = map[natRegKey]int{}
		n.receive = map[natReceiveKey]uint32{}
	}
	n.fibRefs = map[uint32]int{}
	n.vrfLimits = map[uint32]uint32{}
	n.tableLocks = map[uint32]int{}
	n.byExt = map[extKey]*mapping{}
	n.byLocal = map[localKey]*mapping{}
	n.flows = map[flowKey]*session{}
	n.affinity = map[affKey]*affinityRec{}
	n.lru = newSessionLRU()
}

var natSlot = stateOf[natState](natPlugin)

func (v *VPP) nat() *natState { return natSlot.of(v) }

func init() {
	registerPlugin(&plugin{
		name:     natPlugin,
		order:    30,
		newState: newNATState,
		handlers: handlers(
			handle(natEnableDisable),
			handle(natShowRunningConfig),
			handle(natForwarding),
			handle(natSetTimeouts),
			handle(natInterfaceAddDel),
			handle(natInterfaceDump),
			handle(natOutputInterfaceAddDel),
			handle(natOutputInterfaceGet),
			handle(natAddressRange),
			handle(natAddressDump),
			handle(natInterfaceAddr),
			handle(natInterfaceAddrDump),
			handle(natSetSessionLimit),
			handle(natVrfTableAddDel),
			handle(natVrfRouteAddDel),
			handle(natVrfTablesDump),
			handle(natVrfTablesV2Dump),
			handle(natStaticMappingV2),
			handle(natStaticMappingLegacy),
			handle(natStaticMappingDump),
			handle(natIdentityMapping),
			handle(natIdentityMappingDump),
			handle(natLbStaticMapping),
			handle(natLbLocal),
			handle(natLbStaticMappingDump),
			handle(natDelSession),
			handle(natUserDump),
			handle(natUserSessionDump),
			handle(natUserSessionV2Dump),
			handle(natUserSessionV3Dump),
		),
		input:            []node{{name: "nat44-ed", order: orderNAT44In, run: natInputNode}},
		output:           []node{{name: "nat44-ed-in2out-output", order: orderNAT44Out, run: natOutputNode}},
		interfaceAdded:   natInterfaceAdded,
		interfaceDeleted: natInterfaceDeleted,
		dump:             natDumpState,
	})
}

func ip4(a ip_types.IP4Address) netip.Addr { return netip.AddrFrom4(a) }
func apiIP4(a netip.Addr) ip_types.IP4Address {
	if !a.Is4() {
		return ip_types.IP4Address{}
	}
	return a.As4()
}

func natEnableDisable(c *call, req *nat44_ed.Nat44EdPluginEnableDisable) []api.Message {
	v, n := c.v, c.v.nat()
	r := &nat44_ed.Nat44EdPluginEnableDisableReply{}
	if req.Enable {
		switch {
		case req.Flags&(nat44_ed.NAT44_IS_STATIC_MAPPING_ONLY|nat44_ed.NAT44_IS_CONNECTION_TRACKING) != 0:
			r.Retval = int32(api.UNSUPPORTED)
		case n.enabled:
			r.Retval = int32(api.FEATURE_ALREADY_ENABLED)
		default:
			n.reset(v)
			n.enabled = true
			n.insideVrf, n.outsideVrf = req.InsideVrf, req.OutsideVrf
			// VPP locks the enable-time VRFs (fib_src_hi) and never
			// unlocks them: disabling leaves the tables behind
			// (nat44_plugin_enable / nat44_plugin_disable).
			v.lockTable(req.InsideVrf)
			v.lockTable(req.OutsideVrf)
			n.sessionLimit = req.Sessions
			if n.sessionLimit == 0 {
				n.sessionLimit = defaultSessions
			}
			n.buckets = bihashBuckets(n.sessionLimit)
			n.timeouts = defaultTimeouts
		}
		return c.reply(r)
	}
	if !n.enabled {
		r.Retval = int32(api.FEATURE_ALREADY_DISABLED)
		return c.reply(r)
	}
	n.disableReceiveEntries(v)
	n.reset(v)
	return c.reply(r)
}

// natShowRunningConfig: Sessions is 0 exactly while the plugin is disabled,
// which is how a control plane detects a (restarted) unconfigured VPP.
func natShowRunningConfig(c *call, _ *nat44_ed.Nat44ShowRunningConfig) []api.Message {
	n := c.v.nat()
	r := &nat44_ed.Nat44ShowRunningConfigReply{
		ForwardingEnabled: n.forwarding,
		Timeouts: nat_types.NatTimeouts{
			UDP: n.timeouts.udp, TCPEstablished: n.timeouts.tcpEstablished,
			TCPTransitory: n.timeouts.tcpTransitory, ICMP: n.timeouts.icmp,
		},
		Flags: nat44_ed.NAT44_IS_ENDPOINT_DEPENDENT,
		// VPP 25.10 answers the negation of its IPFIX state
		// (nat_ipfix_logging_enabled, nat/lib/ipfix_logging.c): true while
		// IPFIX logging is off, which it always is here.
		IpfixLoggingEnabled: true,
		TranslationBuckets:  n.buckets,
	}
	if n.enabled {
		r.InsideVrf, r.OutsideVrf, r.Sessions = n.insideVrf, n.outsideVrf, n.sessionLimit
	}
	return c.reply(r)
}

// natSetSessionLimit is nat44_set_session_limit (the API calls it, not
// nat44_update_session_limit): it sets the limit of one VRF's FIB, -1 for
// a VRF without a table. The limit is compared with the number of all
// sessions, not the VRF's own (nat44_ed_maximum_sessions_exceeded), and the
// enable-time Sessions in the running config does not change.
func natSetSessionLimit(c *call, req *nat44_ed.Nat44SetSessionLimit) []api.Message {
	r := &nat44_ed.Nat44SetSessionLimitReply{}
	if !c.v.tableExists(req.VrfID) {
		r.Retval = int32(api.UNSPECIFIED)
		return c.reply(r)
	}
	c.v.nat().vrfLimits[req.VrfID] = req.SessionLimit
	return c.reply(r)
}

// limitFor is the session limit a packet in FIB fib is held to: the
// VRF's own, else VRF 0's, else the enable-time limit. (VPP indexes its
// vector by FIB index and falls back to index 0 past its end; the fake's
// FIB index is the VRF ID.)
func (n *natState) limitFor(fib uint32) uint32 {
	if l, ok := n.vrfLimits[fib]; ok {
		return l
	}
	if l, ok := n.vrfLimits[0]; ok {
		return l
	}
	return n.sessionLimit
}

// bihashBuckets is nat_calc_bihash_buckets (nat/lib/lib.h): the power of
// two nearest to sessions/2.5, the lower one on a tie.
func bihashBuckets(sessions uint32) uint32 {
	n := uint64(float64(sessions) / 2.5)
	lower := uint64(1)
	for lower*2 < n {
		lower *= 2
	}
	if upper := 2 * lower; upper-n < n-lower && upper <= 1<<32-1 {
		return uint32(upper)
	}
	return uint32(lower)
}

// natForwarding always succeeds, even while disabled. Turning forwarding
// off deletes the forwarding-bypass sessions.
func natForwarding(c *call, req *nat44_ed.Nat44ForwardingEnableDisable) []api.Message {
	v, n := c.v, c.v.nat()
	n.forwarding = req.Enable
	if !req.Enable && n.enabled {
		n.sessions.each(func(_ uint32, s *session) bool {
			if s.flags&sfBypass != 0 {
				n.deleteSession(v, s)
			}
			return true
		})
	}
	return c.reply(&nat44_ed.Nat44ForwardingEnableDisableReply{})
}

// natSetTimeouts always succeeds and applies at once to existing sessions
// (expiry is computed from last_heard at each check).
func natSetTimeouts(c *call, req *nat44_ed.NatSetTimeouts) []api.Message {
	c.v.nat().timeouts = natTimeouts{udp: req.UDP, tcpEstablished: req.TCPEstablished, tcpTransitory: req.TCPTransitory, icmp: req.ICMP}
	return c.reply(&nat44_ed.NatSetTimeoutsReply{})
}

func (n *natState) role(sw uint32) *natIface {
	_, r := n.ifaces.find(func(r *natIface) bool { return r.sw == sw })
	return r
}

func (n *natState) output(sw uint32) *natIface {
	_, r := n.outputs.find(func(r *natIface) bool { return r.sw == sw })
	return r
}

// fibRef counts NAT interfaces per FIB; when the last one goes, every session
// of that FIB is invalidated and deleted when next hit (per-VRF sessions).
func (n *natState) fibRef(fib uint32, add bool) {
	if add {
		n.fibRefs[fib]++
		return
	}
	n.fibRefs[fib]--
	if n.fibRefs[fib] > 0 {
		return
	}
	delete(n.fibRefs, fib)
	n.sessions.each(func(_ uint32, s *session) bool {
		if s.inFib == fib || s.outFib == fib {
			s.vrfExpired = true
		}
		return true
	})
}

func natInterfaceAddDel(c *call, req *nat44_ed.Nat44InterfaceAddDelFeature) []api.Message {
	v, n := c.v, c.v.nat()
	r := &nat44_ed.Nat44InterfaceAddDelFeatureReply{}
	sw := uint32(req.SwIfIndex)
	inside := req.Flags&nat_types.NAT_IS_INSIDE != 0
	switch {
	case v.iface(sw) == nil:
		r.Retval = int32(api.INVALID_SW_IF_INDEX)
	case !n.enabled:
		r.Retval = int32(api.UNSUPPORTED)
	case req.IsAdd:
		r.Retval = n.addRole(v, sw, inside)
	default:
		r.Retval = n.delRole(v, sw, inside)
	}
	return c.reply(r)
}

func (n *natState) addRole(v *VPP, sw uint32, inside bool) int32 {
	if n.output(sw) != nil {
		return int32(api.VALUE_EXIST)
	}
	rec := n.role(sw)
	if rec != nil && ((rec.inside && inside) || (rec.outside && !inside)) {
		return 0
	}
	if rec == nil {
		rec = &natIface{sw: sw}
		n.ifaces.add(rec)
	}
	if inside {
		rec.inside = true
	} else {
		rec.outside = true
		n.registerInterface(v, sw, true)
	}
	n.fibRef(0, true)
	return 0
}

// delRole removes a role. On an interface with one role the whole record goes
// whichever role was asked for (VPP quirk), which the fake flags.
func (n *natState) delRole(v *VPP, sw uint32, inside bool) int32 {
	idx, rec := n.ifaces.find(func(r *natIface) bool { return r.sw == sw })
	if rec == nil {
		return int32(api.NO_SUCH_ENTRY)
	}
	if !inside {
		// nat44_ed_del_interface unregisters for the role asked for: when
		// the quirk below drops an outside role on a request for the
		// inside one, its receive entries stay.
		n.registerInterface(v, sw, false)
	}
	if rec.inside && rec.outside {
		if inside {
			rec.inside = false
		} else {
			rec.outside = false
		}
	} else {
		if rec.inside != inside {
			v.violate("NAT interface role delete mismatch",
				fmt.Sprintf("sw_if_index %d has role %s; deleting role %s removed it anyway", sw, roleName(rec), roleName(&natIface{inside: inside, outside: !inside})))
		}
		n.ifaces.del(idx)
	}
	n.fibRef(0, false)
	return 0
}

func roleName(r *natIface) string {
	switch {
	case r.inside && r.outside:
		return "inside+outside"
	case r.inside:
		return "inside"
	default:
		return "outside"
	}
}

// natInterfaceDump lists role records only; output-feature interfaces are
// not included.
func natInterfaceDump(c *call, _ *nat44_ed.Nat44InterfaceDump) []api.Message {
	n := c.v.nat()
	var out []api.Message
	n.ifaces.each(func(_ uint32, r *natIface) bool {
		d := &nat44_ed.Nat44InterfaceDetails{SwIfIndex: interface_types.InterfaceIndex(r.sw)}
		if r.inside {
			d.Flags |= nat_types.NAT_IS_INSIDE
		}
		if r.outside {
			d.Flags |= nat_types.NAT_IS_OUTSIDE
		}
		out = append(out, d)
		return true
	})
	return out
}

func natOutputInterfaceAddDel(c *call, req *nat44_ed.Nat44EdAddDelOutputInterface) []api.Message {
	v, n := c.v, c.v.nat()
	r := &nat44_ed.Nat44EdAddDelOutputInterfaceReply{}
	sw := uint32(req.SwIfIndex)
	switch {
	case v.iface(sw) == nil:
		r.Retval = int32(api.INVALID_SW_IF_INDEX)
	case !n.enabled:
		r.Retval = int32(api.UNSUPPORTED)
	case req.IsAdd:
		if n.role(sw) != nil || n.output(sw) != nil {
			r.Retval = int32(api.VALUE_EXIST)
			break
		}
		n.outputs.add(&natIface{sw: sw, inside: true, outside: true})
		n.registerInterface(v, sw, true)
		n.fibRef(0, true)
	default:
		idx, rec := n.outputs.find(func(r *natIface) bool { return r.sw == sw })
		if rec == nil {
			r.Retval = int32(api.NO_SUCH_ENTRY)
			break
		}
		n.registerInterface(v, sw, false)
		n.outputs.del(idx)
		n.fibRef(0, false)
	}
	return c.reply(r)
}

// natOutputInterfaceGet is a cursor-style "get": details from the cursor on,
// then a reply with Cursor ~0 when the walk is complete. With no output
// interface VPP sends only the reply and never sets Cursor (left 0 here).
func natOutputInterfaceGet(c *call, req *nat44_ed.Nat44EdOutputInterfaceGet) []api.Message {
	n := c.v.nat()
	r := &nat44_ed.Nat44EdOutputInterfaceGetReply{}
	if n.outputs.len() == 0 {
		return c.reply(r)
	}
	var out []api.Message
	n.outputs.each(func(i uint32, o *natIface) bool {
		if i >= req.Cursor {
			out = append(out, &nat44_ed.Nat44EdOutputInterfaceDetails{SwIfIndex: interface_types.InterfaceIndex(o.sw)})
		}
		return true
	})
	r.Cursor = ^uint32(0)
	return append(out, r)
}

// natAddressRange adds or deletes one address at a time and stops at the
// first error without rolling back.
func natAddressRange(c *call, req *nat44_ed.Nat44AddDelAddressRange) []api.Message {
	v, n := c.v, c.v.nat()
	r := &nat44_ed.Nat44AddDelAddressRangeReply{}
	if req.IsAdd && !n.enabled {
		r.Retval = int32(api.UNSUPPORTED)
		return c.reply(r)
	}
	twice := req.Flags&nat_types.NAT_IS_TWICE_NAT != 0
	first, last := ip4(req.FirstIPAddress), ip4(req.LastIPAddress)
	for a := first; a.IsValid() && a.Compare(last) <= 0; a = a.Next() {
		if req.IsAdd {
			r.Retval = n.addPoolAddr(v, a, req.VrfID, twice)
		} else {
			r.Retval = n.delPoolAddr(v, a, twice)
		}
		if r.Retval != 0 || a == last {
			break
		}
	}
	return c.reply(r)
}

// addPoolAddr is nat44_ed_add_address.
func (n *natState) addPoolAddr(v *VPP, a netip.Addr, vrf uint32, twice bool) int32 {
	list := &n.addrs
	if twice {
		list = &n.twiceAddrs
	}
	if indexAddr(*list, a) >= 0 {
		return int32(api.VALUE_EXIST)
	}
	if vrf != anyVRF {
		n.lockTable(v, vrf)
	}
	*list = append(*list, natAddr{addr: a, vrf: vrf})
	if !twice {
		n.registerAddr(v, a, true)
	}
	return 0
}

// delPoolAddr is nat44_ed_del_address: the dynamic sessions using the
// address go with it.
func (n *natState) delPoolAddr(v *VPP, a netip.Addr, twice bool) int32 {
	list := &n.addrs
	if twice {
		list = &n.twiceAddrs
	}
	i := indexAddr(*list, a)
	if i < 0 {
		return int32(api.NO_SUCH_ENTRY)
	}
	// Dynamic sessions using the address go, for both pools
	// (nat44_ed_del_address sweeps them whichever pool it is).
	n.sessions.each(func(_ uint32, s *session) bool {
		if s.flags&sfStatic == 0 && s.out.Addr() == a {
			n.deleteSession(v, s)
		}
		return true
	})
	if (*list)[i].vrf != anyVRF {
		n.unlockTable(v, (*list)[i].vrf)
	}
	// vec_del1: the last element moves into the freed slot.
	l := *list
	l[i] = l[len(l)-1]
	*list = l[:len(l)-1]
	if !twice {
		n.registerAddr(v, a, false)
	}
	return 0
}

func indexAddr(l []natAddr, a netip.Addr) int {
	for i, x := range l {
		if x.addr == a {
			return i
		}
	}
	return -1
}

// natAddressDump lists the normal pool, then the twice-NAT pool.
func natAddressDump(c *call, _ *nat44_ed.Nat44AddressDump) []api.Message {
	n := c.v.nat()
	var out []api.Message
	for _, a := range n.addrs {
		out = append(out, &nat44_ed.Nat44AddressDetails{IPAddress: apiIP4(a.addr), VrfID: a.vrf})
	}
	for _, a := range n.twiceAddrs {
		out = append(out, &nat44_ed.Nat44AddressDetails{IPAddress: apiIP4(a.addr), VrfID: a.vrf, Flags: nat_types.NAT_IS_TWICE_NAT})
	}
	return out
}

// natInterfaceAdded applies the interface-bound mappings waiting for the new
// interface's address.
func natInterfaceAdded(v *VPP, ifc *iface) {
	n := v.nat()
	if !n.enabled {
		return
	}
	addr, ok := v.firstAddr(ifc, false)
	if !ok {
		return
	}
	for _, rp := range append([]*resolveRec(nil), n.resolve...) {
		if rp.sw != ifc.index || rp.resolved {
			continue
		}
		if n.addStaticInternal(v, rp.args(addr)) == 0 {
			rp.resolved = true
		}
	}
}

// natInterfaceDeleted is VPP's interface-delete callback (roles and output
// feature removed silently) plus the address-delete callbacks of its
// addresses (nat44_ifaddr.go).
func natInterfaceDeleted(v *VPP, ifc *iface) {
	n := v.nat()
	if !n.enabled {
		return
	}
	if rec := n.role(ifc.index); rec != nil {
		if rec.inside {
			n.delRole(v, ifc.index, true)
		}
		if rec.outside && n.role(ifc.index) != nil {
			n.delRole(v, ifc.index, false)
		}
	}
	if idx, rec := n.outputs.find(func(r *natIface) bool { return r.sw == ifc.index }); rec != nil {
		n.registerInterface(v, ifc.index, false)
		n.outputs.del(idx)
		n.fibRef(0, false)
	}
	// VPP deletes the interface's addresses one by one
	// (ip4_sw_interface_add_del), and the address callbacks run for each:
	// mappings resolved from them go, pool addresses taken from them go;
	// the records stay, pending.
	all := ifc.addrs
	defer func() { ifc.addrs = all }()
	for i, p := range all {
		ifc.addrs = all[i+1:]
		if p.Addr().Is4() {
			natAddressChanged(v, ifc, p.Addr(), false)
		}
	}
}
