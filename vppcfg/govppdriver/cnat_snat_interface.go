package govppdriver

import (
	"fmt"

	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/cnat"
	"go.fd.io/govpp/binapi/interface_types"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
)

func init() {
	register(&kindDriver{
		kind:     vppcfg.KindCNATSnatInterface,
		needs:    capCNAT,
		messages: []api.Message{&cnat.CnatSnatPolicyAddDelIf{}},
		ops: forItem(func(op *driverapi.Op, i *vppcfg.CNATSnatInterface, _ *driverapi.OpResult) []*call {
			return []*call{addDelSnatInterface(adds(op), i, op.SwIfIndex)}
		}),
		// VPP has no dump of the SNAT-policy interface sets.
	})
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
