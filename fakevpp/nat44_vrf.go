package fakevpp

import (
	"math/bits"
	"net/netip"

	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/nat44_ed"
)

// NAT44-ED's managed routes between VRFs (VPP 25.10 nat44_ed.c:
// nat44_ed_add_del_vrf_table / _route, get_tx_fib_index,
// is_destination_resolvable). A NAT VRF table names a FIB whose in2out
// sessions look for their outside FIB among the table's routes, in order:
// the first route FIB where the destination resolves through an interface
// is the session's outside FIB, and without one the packet's own FIB is
// (not the enable-time outside VRF). With a NAT VRF table for the packet's
// FIB, "is the destination reachable" asks only whether it resolves in one
// of the route FIBs, whatever the interface's NAT role. Each table and
// route locks its FIB; disabling NAT44-ED removes them all.

// natVrfTable is one vrf_table_t: the table's VRF and its routes' VRFs in
// pool order.
type natVrfTable struct {
	vrf    uint32
	routes pool[uint32]
}

func (n *natState) vrfTable(vrf uint32) *natVrfTable {
	_, t := n.vrfTables.find(func(t *natVrfTable) bool { return t.vrf == vrf })
	return t
}

func natVrfTableAddDel(c *call, req *nat44_ed.Nat44EdAddDelVrfTable) []api.Message {
	v, n := c.v, c.v.nat()
	r := &nat44_ed.Nat44EdAddDelVrfTableReply{}
	i, t := n.vrfTables.find(func(t *natVrfTable) bool { return t.vrf == req.TableVrfID })
	switch {
	case t != nil && req.IsAdd:
		r.Retval = int32(api.VALUE_EXIST)
	case t != nil:
		t.routes.each(func(_ uint32, vrf *uint32) bool {
			n.unlockTable(v, *vrf)
			return true
		})
		n.unlockTable(v, t.vrf)
		n.vrfTables.del(i)
	case !req.IsAdd:
		r.Retval = int32(api.NO_SUCH_ENTRY)
	default:
		n.lockTable(v, req.TableVrfID)
		n.vrfTables.add(&natVrfTable{vrf: req.TableVrfID})
	}
	return c.reply(r)
}

func natVrfRouteAddDel(c *call, req *nat44_ed.Nat44EdAddDelVrfRoute) []api.Message {
	v, n := c.v, c.v.nat()
	r := &nat44_ed.Nat44EdAddDelVrfRouteReply{}
	t := n.vrfTable(req.TableVrfID)
	if t == nil {
		r.Retval = int32(api.NO_SUCH_ENTRY)
		return c.reply(r)
	}
	i, route := t.routes.find(func(vrf *uint32) bool { return *vrf == req.VrfID })
	switch {
	case route != nil && req.IsAdd:
		r.Retval = int32(api.VALUE_EXIST)
	case route != nil:
		n.unlockTable(v, *route)
		t.routes.del(i)
	case !req.IsAdd:
		r.Retval = int32(api.NO_SUCH_ENTRY)
	default:
		n.lockTable(v, req.VrfID)
		vrf := req.VrfID
		t.routes.add(&vrf)
	}
	return c.reply(r)
}

// natVrfTablesDump is the deprecated dump as VPP 25.10 sends it
// (nat44_ed_vrf_tables_send_details): TableVrfID is never filled in (0)
// and the route VRFs are copied without byte-swapping, so a client reads
// each ID with its bytes reversed.
func natVrfTablesDump(c *call, _ *nat44_ed.Nat44EdVrfTablesDump) []api.Message {
	var out []api.Message
	c.v.nat().vrfTables.each(func(_ uint32, t *natVrfTable) bool {
		ids := t.routeVRFs()
		for i := range ids {
			ids[i] = bits.ReverseBytes32(ids[i])
		}
		out = append(out, &nat44_ed.Nat44EdVrfTablesDetails{VrfIds: ids})
		return true
	})
	return out
}

// natVrfTablesV2Dump: VPP 25.10 answers the v2 dump with the *v1* details
// message (nat44_ed_vrf_tables_send_details_v2 uses
// VL_API_NAT44_ED_VRF_TABLES_DETAILS), correctly filled in.
func natVrfTablesV2Dump(c *call, _ *nat44_ed.Nat44EdVrfTablesV2Dump) []api.Message {
	var out []api.Message
	c.v.nat().vrfTables.each(func(_ uint32, t *natVrfTable) bool {
		out = append(out, &nat44_ed.Nat44EdVrfTablesDetails{TableVrfID: t.vrf, VrfIds: t.routeVRFs()})
		return true
	})
	return out
}

func (t *natVrfTable) routeVRFs() []uint32 {
	ids := []uint32{}
	t.routes.each(func(_ uint32, vrf *uint32) bool {
		ids = append(ids, *vrf)
		return true
	})
	return ids
}

// vrfRouteFib is get_tx_fib_index's and is_destination_resolvable's walk
// over the NAT VRF table of rxFib: the first route FIB where dst resolves
// through an interface. managed is false when rxFib has no NAT VRF table.
func (n *natState) vrfRouteFib(v *VPP, rxFib uint32, dst netip.Addr) (fib uint32, found, managed bool) {
	t := n.vrfTable(rxFib)
	if t == nil {
		return 0, false, false
	}
	t.routes.each(func(_ uint32, vrf *uint32) bool {
		if v.resolvingInterface(*vrf, dst) != nil {
			fib, found = *vrf, true
			return false
		}
		return true
	})
	return fib, found, true
}
