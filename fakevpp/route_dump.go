package fakevpp

import (
	"net/netip"
	"sort"

	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/fib_types"
	"go.fd.io/govpp/binapi/ip"
	"go.fd.io/govpp/binapi/ip_types"

	"github.com/vppsvc/vppsvc/fakevpp/internal/apiaddr"
)

// ipTableDump lists the tables of both families (ip_table_dump): every table
// something holds a lock on, table 0 included.
func ipTableDump(c *call, _ *ip.IPTableDump) []api.Message {
	var out []api.Message
	for _, ip6 := range []bool{false, true} {
		ids := make([]uint32, 0, len(c.v.tableLocks(ip6)))
		for id := range c.v.tableLocks(ip6) {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		for _, id := range ids {
			out = append(out, &ip.IPTableDetails{Table: ip.IPTable{TableID: id, IsIP6: ip6, Name: c.v.tableName(id, ip6)}})
		}
	}
	return out
}

// ipRouteDump lists the routes of one table (ip_route_dump) that the API or
// the test topology added, each with its one path. A real VPP also lists
// its special, connected and receive entries; the fake does not keep them.
func ipRouteDump(c *call, req *ip.IPRouteDump) []api.Message {
	v := c.v
	ip6, table := req.Table.IsIP6, req.Table.TableID
	type entry struct {
		dst  netip.Prefix
		path fib_types.FibPath
	}
	var entries []entry
	proto := fib_types.FIB_API_PATH_NH_PROTO_IP4
	if ip6 {
		proto = fib_types.FIB_API_PATH_NH_PROTO_IP6
	}
	for k, r := range v.fibs().routes {
		if k.table != table || k.ip6 != ip6 {
			continue
		}
		p := fib_types.FibPath{SwIfIndex: ^uint32(0), Proto: proto, Weight: 1}
		switch {
		case r.drop:
			p.Type, p.Preference = fib_types.FIB_API_PATH_TYPE_DROP, r.pref
		case r.viaTable:
			p.TableID = r.next
		default:
			p.SwIfIndex = r.sw
		}
		entries = append(entries, entry{k.dst, p})
	}
	if table == 0 {
		for _, r := range v.routes {
			if r.dst.Addr().Is6() != ip6 {
				continue
			}
			if ifc := v.ifaceNamed(r.ifName); ifc != nil {
				entries = append(entries, entry{r.dst, fib_types.FibPath{SwIfIndex: ifc.index, Proto: proto, Weight: 1}})
			}
		}
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].dst.String() < entries[j].dst.String() })
	out := make([]api.Message, 0, len(entries))
	for _, e := range entries {
		out = append(out, &ip.IPRouteDetails{Route: ip.IPRoute{TableID: table, Prefix: ip_types.Prefix{Address: apiaddr.To(e.dst.Addr()), Len: uint8(e.dst.Bits())},
			NPaths: 1, Paths: []fib_types.FibPath{e.path}}})
	}
	return out
}
