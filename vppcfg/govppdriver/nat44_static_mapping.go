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
var staticMappingReply api.Message = &nat44_ed.Nat44AddDelStaticMappingV2Reply{}

func init() {
	register(&kindDriver{
		kind:     vppcfg.KindNAT44StaticMapping,
		messages: []api.Message{&nat44_ed.Nat44AddDelStaticMappingV2{}, &nat44_ed.Nat44StaticMappingDump{}},
		ops: forItem(func(op *driverapi.Op, m *vppcfg.NAT44StaticMapping, _ *driverapi.OpResult) []*call {
			return []*call{addDelStaticMapping(adds(op), m, op.Tag)}
		}),
		dump:        dumpStaticMappings,
		dumpIfFound: vppcfg.KindNAT44Global,
	})
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
	return &call{req: req, reply: staticMappingReply,
		lazy: deleteTolerantOf(isAdd, m, describeStaticMapping)}
}

var describeStaticMapping = describeAs(func(isAdd bool, m *vppcfg.NAT44StaticMapping) string {
	return fmt.Sprintf("%s NAT44 static mapping %s/%s", verb(isAdd), m.External, m.Protocol)
})

func dumpStaticMappings(r *dumpRun) error {
	rpc := nat44_ed.NewServiceClient(r.d.conn)
	return drain(r.d, "nat44_static_mapping_dump", func() (receiver[*nat44_ed.Nat44StaticMappingDetails], error) {
		return rpc.Nat44StaticMappingDump(r.ctx, &nat44_ed.Nat44StaticMappingDump{})
	}, func(m *nat44_ed.Nat44StaticMappingDetails) {
		if m.ExternalSwIfIndex != anyInterface {
			return // interface-bound: never ours, and listed twice once resolved
		}
		r.add(&vppcfg.NAT44StaticMapping{
			External:   netip.AddrPortFrom(fromIP4(m.ExternalIPAddress), m.ExternalPort),
			Protocol:   vppcfg.Protocol(m.Protocol),
			Local:      netip.AddrPortFrom(fromIP4(m.LocalIPAddress), m.LocalPort),
			VRF:        m.VrfID,
			AddrOnly:   m.Flags&nat_types.NAT_IS_ADDR_ONLY != 0,
			Out2InOnly: m.Flags&nat_types.NAT_IS_OUT2IN_ONLY != 0,
			TwiceNAT:   fromTwiceNATFlags(m.Flags),
		}, m.Tag, 0)
	})
}
