package fakevpp

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/acl"
	"go.fd.io/govpp/binapi/acl_types"
	"go.fd.io/govpp/binapi/interface_types"
)

const (
	deny          = acl_types.ACL_ACTION_API_DENY
	permit        = acl_types.ACL_ACTION_API_PERMIT
	permitReflect = acl_types.ACL_ACTION_API_PERMIT_REFLECT
)

func (e *env) aclDump(idx uint32) []*acl.ACLDetails {
	e.t.Helper()
	s, err := e.acl.ACLDump(e.ctx, &acl.ACLDump{ACLIndex: idx})
	e.ok(err)
	return recvAll(e.t, s.Recv)
}

func (e *env) aclLists(sw interface_types.InterfaceIndex) []*acl.ACLInterfaceListDetails {
	e.t.Helper()
	s, err := e.acl.ACLInterfaceListDump(e.ctx, &acl.ACLInterfaceListDump{SwIfIndex: sw})
	e.ok(err)
	return recvAll(e.t, s.Recv)
}

func TestACLAddReplaceValidation(t *testing.T) {
	e := newEnv(t)
	add := func(idx uint32, tag string, rules ...acl_types.ACLRule) (*acl.ACLAddReplaceReply, error) {
		return e.acl.ACLAddReplace(e.ctx, &acl.ACLAddReplace{ACLIndex: idx, Tag: tag, R: rules})
	}
	any4 := rule(permit, "0.0.0.0/0", "0.0.0.0/0", 0, 0)

	_, err := add(^uint32(0), "x", rule(permit, "10.1.1.5/24", "0.0.0.0/0", 0, 0))
	e.expect(api.INVALID_SRC_ADDRESS, err)
	_, err = add(^uint32(0), "x", rule(permit, "0.0.0.0/0", "10.1.1.5/24", 0, 0))
	e.expect(api.INVALID_DST_ADDRESS, err)
	_, err = add(^uint32(0), "x", rule(permit, "0.0.0.0/0", "::/0", 0, 0))
	e.expect(api.INVALID_SRC_ADDRESS, err) // families differ
	r := any4
	r.DstportOrIcmpcodeFirst, r.DstportOrIcmpcodeLast = 90, 80
	_, err = add(^uint32(0), "x", r)
	e.expect(api.INVALID_VALUE_2, err)
	_, err = add(^uint32(0), strings.Repeat("t", 64), any4)
	e.expect(api.INVALID_VALUE, err)
	rep, err := add(7, "x", any4)
	e.expect(api.NO_SUCH_ENTRY, err)
	assert.Equal(t, uint32(7), rep.ACLIndex, "the reply echoes the index")

	// Indices are allocated LIFO from 0.
	a := e.addACL("a", any4)
	b := e.addACL("b", any4)
	c := e.addACL("c")
	assert.Equal(t, []uint32{0, 1, 2}, []uint32{a, b, c})
	_, err = e.acl.ACLDel(e.ctx, &acl.ACLDel{ACLIndex: b})
	e.ok(err)
	_, err = e.acl.ACLDel(e.ctx, &acl.ACLDel{ACLIndex: b})
	e.expect(api.NO_SUCH_ENTRY, err)
	assert.Equal(t, b, e.addACL("d"))

	all := e.aclDump(^uint32(0))
	require.Len(t, all, 3)
	assert.Equal(t, []string{"a", "d", "c"}, []string{all[0].Tag, all[1].Tag, all[2].Tag})
	assert.Equal(t, []acl_types.ACLRule{any4}, all[0].R)
	assert.Len(t, e.aclDump(0), 1, "index 0 dumps only ACL 0")

	rep, err = add(a, "a2", rule(deny, "0.0.0.0/0", "0.0.0.0/0", 0, 0))
	e.ok(err)
	assert.Equal(t, a, rep.ACLIndex)
	assert.Equal(t, "a2", e.aclDump(a)[0].Tag)
}

// ACL bindings (docs/fakevpp.md#messages, docs/fakevpp.md#acl).
func TestACLInterfaceBinding(t *testing.T) {
	e := newEnv(t)
	a0 := e.addACL("a0", rule(deny, "0.0.0.0/0", "10.1.1.2/32", tcp, 22), rule(permit, "0.0.0.0/0", "0.0.0.0/0", 0, 0))
	a1 := e.addACL("a1", rule(permit, "0.0.0.0/0", "0.0.0.0/0", 0, 0))
	e.ok(e.setACLs("tap0", nil, []uint32{a0}))
	_, err := e.acl.ACLDel(e.ctx, &acl.ACLDel{ACLIndex: a0})
	e.expect(api.ACL_IN_USE_OUTBOUND, err)

	e.expect(1, e.setACLs("tap0", []uint32{a0, a0}, []uint32{a1}))
	lists := e.aclLists(e.sw("tap0"))
	require.Len(t, lists, 1)
	assert.Equal(t, []uint32{a1}, lists[0].Acls, "the output list is applied before the input list fails")
	assert.Zero(t, lists[0].NInput)

	e.expect(1, e.setACLs("tap0", []uint32{a0}, []uint32{a1, a1}))
	assert.Equal(t, []uint32{a1}, e.aclLists(e.sw("tap0"))[0].Acls, "an output error leaves everything as it was")

	e.expect(api.NO_SUCH_ENTRY, e.setACLs("tap0", []uint32{7}, nil))
	_, err = e.acl.ACLInterfaceSetACLList(e.ctx, &acl.ACLInterfaceSetACLList{SwIfIndex: 99, Acls: []uint32{a0}})
	e.expect(api.INVALID_SW_IF_INDEX, err)

	e.ok(e.setACLs("tap0", []uint32{a0}, []uint32{a0}))
	_, err = e.acl.ACLDel(e.ctx, &acl.ACLDel{ACLIndex: a0})
	e.expect(api.ACL_IN_USE_INBOUND, err)
	// NInput beyond the list makes everything input.
	_, err = e.acl.ACLInterfaceSetACLList(e.ctx, &acl.ACLInterfaceSetACLList{SwIfIndex: e.sw("eth0"), NInput: 5, Acls: []uint32{a1}})
	e.ok(err)
	assert.Equal(t, uint8(1), e.aclLists(e.sw("eth0"))[0].NInput)

	all := e.aclLists(^interface_types.InterfaceIndex(0))
	require.Len(t, all, 3, "every interface, local0 included")
	assert.Equal(t, interface_types.InterfaceIndex(0), all[0].SwIfIndex)
	assert.Empty(t, all[0].Acls)
	assert.Len(t, e.aclLists(0), 1, "index 0 is local0 only")

	// Deleting the interface drops its bindings.
	require.True(t, e.v.DeleteInterface("tap0"))
	_, err = e.acl.ACLDel(e.ctx, &acl.ACLDel{ACLIndex: a0})
	e.ok(err)
}

func TestACLInterfaceAddDelLegacy(t *testing.T) {
	e := newEnv(t)
	a := e.addACL("a", rule(permit, "0.0.0.0/0", "0.0.0.0/0", 0, 0))
	req := &acl.ACLInterfaceAddDel{IsAdd: true, IsInput: true, SwIfIndex: e.sw("tap0"), ACLIndex: a}
	_, err := e.acl.ACLInterfaceAddDel(e.ctx, req)
	e.ok(err)
	_, err = e.acl.ACLInterfaceAddDel(e.ctx, req)
	e.expect(api.ACL_IN_USE_INBOUND, err)
	req.IsInput = false
	_, err = e.acl.ACLInterfaceAddDel(e.ctx, req)
	e.ok(err)
	_, err = e.acl.ACLInterfaceAddDel(e.ctx, req)
	e.expect(api.ACL_IN_USE_OUTBOUND, err)
	assert.Equal(t, []uint32{a, a}, e.aclLists(e.sw("tap0"))[0].Acls)
	req.IsAdd = false
	_, err = e.acl.ACLInterfaceAddDel(e.ctx, req)
	e.ok(err)
	_, err = e.acl.ACLInterfaceAddDel(e.ctx, req)
	e.expect(api.NO_SUCH_ENTRY, err)
	req.ACLIndex = 9
	req.IsAdd = true
	_, err = e.acl.ACLInterfaceAddDel(e.ctx, req)
	e.expect(api.NO_SUCH_ENTRY, err)
}
