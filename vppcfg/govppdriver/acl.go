package govppdriver

import (
	"fmt"

	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/acl"
	"go.fd.io/govpp/binapi/acl_types"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip_types"

	"github.com/vppsvc/vppsvc/vppcfg"
)

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

// setACLList replaces both ACL lists of an interface: input first, then
// output, in one message (VPP has no per-ACL ordering otherwise).
func setACLList(swIfIndex uint32, a *vppcfg.ACLAssignment) *call {
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

func aclRule(r vppcfg.ACLRule) acl_types.ACLRule {
	out := acl_types.ACLRule{
		IsPermit:  acl_types.ACLAction(r.Action),
		SrcPrefix: prefix(r.Src),
		DstPrefix: prefix(r.Dst),
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
		Src:      fromPrefix(r.SrcPrefix),
		Dst:      fromPrefix(r.DstPrefix),
		Protocol: vppcfg.Protocol(r.Proto),
		SrcPorts: vppcfg.PortRange{First: r.SrcportOrIcmptypeFirst, Last: r.SrcportOrIcmptypeLast},
		DstPorts: vppcfg.PortRange{First: r.DstportOrIcmpcodeFirst, Last: r.DstportOrIcmpcodeLast},
	}
	return out
}
