package govppdriver

import (
	"fmt"

	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/fib_types"
	"go.fd.io/govpp/binapi/ip"

	"github.com/vppsvc/vppsvc/internal/govppnode"
	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
)

// Without the route messages (a VPP or fake that lacks one) DropRoute items
// fail as unsupported and Dump reads no routes.
// The reply prototypes of the calls below, shared (call.reply).
var routeAddDelReply api.Message = &ip.IPRouteAddDelReply{}

func init() {
	register(&kindDriver{
		kind:     vppcfg.KindDropRoute,
		needs:    capRoutes,
		messages: []api.Message{&ip.IPRouteAddDel{}, &ip.IPRouteDump{}, &ip.IPTableDump{}},
		ops: forItem(func(op *driverapi.Op, dr *vppcfg.DropRoute, _ *driverapi.OpResult) []*call {
			return []*call{addDelDropRoute(adds(op), dr)}
		}),
		dump: dumpDropRoutes,
	})
}

// dropPath is the one path of a DropRoute, marked as vppsvc's.
func dropPath(r *vppcfg.DropRoute) fib_types.FibPath {
	proto := fib_types.FIB_API_PATH_NH_PROTO_IP4
	if r.Prefix.Addr().Is6() {
		proto = fib_types.FIB_API_PATH_NH_PROTO_IP6
	}
	return fib_types.FibPath{SwIfIndex: ^uint32(0), Type: fib_types.FIB_API_PATH_TYPE_DROP, Proto: proto,
		Preference: core.DropRoutePreference}
}

// addDelDropRoute adds or deletes a DropRoute. VPP answers 0 to the delete
// of a route it does not hold; a missing table is NO_SUCH_FIB.
func addDelDropRoute(isAdd bool, r *vppcfg.DropRoute) *call {
	return &call{
		req: &ip.IPRouteAddDel{IsAdd: isAdd, Route: ip.IPRoute{TableID: r.VRF, Prefix: govppnode.Prefix(r.Prefix), NPaths: 1,
			Paths: []fib_types.FibPath{dropPath(r)}}},
		reply: routeAddDelReply,
		lazy:  acceptOf(isAdd, r, describeDropRoute),
	}
}

// describeDropRoute names a drop route call in errors.
var describeDropRoute = describeAs(func(isAdd bool, r *vppcfg.DropRoute) string {
	return fmt.Sprintf("%s drop route %s table %d", verb(isAdd), r.Prefix, r.VRF)
})

// dumpDropRoutes reads vppsvc's drop routes of every table: routes whose
// only path drops and carries core.DropRoutePreference.
func dumpDropRoutes(r *dumpRun) error {
	rpc := ip.NewServiceClient(r.d.conn)
	var tables []ip.IPTable
	err := drain(r.d, "ip_table_dump", func() (receiver[*ip.IPTableDetails], error) {
		return rpc.IPTableDump(r.ctx, &ip.IPTableDump{})
	}, func(m *ip.IPTableDetails) { tables = append(tables, m.Table) })
	if err != nil {
		return err
	}
	for _, t := range tables {
		err := drain(r.d, "ip_route_dump", func() (receiver[*ip.IPRouteDetails], error) {
			return rpc.IPRouteDump(r.ctx, &ip.IPRouteDump{Table: ip.IPTable{TableID: t.TableID, IsIP6: t.IsIP6}})
		}, func(m *ip.IPRouteDetails) {
			if route := m.Route; len(route.Paths) == 1 && route.Paths[0].Type == fib_types.FIB_API_PATH_TYPE_DROP &&
				route.Paths[0].Preference == core.DropRoutePreference {
				r.add(&vppcfg.DropRoute{Prefix: govppnode.FromPrefix(route.Prefix).Masked(), VRF: route.TableID}, "", 0)
			}
		})
		if err != nil {
			return err
		}
	}
	return nil
}
