package govppdriver

import (
	"fmt"

	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/binapi/nat_types"

	"github.com/vppsvc/vppsvc/vppcfg"
)

// anyInterface is VPP's ~0: "no interface, use the literal address". The Go
// zero value 0 would mean local0, which never has an address, and leave a
// mapping silently pending forever.
const anyInterface = interface_types.InterfaceIndex(^uint32(0))

func verb(isAdd bool) string {
	if isAdd {
		return "add"
	}
	return "delete"
}

// natGlobalCalls enables, updates or disables the NAT44-ED plugin. Enable
// resets forwarding and timeouts, so they are sent after it; zero timeouts
// are sent as VPP's defaults (VPP takes 0 literally: sessions would expire
// at once). Disabling deletes every NAT44 object in VPP.
func natGlobalCalls(op *vppcfg.Op, g *vppcfg.NAT44Global) []*call {
	switch op.Type {
	case vppcfg.OpDelete:
		return []*call{{
			req:   &nat44_ed.Nat44EdPluginEnableDisable{Enable: false},
			reply: &nat44_ed.Nat44EdPluginEnableDisableReply{},
			check: accept("disable NAT44", api.FEATURE_ALREADY_DISABLED),
		}}
	case vppcfg.OpUpdate:
		old := op.Old.(*vppcfg.NAT44Global)
		var calls []*call
		if old.Forwarding != g.Forwarding {
			calls = append(calls, forwarding(g.Forwarding))
		}
		if vppcfg.EffectiveTimeouts(old.Timeouts) != vppcfg.EffectiveTimeouts(g.Timeouts) {
			calls = append(calls, timeouts(g.Timeouts))
		}
		return calls
	}
	calls := []*call{{
		req: &nat44_ed.Nat44EdPluginEnableDisable{Enable: true, InsideVrf: g.InsideVRF, OutsideVrf: g.OutsideVRF,
			Sessions: g.SessionLimit},
		reply: &nat44_ed.Nat44EdPluginEnableDisableReply{},
		check: accept("enable NAT44"),
	}}
	if g.Forwarding {
		calls = append(calls, forwarding(true))
	}
	if vppcfg.EffectiveTimeouts(g.Timeouts) != vppcfg.EffectiveTimeouts(vppcfg.NAT44Timeouts{}) {
		calls = append(calls, timeouts(g.Timeouts))
	}
	return calls
}

func forwarding(on bool) *call {
	return &call{
		req:   &nat44_ed.Nat44ForwardingEnableDisable{Enable: on},
		reply: &nat44_ed.Nat44ForwardingEnableDisableReply{},
		check: accept(fmt.Sprintf("set NAT44 forwarding %t", on)),
	}
}

func timeouts(t vppcfg.NAT44Timeouts) *call {
	t = vppcfg.EffectiveTimeouts(t)
	return &call{
		req: &nat44_ed.NatSetTimeouts{UDP: t.UDP, TCPEstablished: t.TCPEstablished,
			TCPTransitory: t.TCPTransitory, ICMP: t.ICMP},
		reply: &nat44_ed.NatSetTimeoutsReply{},
		check: accept("set NAT44 timeouts"),
	}
}

// addDelAddress adds or removes one pool address (a range of one).
func addDelAddress(isAdd bool, a *vppcfg.NAT44Address) *call {
	var flags nat_types.NatConfigFlags
	if a.TwiceNAT {
		flags = nat_types.NAT_IS_TWICE_NAT
	}
	return &call{
		req: &nat44_ed.Nat44AddDelAddressRange{FirstIPAddress: ip4(a.Addr), LastIPAddress: ip4(a.Addr),
			VrfID: a.VRF, IsAdd: isAdd, Flags: flags},
		reply: &nat44_ed.Nat44AddDelAddressRangeReply{},
		check: deleteTolerant(isAdd, fmt.Sprintf("%s NAT44 address %s", verb(isAdd), a.Addr)),
	}
}

// addDelInterfaceRole sets or clears one NAT role of an interface. Only the
// INSIDE bit is read by VPP (anything else means outside); the output
// feature is a message of its own.
func addDelInterfaceRole(isAdd bool, i *vppcfg.NAT44Interface, swIfIndex uint32) *call {
	what := fmt.Sprintf("%s NAT44 %s role of %s", verb(isAdd), i.Role, i.Interface)
	if i.Role == vppcfg.NAT44Output {
		return &call{
			req:   &nat44_ed.Nat44EdAddDelOutputInterface{IsAdd: isAdd, SwIfIndex: interface_types.InterfaceIndex(swIfIndex)},
			reply: &nat44_ed.Nat44EdAddDelOutputInterfaceReply{},
			check: deleteTolerant(isAdd, what),
		}
	}
	flags := nat_types.NAT_IS_OUTSIDE
	if i.Role == vppcfg.NAT44Inside {
		flags = nat_types.NAT_IS_INSIDE
	}
	return &call{
		req:   &nat44_ed.Nat44InterfaceAddDelFeature{IsAdd: isAdd, Flags: flags, SwIfIndex: interface_types.InterfaceIndex(swIfIndex)},
		reply: &nat44_ed.Nat44InterfaceAddDelFeatureReply{},
		check: deleteTolerant(isAdd, what),
	}
}

// twiceNATFlags maps the twice-NAT mode to VPP flags.
func twiceNATFlags(m vppcfg.TwiceNATMode) nat_types.NatConfigFlags {
	switch m {
	case vppcfg.TwiceNATAlways:
		return nat_types.NAT_IS_TWICE_NAT
	case vppcfg.TwiceNATSelf:
		return nat_types.NAT_IS_SELF_TWICE_NAT
	}
	return 0
}

func staticFlags(addrOnly, out2inOnly bool, twice vppcfg.TwiceNATMode) nat_types.NatConfigFlags {
	f := twiceNATFlags(twice)
	if addrOnly {
		f |= nat_types.NAT_IS_ADDR_ONLY
	}
	if out2inOnly {
		f |= nat_types.NAT_IS_OUT2IN_ONLY
	}
	return f
}

// addDelStaticMapping adds or removes a static mapping. The delete carries
// the add's flags: VPP finds the mapping by external key, but different
// flags corrupt its indexes.
func addDelStaticMapping(isAdd bool, m *vppcfg.NAT44StaticMapping, tag string) *call {
	req := &nat44_ed.Nat44AddDelStaticMappingV2{
		IsAdd:             isAdd,
		Flags:             staticFlags(m.AddrOnly, m.Out2InOnly, m.TwiceNAT),
		LocalIPAddress:    ip4(m.Local.Addr()),
		ExternalIPAddress: ip4(m.External.Addr()),
		Protocol:          uint8(m.Protocol),
		LocalPort:         m.Local.Port(),
		ExternalPort:      m.External.Port(),
		ExternalSwIfIndex: anyInterface,
		VrfID:             m.VRF,
		Tag:               tag,
	}
	if m.TwiceNATAddr.IsValid() {
		req.PoolIPAddress = ip4(m.TwiceNATAddr)
	}
	return &call{req: req, reply: &nat44_ed.Nat44AddDelStaticMappingV2Reply{},
		check: deleteTolerant(isAdd, fmt.Sprintf("%s NAT44 static mapping %s/%s", verb(isAdd), m.External, m.Protocol))}
}

// addDelIdentityMapping adds or removes one VRF of an identity mapping.
func addDelIdentityMapping(isAdd bool, m *vppcfg.NAT44IdentityMapping, tag string) *call {
	var flags nat_types.NatConfigFlags
	if m.AddrOnly {
		flags = nat_types.NAT_IS_ADDR_ONLY
	}
	return &call{
		req: &nat44_ed.Nat44AddDelIdentityMapping{IsAdd: isAdd, Flags: flags, IPAddress: ip4(m.Addr),
			Protocol: uint8(m.Protocol), Port: m.Port, SwIfIndex: anyInterface, VrfID: m.VRF, Tag: tag},
		reply: &nat44_ed.Nat44AddDelIdentityMappingReply{},
		check: deleteTolerant(isAdd, fmt.Sprintf("%s NAT44 identity mapping %s:%d/%s vrf %d", verb(isAdd), m.Addr, m.Port, m.Protocol, m.VRF)),
	}
}

func lbFlags(m *vppcfg.NAT44LBMapping) nat_types.NatConfigFlags {
	return staticFlags(false, m.Out2InOnly, m.TwiceNAT)
}

func lbLocal(l vppcfg.NAT44LBLocal) nat44_ed.Nat44LbAddrPort {
	return nat44_ed.Nat44LbAddrPort{Addr: ip4(l.Addr.Addr()), Port: l.Addr.Port(), Probability: l.Probability, VrfID: l.VRF}
}

// addDelLBMapping adds or removes a load-balanced mapping with its locals.
func addDelLBMapping(isAdd bool, m *vppcfg.NAT44LBMapping, tag string) *call {
	req := &nat44_ed.Nat44AddDelLbStaticMapping{
		IsAdd:        isAdd,
		Flags:        lbFlags(m),
		ExternalAddr: ip4(m.External.Addr()),
		ExternalPort: m.External.Port(),
		Protocol:     uint8(m.Protocol),
		Affinity:     m.Affinity,
		Tag:          tag,
		Locals:       make([]nat44_ed.Nat44LbAddrPort, len(m.Locals)),
	}
	for i, l := range m.Locals {
		req.Locals[i] = lbLocal(l)
	}
	return &call{req: req, reply: &nat44_ed.Nat44AddDelLbStaticMappingReply{},
		check: deleteTolerant(isAdd, fmt.Sprintf("%s NAT44 LB mapping %s/%s", verb(isAdd), m.External, m.Protocol))}
}

// addDelLBLocal adds or removes one local of an LB mapping. A delete that
// would leave fewer than two locals fails with UNSPECIFIED; the plan never
// asks for one.
func addDelLBLocal(isAdd bool, m *vppcfg.NAT44LBMapping, l vppcfg.NAT44LBLocal) *call {
	what := fmt.Sprintf("%s local %s of NAT44 LB mapping %s/%s", verb(isAdd), l.Addr, m.External, m.Protocol)
	// NO_SUCH_ENTRY is success for a local already gone, and drift for an
	// add (the mapping itself is missing); INVALID_VALUE means the key holds
	// a mapping of another kind.
	chk := check(what, nil, []api.VPPApiError{api.NO_SUCH_ENTRY, api.INVALID_VALUE})
	if !isAdd {
		chk = check(what, []api.VPPApiError{api.NO_SUCH_ENTRY}, []api.VPPApiError{api.INVALID_VALUE})
	}
	return &call{
		req: &nat44_ed.Nat44LbStaticMappingAddDelLocal{IsAdd: isAdd, ExternalAddr: ip4(m.External.Addr()),
			ExternalPort: m.External.Port(), Protocol: uint8(m.Protocol), Local: lbLocal(l)},
		reply: &nat44_ed.Nat44LbStaticMappingAddDelLocalReply{},
		check: chk,
	}
}

// deleteTolerant treats NO_SUCH_ENTRY on a delete as success: the object
// is gone, which is what the delete wanted. On an add every error counts
// (VALUE_EXIST is drift, see markDrift).
func deleteTolerant(isAdd bool, what string) func(error) error {
	if isAdd {
		return accept(what)
	}
	return accept(what, api.NO_SUCH_ENTRY)
}
