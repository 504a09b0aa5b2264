package govppdriver

import (
	"fmt"

	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/acl"
	"go.fd.io/govpp/binapi/acl_types"
	"go.fd.io/govpp/binapi/ip_types"

	"github.com/vppsvc/vppsvc/internal/govppnode"
	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
)

func init() {
	register(&kindDriver{
		kind:     vppcfg.KindACL,
		messages: []api.Message{&acl.ACLAddReplace{}, &acl.ACLDel{}, &acl.ACLDump{}},
		ops: forItem(func(op *driverapi.Op, a *vppcfg.ACL, res *driverapi.OpResult) []*call {
			if op.Type == driverapi.OpDelete {
				return []*call{delACL(op.Handle)}
			}
			index := ^uint32(0)
			if op.Type == driverapi.OpUpdate {
				index = op.Handle
			}
			return []*call{addReplaceACL(index, a, op.Tag, &res.Handle)}
		}),
		dump: dumpACLs,
	})
}

// addReplaceACL creates an ACL (index ^0) or replaces the rules of an
// existing one in place: same index, effective at once wherever it is
// bound, reflect sessions kept. The index VPP returns is written to handle.
func addReplaceACL(index uint32, a *vppcfg.ACL, tag string, handle *uint32) *call {
	req := &acl.ACLAddReplace{ACLIndex: index, Tag: tag, R: make([]acl_types.ACLRule, len(a.Rules))}
	for i, r := range a.Rules {
		req.R[i] = aclRule(r)
	}
	chk := accept(fmt.Sprintf("create ACL %s", a.Name))
	if index != ^uint32(0) {
		// The index is gone: VPP restarted or someone deleted the ACL.
		chk = check(fmt.Sprintf("replace rules of ACL %s (index %d)", a.Name, index), nil, []api.VPPApiError{api.NO_SUCH_ENTRY})
	}
	return &call{req: req, reply: &acl.ACLAddReplaceReply{}, check: chk,
		done: func(m api.Message) { *handle = m.(*acl.ACLAddReplaceReply).ACLIndex }}
}

// delACL removes an ACL; one already gone is fine, one still bound is drift.
func delACL(index uint32) *call {
	return &call{req: &acl.ACLDel{ACLIndex: index}, reply: &acl.ACLDelReply{},
		check: accept(fmt.Sprintf("delete ACL index %d", index), api.NO_SUCH_ENTRY)}
}

func aclRule(r vppcfg.ACLRule) acl_types.ACLRule {
	out := acl_types.ACLRule{
		IsPermit:  acl_types.ACLAction(r.Action),
		SrcPrefix: govppnode.Prefix(r.Src),
		DstPrefix: govppnode.Prefix(r.Dst),
		Proto:     ip_types.IPProto(r.Protocol),
	}
	src, dst := r.SrcPorts, r.DstPorts
	if src == (vppcfg.PortRange{}) {
		src = vppcfg.AnyPort
	}
	if dst == (vppcfg.PortRange{}) {
		dst = vppcfg.AnyPort
	}
	if r.Protocol == vppcfg.ProtoICMP || r.Protocol == vppcfg.ProtoICMP6 {
		// Type and code are bytes: "any" is 0-255.
		src.Last, dst.Last = min(src.Last, 255), min(dst.Last, 255)
	}
	out.SrcportOrIcmptypeFirst, out.SrcportOrIcmptypeLast = src.First, src.Last
	out.DstportOrIcmpcodeFirst, out.DstportOrIcmpcodeLast = dst.First, dst.Last
	return out
}

// fromACLRule reads a rule back; "any" ranges come back as vppcfg.AnyPort.
func fromACLRule(r acl_types.ACLRule) vppcfg.ACLRule {
	out := vppcfg.ACLRule{
		Action:   vppcfg.ACLAction(r.IsPermit),
		Src:      govppnode.FromPrefix(r.SrcPrefix),
		Dst:      govppnode.FromPrefix(r.DstPrefix),
		Protocol: vppcfg.Protocol(r.Proto),
		SrcPorts: vppcfg.PortRange{First: r.SrcportOrIcmptypeFirst, Last: r.SrcportOrIcmptypeLast},
		DstPorts: vppcfg.PortRange{First: r.DstportOrIcmpcodeFirst, Last: r.DstportOrIcmpcodeLast},
	}
	return out
}

// dumpACLs reads every ACL (index ~0: 0 would dump ACL 0 only) with its
// index, which is how bindings refer to it.
func dumpACLs(r *dumpRun) error {
	rpc := acl.NewServiceClient(r.d.conn)
	return drain(r.d, "acl_dump", func() (receiver[*acl.ACLDetails], error) {
		return rpc.ACLDump(r.ctx, &acl.ACLDump{ACLIndex: ^uint32(0)})
	}, func(m *acl.ACLDetails) {
		a := &vppcfg.ACL{Rules: make([]vppcfg.ACLRule, len(m.R))}
		for i, rule := range m.R {
			a.Rules[i] = fromACLRule(rule)
		}
		r.add(a, m.Tag, m.ACLIndex)
	})
}
