package govppdriver

import (
	"fmt"
	"net/netip"
	"slices"

	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/cnat"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip"
	"go.fd.io/govpp/binapi/ip_types"

	"github.com/vppsvc/vppsvc/vppcfg"
)

// endpoint is a literal cnat endpoint. SwIfIndex must be ~0: with the Go
// zero value VPP would take the address of local0 (none) and ignore Addr.
func endpoint(ap netip.AddrPort, family netip.Addr) cnat.CnatEndpoint {
	a := ap.Addr()
	if !a.IsValid() {
		a = unspecified(family)
	}
	af := ip_types.ADDRESS_IP4
	if a.Is6() {
		af = ip_types.ADDRESS_IP6
	}
	return cnat.CnatEndpoint{Addr: address(a), SwIfIndex: anyInterface, IfAf: af, Port: ap.Port()}
}

// translation builds the binapi translation of an item.
func translation(t *vppcfg.CNATTranslation) cnat.CnatTranslation {
	var flags uint8
	if t.AllocPort {
		flags |= uint8(cnat.CNAT_TRANSLATION_ALLOC_PORT)
	}
	if t.NoReturnSession {
		flags |= uint8(cnat.CNAT_TRANSLATION_NO_RETURN_SESSION)
	}
	var realIP uint8
	if t.IsRealIP {
		realIP = 1
	}
	out := cnat.CnatTranslation{
		Vip:            endpoint(t.VIP, t.VIP.Addr()),
		ID:             ^uint32(0),
		IPProto:        ip_types.IPProto(t.Protocol),
		IsRealIP:       realIP,
		Flags:          flags,
		LbType:         cnat.CnatLbType(t.LBType),
		FlowHashConfig: ip.IPFlowHashConfigV2(t.FlowHash),
		Paths:          make([]cnat.CnatEndpointTuple, len(t.Paths)),
	}
	for i, p := range t.Paths {
		out.Paths[i] = cnat.CnatEndpointTuple{DstEp: endpoint(p.Dst, t.VIP.Addr()), SrcEp: endpoint(p.Src, t.VIP.Addr())}
	}
	return out
}

// updateTranslation creates a translation or updates it in place: cnat
// keys it by VIP, port and protocol and keeps its ID (and the sessions
// already made). The ID is written to handle.
func updateTranslation(t *vppcfg.CNATTranslation, handle *uint32) *call {
	return &call{
		req:   &cnat.CnatTranslationUpdate{Translation: translation(t)},
		reply: &cnat.CnatTranslationUpdateReply{},
		check: accept(fmt.Sprintf("update cnat translation %s/%s", t.VIP, t.Protocol)),
		done:  func(m api.Message) { *handle = m.(*cnat.CnatTranslationUpdateReply).ID },
	}
}

// delTranslation removes a translation by ID; one already gone is fine.
func delTranslation(id uint32) *call {
	return &call{req: &cnat.CnatTranslationDel{ID: id}, reply: &cnat.CnatTranslationDelReply{},
		check: accept(fmt.Sprintf("delete cnat translation %d", id), api.NO_SUCH_ENTRY)}
}

// snatConfigCalls sets, changes or clears cnat's global SNAT settings. All
// these messages are idempotent, which is what lets the layer re-assert
// them after a resync (VPP cannot dump the policy or the prefixes).
func snatConfigCalls(t vppcfg.OpType, c, old *vppcfg.CNATSnatConfig) []*call {
	if t == vppcfg.OpDelete {
		calls := []*call{setSnatAddresses(&vppcfg.CNATSnatConfig{}), setSnatPolicy(vppcfg.CNATSnatPolicyNone)}
		for _, p := range c.ExcludePrefixes {
			calls = append(calls, addDelExcludePrefix(false, p))
		}
		return calls
	}
	var calls []*call
	if old == nil || old.SnatIP4 != c.SnatIP4 || old.SnatIP6 != c.SnatIP6 || t == vppcfg.OpCreate {
		calls = append(calls, setSnatAddresses(c))
	}
	if old == nil || old.Policy != c.Policy || t == vppcfg.OpCreate {
		calls = append(calls, setSnatPolicy(c.Policy))
	}
	for _, p := range c.ExcludePrefixes {
		if old == nil || t == vppcfg.OpCreate || !slices.Contains(old.ExcludePrefixes, p) {
			calls = append(calls, addDelExcludePrefix(true, p))
		}
	}
	if old != nil {
		for _, p := range old.ExcludePrefixes {
			if !slices.Contains(c.ExcludePrefixes, p) {
				calls = append(calls, addDelExcludePrefix(false, p))
			}
		}
	}
	return calls
}

func setSnatAddresses(c *vppcfg.CNATSnatConfig) *call {
	return &call{
		req:   &cnat.CnatSetSnatAddresses{SnatIP4: ip4(c.SnatIP4), SnatIP6: ip6(c.SnatIP6), SwIfIndex: anyInterface},
		reply: &cnat.CnatSetSnatAddressesReply{},
		check: accept(fmt.Sprintf("set cnat SNAT addresses %s %s", c.SnatIP4, c.SnatIP6)),
	}
}

func setSnatPolicy(p vppcfg.CNATSnatPolicy) *call {
	return &call{
		req:   &cnat.CnatSetSnatPolicy{Policy: cnat.CnatSnatPolicies(p)},
		reply: &cnat.CnatSetSnatPolicyReply{},
		check: accept(fmt.Sprintf("set cnat SNAT policy %s", p)),
	}
}

// addDelExcludePrefix adds or removes a destination never source-NATed. VPP
// answers +1 to the delete of an absent prefix: gone is what we wanted.
func addDelExcludePrefix(isAdd bool, p netip.Prefix) *call {
	what := fmt.Sprintf("%s cnat SNAT exclude prefix %s", verb(isAdd), p)
	check := accept(what)
	if !isAdd {
		check = accept(what, api.VPPApiError(1))
	}
	return &call{
		req:   &cnat.CnatSnatPolicyAddDelExcludePfx{IsAdd: boolU8(isAdd), Prefix: prefix(p)},
		reply: &cnat.CnatSnatPolicyAddDelExcludePfxReply{},
		check: check,
	}
}

// addDelSnatInterface puts an interface into, or out of, one SNAT-policy table.
func addDelSnatInterface(isAdd bool, i *vppcfg.CNATSnatInterface, swIfIndex uint32) *call {
	return &call{
		req: &cnat.CnatSnatPolicyAddDelIf{SwIfIndex: interface_types.InterfaceIndex(swIfIndex), IsAdd: boolU8(isAdd),
			Table: cnat.CnatSnatPolicyTable(i.Table)},
		reply: &cnat.CnatSnatPolicyAddDelIfReply{},
		check: accept(fmt.Sprintf("%s %s in cnat SNAT table %s", verb(isAdd), i.Interface, i.Table)),
	}
}

func boolU8(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// fromTranslation reads a dumped translation back. The dump reports no
// IsRealIP, flags or flow hash (always 0); the layer fills them from the
// desired value.
func fromTranslation(t cnat.CnatTranslation) *vppcfg.CNATTranslation {
	vip := fromAddress(t.Vip.Addr)
	out := &vppcfg.CNATTranslation{
		VIP:      netip.AddrPortFrom(vip, t.Vip.Port),
		Protocol: vppcfg.Protocol(t.IPProto),
		LBType:   vppcfg.CNATLBType(t.LbType),
	}
	for _, p := range t.Paths {
		src := netip.AddrPortFrom(fromAddress(p.SrcEp.Addr), p.SrcEp.Port)
		if src.Addr().IsUnspecified() && src.Port() == 0 {
			src = netip.AddrPort{}
		}
		out.Paths = append(out.Paths, vppcfg.CNATPath{Src: src, Dst: netip.AddrPortFrom(fromAddress(p.DstEp.Addr), p.DstEp.Port)})
	}
	vppcfg.SortCNATPaths(out.Paths)
	return out
}
