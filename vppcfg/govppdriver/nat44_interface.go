package govppdriver

import (
	"errors"
	"fmt"
	"io"

	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/binapi/nat_types"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
)

func init() {
	register(&kindDriver{
		kind: vppcfg.KindNAT44Interface,
		messages: []api.Message{&nat44_ed.Nat44InterfaceAddDelFeature{}, &nat44_ed.Nat44InterfaceDump{},
			&nat44_ed.Nat44EdAddDelOutputInterface{}, &nat44_ed.Nat44EdOutputInterfaceGet{}},
		ops: forItem(func(op *driverapi.Op, i *vppcfg.NAT44Interface, _ *driverapi.OpResult) []*call {
			return []*call{addDelInterfaceRole(adds(op), i, op.SwIfIndex)}
		}),
		dump:        dumpNAT44Interfaces,
		dumpIfFound: vppcfg.KindNAT44Global,
	})
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

// dumpNAT44Interfaces reads the inside and outside roles, then the output
// feature, of interfaces with a name.
func dumpNAT44Interfaces(r *dumpRun) error {
	rpc := nat44_ed.NewServiceClient(r.d.conn)
	err := drain(r.d, "nat44_interface_dump", func() (receiver[*nat44_ed.Nat44InterfaceDetails], error) {
		return rpc.Nat44InterfaceDump(r.ctx, &nat44_ed.Nat44InterfaceDump{})
	}, func(m *nat44_ed.Nat44InterfaceDetails) {
		name, ok := r.names[uint32(m.SwIfIndex)]
		if !ok {
			return
		}
		if m.Flags&nat_types.NAT_IS_INSIDE != 0 {
			r.add(&vppcfg.NAT44Interface{Interface: name, Role: vppcfg.NAT44Inside}, "", 0)
		}
		if m.Flags&nat_types.NAT_IS_OUTSIDE != 0 {
			r.add(&vppcfg.NAT44Interface{Interface: name, Role: vppcfg.NAT44Outside}, "", 0)
		}
	})
	if err != nil {
		return err
	}
	return dumpOutputInterfaces(r, rpc)
}

// dumpOutputInterfaces walks Nat44EdOutputInterfaceGet by cursor. The
// reply's cursor is ~0 at the end; with no output interface at all VPP
// leaves it unset, so a round without details also ends the walk.
func dumpOutputInterfaces(r *dumpRun, rpc nat44_ed.RPCService) error {
	cursor := uint32(0)
	for round := 0; round < 1<<16; round++ {
		s, err := rpc.Nat44EdOutputInterfaceGet(r.ctx, &nat44_ed.Nat44EdOutputInterfaceGet{Cursor: cursor})
		r.d.count("nat44_ed_output_interface_get", err != nil)
		if err != nil {
			return fmt.Errorf("dump NAT44 output interfaces: %w", err)
		}
		got := 0
		for {
			det, reply, err := s.Recv()
			if errors.Is(err, io.EOF) {
				if got == 0 || reply == nil || reply.Cursor == ^uint32(0) {
					return nil
				}
				cursor = reply.Cursor
				break
			}
			if err != nil {
				_ = s.Close() // closed by the client only at the end
				return fmt.Errorf("dump NAT44 output interfaces: %w", err)
			}
			got++
			if name, ok := r.names[uint32(det.SwIfIndex)]; ok {
				r.add(&vppcfg.NAT44Interface{Interface: name, Role: vppcfg.NAT44Output}, "", 0)
			}
		}
	}
	return nil
}
