package fakevpp

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/acl"
	"go.fd.io/govpp/binapi/acl_types"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip_types"
)

const aclPlugin = "acl"

// aclList is an ACL: its tag and rules, kept both as sent (for the dump) and
// decoded (for matching).
type aclList struct {
	index uint32
	tag   string
	raw   []acl_types.ACLRule
	rules []aclRule
}

// name is how steps and Dump refer to an ACL: its tag, or its index.
func (a *aclList) name() string {
	if a.tag != "" {
		return a.tag
	}
	return fmt.Sprintf("#%d", a.index)
}

// aclRule is a decoded rule.
type aclRule struct {
	action            acl_types.ACLAction
	is6               bool
	src, dst          netip.Prefix
	proto             uint8
	sportLo, sportHi  uint16
	dportLo, dportHi  uint16
	tcpMask, tcpValue uint8
}

// aclBinding is the input and output ACL lists of one interface.
type aclBinding struct {
	in, out []uint32
}

// aclState is the ACL plugin's state.
type aclState struct {
	acls     pool[aclList]
	bindings map[uint32]*aclBinding // sw_if_index → lists
	sessions map[aclSessKey]*aclSession
	timeouts [3]time.Duration // by ACLTimeout
}

func newACLState(*VPP) any {
	return &aclState{bindings: map[uint32]*aclBinding{}, sessions: map[aclSessKey]*aclSession{},
		timeouts: [3]time.Duration{aclTCPEstablished, aclTCPTransient, aclUDPOther}}
}

// ACLTimeout names one of the ACL plugin's reflect-session idle timeouts.
type ACLTimeout int

// The ACL plugin's session timeouts (acl_timeout_e).
const (
	ACLTCPIdle      ACLTimeout = iota // established TCP, default 24 h
	ACLTCPTransient                   // TCP before the handshake or after FIN/RST, default 120 s
	ACLUDPIdle                        // UDP and every other protocol, default 600 s
)

// SetACLSessionTimeout is VPP's "set acl-plugin session timeout {udp idle |
// tcp idle | tcp transient} <seconds>": the binary API has no message for
// it. It applies to existing sessions too (VPP reads the timeout when it
// checks a session); Restart restores the defaults.
func (v *VPP) SetACLSessionTimeout(t ACLTimeout, d time.Duration) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if t >= ACLTCPIdle && t <= ACLUDPIdle {
		v.acl().timeouts[t] = d
	}
}

var aclSlot = stateOf[aclState](aclPlugin)

func (v *VPP) acl() *aclState { return aclSlot.of(v) }

func init() {
	registerPlugin(&plugin{
		name:     aclPlugin,
		order:    40,
		newState: newACLState,
		handlers: handlers(
			handle(aclAddReplace),
			handle(aclDel),
			handle(aclDump),
			handle(aclInterfaceSetACLList),
			handle(aclInterfaceAddDel),
			handle(aclInterfaceListDump),
		),
		input:            []node{{name: "acl-plugin-in-fa", order: orderACLIn, run: aclInputNode}},
		output:           []node{{name: "acl-plugin-out-fa", order: orderACLOut, run: aclOutputNode}},
		interfaceDeleted: aclInterfaceDeleted,
		dump:             aclDumpState,
	})
}

// decodePrefix is acl_api_invalid_prefix: a known family, a length within it
// and no host bits set.
func decodePrefix(p ip_types.Prefix) (netip.Prefix, bool) {
	var a netip.Addr
	switch p.Address.Af {
	case ip_types.ADDRESS_IP4:
		a = netip.AddrFrom4(p.Address.Un.GetIP4())
	case ip_types.ADDRESS_IP6:
		a = netip.AddrFrom16(p.Address.Un.GetIP6())
	default:
		return netip.Prefix{}, false
	}
	pfx, err := a.Prefix(int(p.Len))
	if err != nil || int(p.Len) > a.BitLen() || pfx.Addr() != a {
		return netip.Prefix{}, false
	}
	return netip.PrefixFrom(a, int(p.Len)), true
}

// aclAddReplace is acl_add_list: the tag, then every rule, are validated
// before anything changes.
func aclAddReplace(c *call, req *acl.ACLAddReplace) []api.Message {
	s := c.v.acl()
	r := &acl.ACLAddReplaceReply{ACLIndex: req.ACLIndex}
	r.Retval = func() int32 {
		if len(req.Tag) >= 64 {
			return int32(api.INVALID_VALUE)
		}
		rules := make([]aclRule, 0, len(req.R))
		for _, raw := range req.R {
			src, ok := decodePrefix(raw.SrcPrefix)
			if !ok {
				return int32(api.INVALID_SRC_ADDRESS)
			}
			dst, ok := decodePrefix(raw.DstPrefix)
			if !ok {
				return int32(api.INVALID_DST_ADDRESS)
			}
			if raw.SrcPrefix.Address.Af != raw.DstPrefix.Address.Af {
				return int32(api.INVALID_SRC_ADDRESS)
			}
			if raw.SrcportOrIcmptypeFirst > raw.SrcportOrIcmptypeLast || raw.DstportOrIcmpcodeFirst > raw.DstportOrIcmpcodeLast {
				return int32(api.INVALID_VALUE_2)
			}
			rules = append(rules, aclRule{
				action: raw.IsPermit, is6: src.Addr().Is6(), src: src, dst: dst, proto: uint8(raw.Proto),
				sportLo: raw.SrcportOrIcmptypeFirst, sportHi: raw.SrcportOrIcmptypeLast,
				dportLo: raw.DstportOrIcmpcodeFirst, dportHi: raw.DstportOrIcmpcodeLast,
				tcpMask: raw.TCPFlagsMask, tcpValue: raw.TCPFlagsValue,
			})
		}
		if req.ACLIndex != ^uint32(0) {
			a := s.acls.get(req.ACLIndex)
			if a == nil {
				return int32(api.NO_SUCH_ENTRY)
			}
			// Replacing rules keeps the reflect sessions (no reclassification).
			// req.R is the decoder's own slice (see handlerFunc).
			a.tag, a.raw, a.rules = req.Tag, req.R, rules
			return 0
		}
		a := &aclList{tag: req.Tag, raw: req.R, rules: rules}
		a.index = s.acls.add(a)
		r.ACLIndex = a.index
		return 0
	}()
	return c.reply(r)
}

// aclDel refuses ACLs still applied: input first (-142), then output (-143).
func aclDel(c *call, req *acl.ACLDel) []api.Message {
	s := c.v.acl()
	r := &acl.ACLDelReply{}
	switch {
	case s.acls.get(req.ACLIndex) == nil:
		r.Retval = int32(api.NO_SUCH_ENTRY)
	case s.usedBy(req.ACLIndex, true):
		r.Retval = int32(api.ACL_IN_USE_INBOUND)
	case s.usedBy(req.ACLIndex, false):
		r.Retval = int32(api.ACL_IN_USE_OUTBOUND)
	default:
		s.acls.del(req.ACLIndex)
	}
	return c.reply(r)
}

func (s *aclState) usedBy(idx uint32, input bool) bool {
	for _, b := range s.bindings {
		l := b.out
		if input {
			l = b.in
		}
		if slices.Contains(l, idx) {
			return true
		}
	}
	return false
}

func (s *aclState) binding(sw uint32) *aclBinding {
	b := s.bindings[sw]
	if b == nil {
		b = &aclBinding{}
		s.bindings[sw] = b
	}
	return b
}

// setList is acl_interface_set_inout_acl_list for one direction: a repeated
// ACL gives -116 (the handlers turn it into +1); a change of the set of ACLs
// flushes the interface's reflect sessions.
func (s *aclState) setList(sw uint32, input bool, list []uint32, mayClear *bool) int32 {
	seen := map[uint32]bool{}
	for _, a := range list {
		if s.acls.get(a) == nil {
			return int32(api.NO_SUCH_ENTRY)
		}
		if seen[a] {
			return int32(api.ENTRY_ALREADY_EXISTS)
		}
		seen[a] = true
	}
	b := s.binding(sw)
	old := &b.out
	if input {
		old = &b.in
	}
	changed := len(*old) != len(seen)
	for _, a := range *old {
		if !seen[a] {
			changed = true
		}
	}
	*old = slices.Clone(list)
	if changed && *mayClear {
		s.flush(sw)
		*mayClear = false
	}
	return 0
}

// aclInterfaceSetACLList replaces both lists. Unknown ACLs give -6 with
// nothing applied. The output list is applied first; any error after the
// existence check is reported as +1 (VPP's "rv = rv || …").
func aclInterfaceSetACLList(c *call, req *acl.ACLInterfaceSetACLList) []api.Message {
	v, s := c.v, c.v.acl()
	r := &acl.ACLInterfaceSetACLListReply{}
	sw := uint32(req.SwIfIndex)
	if v.iface(sw) == nil {
		r.Retval = int32(api.INVALID_SW_IF_INDEX)
		return c.reply(r)
	}
	for _, a := range req.Acls {
		if s.acls.get(a) == nil {
			r.Retval = int32(api.NO_SUCH_ENTRY)
			return c.reply(r)
		}
	}
	nIn := min(int(req.NInput), len(req.Acls))
	in, out := req.Acls[:nIn], req.Acls[nIn:]
	mayClear := true
	if rv := s.setList(sw, false, out, &mayClear); rv != 0 {
		r.Retval = 1
		return c.reply(r)
	}
	if rv := s.setList(sw, true, in, &mayClear); rv != 0 {
		r.Retval = 1
	}
	return c.reply(r)
}

// aclInterfaceAddDel is the legacy per-ACL message: adding an ACL already
// in the list gives -142/-143, removing one that is absent -6.
func aclInterfaceAddDel(c *call, req *acl.ACLInterfaceAddDel) []api.Message {
	v, s := c.v, c.v.acl()
	r := &acl.ACLInterfaceAddDelReply{}
	sw := uint32(req.SwIfIndex)
	if v.iface(sw) == nil {
		r.Retval = int32(api.INVALID_SW_IF_INDEX)
		return c.reply(r)
	}
	b := s.binding(sw)
	cur := b.out
	if req.IsInput {
		cur = b.in
	}
	var next []uint32
	if req.IsAdd {
		if slices.Contains(cur, req.ACLIndex) {
			r.Retval = int32(api.ACL_IN_USE_OUTBOUND)
			if req.IsInput {
				r.Retval = int32(api.ACL_IN_USE_INBOUND)
			}
			return c.reply(r)
		}
		next = append(slices.Clone(cur), req.ACLIndex)
	} else {
		i := slices.Index(cur, req.ACLIndex)
		if i < 0 {
			r.Retval = int32(api.NO_SUCH_ENTRY)
			return c.reply(r)
		}
		next = slices.Delete(slices.Clone(cur), i, i+1)
	}
	mayClear := true
	r.Retval = s.setList(sw, req.IsInput, next, &mayClear)
	return c.reply(r)
}

// aclDump: ~0 dumps every ACL in index order, any other index that ACL or
// nothing (so the Go zero value dumps only ACL 0).
func aclDump(c *call, req *acl.ACLDump) []api.Message {
	s := c.v.acl()
	var out []api.Message
	s.acls.each(func(i uint32, a *aclList) bool {
		if req.ACLIndex == ^uint32(0) || req.ACLIndex == i {
			out = append(out, &acl.ACLDetails{ACLIndex: i, Tag: a.tag, Count: uint32(len(a.raw)), R: slices.Clone(a.raw)})
		}
		return true
	})
	return out
}

// aclInterfaceListDump: ~0 lists every interface (local0 and interfaces
// without ACLs included); any other index that interface only.
func aclInterfaceListDump(c *call, req *acl.ACLInterfaceListDump) []api.Message {
	v, s := c.v, c.v.acl()
	var out []api.Message
	v.ifaces.each(func(sw uint32, _ *iface) bool {
		if uint32(req.SwIfIndex) != ^uint32(0) && uint32(req.SwIfIndex) != sw {
			return true
		}
		d := &acl.ACLInterfaceListDetails{SwIfIndex: interface_types.InterfaceIndex(sw)}
		if b := s.bindings[sw]; b != nil {
			d.NInput = uint8(len(b.in))
			d.Acls = append(slices.Clone(b.in), b.out...)
		}
		d.Count = uint8(len(d.Acls))
		out = append(out, d)
		return true
	})
	return out
}

// aclInterfaceDeleted removes the interface's bindings and sessions.
func aclInterfaceDeleted(v *VPP, ifc *iface) {
	s := v.acl()
	delete(s.bindings, ifc.index)
	s.flush(ifc.index)
}

// aclDumpState adds the ACL plugin's sections.
func aclDumpState(v *VPP, w *dumpWriter) {
	s := v.acl()
	s.acls.each(func(_ uint32, a *aclList) bool {
		e := fmt.Sprintf("acl %q (%d rules)", a.tag, len(a.rules))
		for i := range a.rules {
			e += fmt.Sprintf("\n%d: %s", i, a.rules[i].String())
		}
		w.add("acl", "%s", e)
		return true
	})
	names := func(l []uint32) string {
		var out []string
		for _, i := range l {
			if a := s.acls.get(i); a != nil {
				out = append(out, a.name())
			}
		}
		return "[" + strings.Join(out, ", ") + "]"
	}
	for sw, b := range s.bindings {
		if len(b.in) == 0 && len(b.out) == 0 {
			continue
		}
		w.add("acl interfaces", "%s in=%s out=%s", v.ifName(sw), names(b.in), names(b.out))
	}
	if len(s.sessions) > 0 {
		w.add("acl sessions", "reflect=%d", len(s.sessions)/2)
	}
}

func (r *aclRule) String() string {
	action := map[uint8]string{0: "deny", 1: "permit", 2: "permit+reflect"}[uint8(r.action)]
	s := fmt.Sprintf("%s %s %s → %s", action, protoName(r.proto), r.src, r.dst)
	if r.proto == 0 {
		s = fmt.Sprintf("%s any %s → %s", action, r.src, r.dst)
	} else {
		s += fmt.Sprintf(" sport=%d-%d dport=%d-%d", r.sportLo, r.sportHi, r.dportLo, r.dportHi)
		if r.tcpMask != 0 {
			s += fmt.Sprintf(" tcp-flags=%#x/%#x", r.tcpValue, r.tcpMask)
		}
	}
	return s
}
