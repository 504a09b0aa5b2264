package govppdriver

import (
	"fmt"

	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/binapi/nat_types"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
)

func init() {
	register(&kindDriver{
		kind:     vppcfg.KindNAT44Address,
		messages: []api.Message{&nat44_ed.Nat44AddDelAddressRange{}, &nat44_ed.Nat44AddressDump{}},
		ops: forItem(func(op *driverapi.Op, a *vppcfg.NAT44Address, _ *driverapi.OpResult) []*call {
			return []*call{addDelAddress(adds(op), a)}
		}),
		dump:        dumpNAT44Addresses,
		dumpIfFound: vppcfg.KindNAT44Global,
	})
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

func dumpNAT44Addresses(r *dumpRun) error {
	rpc := nat44_ed.NewServiceClient(r.d.conn)
	return drain(r.d, "nat44_address_dump", func() (receiver[*nat44_ed.Nat44AddressDetails], error) {
		return rpc.Nat44AddressDump(r.ctx, &nat44_ed.Nat44AddressDump{})
	}, func(m *nat44_ed.Nat44AddressDetails) {
		r.add(&vppcfg.NAT44Address{Addr: fromIP4(m.IPAddress), TwiceNAT: m.Flags&nat_types.NAT_IS_TWICE_NAT != 0, VRF: m.VrfID}, "", 0)
	})
}
