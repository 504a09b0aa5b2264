package govppdriver

import (
	"fmt"

	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/binapi/nat_types"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
)

// The reply prototypes of the calls below, shared (call.reply).
var identityMappingReply api.Message = &nat44_ed.Nat44AddDelIdentityMappingReply{}

func init() {
	register(&kindDriver{
		kind:     vppcfg.KindNAT44IdentityMapping,
		messages: []api.Message{&nat44_ed.Nat44AddDelIdentityMapping{}, &nat44_ed.Nat44IdentityMappingDump{}},
		ops: forItem(func(op *driverapi.Op, m *vppcfg.NAT44IdentityMapping, _ *driverapi.OpResult) []*call {
			return []*call{addDelIdentityMapping(adds(op), m, op.Tag)}
		}),
		dump:        dumpIdentityMappings,
		dumpIfFound: vppcfg.KindNAT44Global,
	})
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
		reply: identityMappingReply,
		lazy:  deleteTolerantOf(isAdd, m, describeIdentityMapping),
	}
}

var describeIdentityMapping = describeAs(func(isAdd bool, m *vppcfg.NAT44IdentityMapping) string {
	return fmt.Sprintf("%s NAT44 identity mapping %s:%d/%s vrf %d", verb(isAdd), m.Addr, m.Port, m.Protocol, m.VRF)
})

func dumpIdentityMappings(r *dumpRun) error {
	rpc := nat44_ed.NewServiceClient(r.d.conn)
	return drain(r.d, "nat44_identity_mapping_dump", func() (receiver[*nat44_ed.Nat44IdentityMappingDetails], error) {
		return rpc.Nat44IdentityMappingDump(r.ctx, &nat44_ed.Nat44IdentityMappingDump{})
	}, func(m *nat44_ed.Nat44IdentityMappingDetails) {
		if m.SwIfIndex != anyInterface {
			return
		}
		r.add(&vppcfg.NAT44IdentityMapping{Addr: fromIP4(m.IPAddress), Port: m.Port, Protocol: vppcfg.Protocol(m.Protocol),
			AddrOnly: m.Flags&nat_types.NAT_IS_ADDR_ONLY != 0, VRF: m.VrfID}, m.Tag, 0)
	})
}
