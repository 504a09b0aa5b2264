package govppdriver

import (
	"fmt"

	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/acl"
	"go.fd.io/govpp/binapi/interface_types"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
)

// ACL bindings are not applied one by one: the layer merges all bindings of
// an interface into one ACLAssignment, sent as an update, and a dump
// reports one ACLAssignment (indexes only) per interface with ACLs.
func init() {
	register(&kindDriver{
		kind:     vppcfg.KindACLBinding,
		messages: []api.Message{&acl.ACLInterfaceSetACLList{}, &acl.ACLInterfaceListDump{}},
		ops: forItem(func(op *driverapi.Op, a *driverapi.ACLAssignment, _ *driverapi.OpResult) []*call {
			return []*call{setACLList(op.SwIfIndex, a)}
		}),
		dump: dumpACLLists,
	})
}

// setACLList replaces both ACL lists of an interface: input first, then
// output, in one message (VPP has no per-ACL ordering otherwise).
func setACLList(swIfIndex uint32, a *driverapi.ACLAssignment) *call {
	acls := make([]uint32, 0, len(a.InputIndexes)+len(a.OutputIndexes))
	acls = append(acls, a.InputIndexes...)
	acls = append(acls, a.OutputIndexes...)
	return &call{
		req: &acl.ACLInterfaceSetACLList{SwIfIndex: interface_types.InterfaceIndex(swIfIndex),
			NInput: uint8(len(a.InputIndexes)), Acls: acls},
		reply: &acl.ACLInterfaceSetACLListReply{},
		check: func(err error) error {
			if err == nil {
				return nil
			}
			if err == api.VPPApiError(1) {
				err = fmt.Errorf("%w (an ACL repeated within one list)", err)
			}
			return accept(fmt.Sprintf("set ACLs of %s", a.Interface))(err)
		},
	}
}

// dumpACLLists reads the ACL indexes bound to each interface with a name,
// one ACLAssignment per interface; the layer maps them to bindings.
func dumpACLLists(r *dumpRun) error {
	rpc := acl.NewServiceClient(r.d.conn)
	return drain(r.d, "acl_interface_list_dump", func() (receiver[*acl.ACLInterfaceListDetails], error) {
		return rpc.ACLInterfaceListDump(r.ctx, &acl.ACLInterfaceListDump{SwIfIndex: anyInterface})
	}, func(m *acl.ACLInterfaceListDetails) {
		name, ok := r.names[uint32(m.SwIfIndex)]
		if !ok || len(m.Acls) == 0 {
			return
		}
		n := min(int(m.NInput), len(m.Acls))
		r.add(&driverapi.ACLAssignment{
			Interface:     name,
			InputIndexes:  append([]uint32(nil), m.Acls[:n]...),
			OutputIndexes: append([]uint32(nil), m.Acls[n:]...),
		}, "", 0)
	})
}
