package govppdriver

import (
	"fmt"
	"net/netip"

	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/binapi/nat_types"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
)

// The reply prototypes of the calls below, shared (call.reply).
var lbMappingReply api.Message = &nat44_ed.Nat44AddDelLbStaticMappingReply{}
var lbLocalReply api.Message = &nat44_ed.Nat44LbStaticMappingAddDelLocalReply{}

func init() {
	register(&kindDriver{
		kind: vppcfg.KindNAT44LBMapping,
		messages: []api.Message{&nat44_ed.Nat44AddDelLbStaticMapping{}, &nat44_ed.Nat44LbStaticMappingAddDelLocal{},
			&nat44_ed.Nat44LbStaticMappingDump{}},
		ops: forItem(func(op *driverapi.Op, m *vppcfg.NAT44LBMapping, _ *driverapi.OpResult) []*call {
			// The layer updates a mapping one local at a time.
			if l, add, ok := localStep(op); ok {
				return []*call{addDelLBLocal(add, m, l)}
			}
			return addDelLBMapping(adds(op), m, op.Tag)
		}),
		dump:        dumpLBMappings,
		dumpIfFound: vppcfg.KindNAT44Global,
	})
}

// localStep is the one local an update of an LB mapping adds or removes:
// the layer changes the locals one at a time, each update from the value
// before it (Old) to the value after (Item). ok is false for any other op.
func localStep(op *driverapi.Op) (l vppcfg.NAT44LBLocal, add, ok bool) {
	o, ok1 := op.Old.(*vppcfg.NAT44LBMapping)
	n, ok2 := op.Item.(*vppcfg.NAT44LBMapping)
	if op.Type != driverapi.OpUpdate || !ok1 || !ok2 {
		return vppcfg.NAT44LBLocal{}, false, false
	}
	// Both lists are in the layer's canonical order: the one local apart
	// is where they stop lining up.
	long, short, add := n.Locals, o.Locals, true
	if len(o.Locals) == len(n.Locals)+1 {
		long, short, add = o.Locals, n.Locals, false
	} else if len(n.Locals) != len(o.Locals)+1 {
		return vppcfg.NAT44LBLocal{}, false, false
	}
	i := 0
	for i < len(short) && short[i] == long[i] {
		i++
	}
	for j := i; j < len(short); j++ {
		if short[j] != long[j+1] {
			return vppcfg.NAT44LBLocal{}, false, false
		}
	}
	return long[i], add, true
}

func lbFlags(m *vppcfg.NAT44LBMapping) nat_types.NatConfigFlags {
	return staticFlags(false, m.Out2InOnly, m.TwiceNAT)
}

func lbLocal(l vppcfg.NAT44LBLocal) nat44_ed.Nat44LbAddrPort {
	return nat44_ed.Nat44LbAddrPort{Addr: ip4(l.Addr.Addr()), Port: l.Addr.Port(), Probability: l.Probability, VrfID: l.VRF}
}

// addDelLBMapping adds or removes a load-balanced mapping with its locals,
// as a list of one call.
func addDelLBMapping(isAdd bool, m *vppcfg.NAT44LBMapping, tag string) []*call {
	b := new(lbMappingCall)
	b.req = nat44_ed.Nat44AddDelLbStaticMapping{
		IsAdd:        isAdd,
		Flags:        lbFlags(m),
		ExternalAddr: ip4(m.External.Addr()),
		ExternalPort: m.External.Port(),
		Protocol:     uint8(m.Protocol),
		Affinity:     m.Affinity,
		Tag:          tag,
		Locals:       b.local[:0],
	}
	if len(m.Locals) > len(b.local) {
		b.req.Locals = make([]nat44_ed.Nat44LbAddrPort, 0, len(m.Locals))
	}
	for _, l := range m.Locals {
		b.req.Locals = append(b.req.Locals, lbLocal(l))
	}
	b.call = call{req: &b.req, reply: lbMappingReply, lazy: deleteTolerantOf(isAdd, m, describeLBMapping)}
	b.list[0] = &b.call
	return b.list[:]
}

// lbMappingCall is an LB mapping's call in one allocation: the call, its
// request, room for one local (a cold sync's services have one backend on
// this node, or the placeholder) and the list of one call the builder
// returns. A cold sync of 50,000 services makes 50,000 of them, and they
// were four allocations each.
type lbMappingCall struct {
	call  call
	req   nat44_ed.Nat44AddDelLbStaticMapping
	local [1]nat44_ed.Nat44LbAddrPort
	list  [1]*call
}

var describeLBMapping = describeAs(func(isAdd bool, m *vppcfg.NAT44LBMapping) string {
	return fmt.Sprintf("%s NAT44 LB mapping %s/%s", verb(isAdd), m.External, m.Protocol)
})

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
		reply: lbLocalReply,
		check: chk,
	}
}

func dumpLBMappings(r *dumpRun) error {
	rpc := nat44_ed.NewServiceClient(r.d.conn)
	return drain(r.d, "nat44_lb_static_mapping_dump", func() (receiver[*nat44_ed.Nat44LbStaticMappingDetails], error) {
		return rpc.Nat44LbStaticMappingDump(r.ctx, &nat44_ed.Nat44LbStaticMappingDump{})
	}, func(m *nat44_ed.Nat44LbStaticMappingDetails) {
		it := &vppcfg.NAT44LBMapping{
			External:   netip.AddrPortFrom(fromIP4(m.ExternalAddr), m.ExternalPort),
			Protocol:   vppcfg.Protocol(m.Protocol),
			Affinity:   m.Affinity,
			Out2InOnly: m.Flags&nat_types.NAT_IS_OUT2IN_ONLY != 0,
			TwiceNAT:   fromTwiceNATFlags(m.Flags),
			Locals:     make([]vppcfg.NAT44LBLocal, len(m.Locals)),
		}
		for i, l := range m.Locals {
			it.Locals[i] = vppcfg.NAT44LBLocal{Addr: netip.AddrPortFrom(fromIP4(l.Addr), l.Port), Probability: l.Probability, VRF: l.VrfID}
		}
		vppcfg.SortLBLocals(it.Locals)
		r.add(it, m.Tag, 0)
	})
}
