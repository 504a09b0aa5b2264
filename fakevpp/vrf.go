package fakevpp

import (
	"fmt"
	"net/netip"
	"slices"

	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/fib_types"
	interfaces "go.fd.io/govpp/binapi/interface"
	"go.fd.io/govpp/binapi/ip"
	"go.fd.io/govpp/binapi/ip_neighbor"
	"go.fd.io/govpp/binapi/ip_types"

	"github.com/vppsvc/vppsvc/fakevpp/internal/apiaddr"
)

// VRF tables (VPP 25.10 vnet/fib, vnet/ip). A table exists while something
// holds a lock on it: the API (one lock however often it is added,
// ip_table_create), an interface bound to it (fib_table_bind) or a plugin
// (NAT44-ED's VRFs). Every interface starts in table 0 of both families;
// sw_interface_set_table moves it, but only while it has no address of the
// family (ip_table_bind: -ADDRESS_FOUND_FOR_INTERFACE; an unnumbered
// interface has its donor's addresses there, foreach_ip_interface_address
// with honor_unnumbered). A packet is looked up in
// its ingress interface's table; NAT44-ED forwards a translated packet in
// the table of the session's other side (see forwardFib). The fake uses the
// table ID as the FIB index.

const fibPlugin = "fib"

// fibState is the FIB beyond table 0's test routes (v.routes): the tables
// of both families with their locks (tables.go), which tables the API
// holds, routes added in any table, neighbours, and the FIB of the packet
// being traced.
type fibState struct {
	tables [2]map[uint32]int // per family (famIdx): table ID → locks
	api    map[tableKey]bool
	// names are the names tables were created with through the API
	// (ip_table_add_del's name); others are named by tableName.
	names  map[tableKey]string
	routes map[routeKey]*tableRoute
	nbrs   map[nbrKey]bool
	// learned are the hosts VPP learned from their ARP or neighbour
	// solicitation (neighbours.go); not in Dump.
	learned map[nbrKey]bool
	// cur is the FIB index the traced packet's buffer carries per family
	// (0 IPv4, 1 IPv6): set from the ingress interface, changed by NAT44-ED.
	cur [2]uint32
}

type tableKey struct {
	id  uint32
	ip6 bool
}

type routeKey struct {
	table uint32
	ip6   bool
	dst   netip.Prefix
}

// tableRoute is a route of ip_route_add_del or AddRouteIn: out of an
// interface (sw), or a lookup in another table (viaTable, next).
type tableRoute struct {
	sw       uint32
	nh       netip.Addr
	viaTable bool
	next     uint32
	// drop is a route whose path drops (FIB_API_PATH_TYPE_DROP); pref is
	// its path preference, which VPP keeps and dumps.
	drop bool
	pref uint8
}

type nbrKey struct {
	sw uint32
	ip netip.Addr
}

func famIdx(ip6 bool) int {
	if ip6 {
		return 1
	}
	return 0
}

var fibsSlot = stateOf[fibState](fibPlugin)

func (v *VPP) fibs() *fibState { return fibsSlot.of(v) }

func init() {
	registerPlugin(&plugin{
		name:  fibPlugin,
		order: 2,
		newState: func(*VPP) any {
			return &fibState{tables: [2]map[uint32]int{{0: 1}, {0: 1}}, api: map[tableKey]bool{}, names: map[tableKey]string{}, routes: map[routeKey]*tableRoute{}, nbrs: map[nbrKey]bool{}, learned: map[nbrKey]bool{}}
		},
		handlers: handlers(
			handle(ipTableAddDel),
			handle(swInterfaceSetTable),
			handle(swInterfaceGetTable),
			handle(ipRouteAddDel),
			handle(ipNeighborAddDel),
			handle(swInterfaceAddDelAddress),
			handle(ipAddressDump),
			handle(ipTableDump),
			handle(ipRouteDump),
		),
		input:            []node{{name: "ip-input-fib", order: 1, run: rxFibNode}},
		interfaceDeleted: fibInterfaceDeleted,
		dump:             fibDump,
	})
}

// rxFibNode is ip4-input / ip6-input setting the buffer's FIB index from the
// ingress interface.
func rxFibNode(c *pktCtx) {
	fam := famIdx(!c.pkt.is4())
	fs := c.v.fibs()
	fs.cur[fam] = c.rx.table[fam]
	if fs.cur[fam] != 0 {
		c.step("%s-input: %s is in table %d", c.family(), c.rx.name, fs.cur[fam])
	}
}

// forwardFib is what NAT44-ED does to the buffer after translating it: the
// packet is looked up in the FIB of the session's other side (the outside
// FIB chosen when the session was made for in2out, the inside one for
// out2in).
func (n *natState) forwardFib(c *pktCtx, s *session, dir int) {
	fib := s.inFib
	if dir == dirI2O {
		fib = s.outFib
	}
	fs := c.v.fibs()
	if fs.cur[0] != fib {
		c.step("nat44-ed: forwarded in table %d", fib)
	}
	fs.cur[0] = fib
}

// SetInterfaceTable puts an interface into table id of a family, as
// sw_interface_set_table does; it returns VPP's retval (0, -2 unknown
// interface, NO_SUCH_FIB, or ADDRESS_FOUND_FOR_INTERFACE when the interface
// has an address of the family).
func (v *VPP) SetInterfaceTable(name string, id uint32, ip6 bool) int32 {
	v.mu.Lock()
	defer v.mu.Unlock()
	ifc := v.ifaceNamed(name)
	if ifc == nil {
		return int32(api.INVALID_SW_IF_INDEX)
	}
	return v.bindTable(ifc, id, ip6)
}

// bindTable is ip_table_bind + fib_table_bind.
func (v *VPP) bindTable(ifc *iface, id uint32, ip6 bool) int32 {
	if !v.tableExistsFam(id, ip6) {
		return int32(api.NO_SUCH_FIB)
	}
	if v.hasAddrHonorUnnumbered(ifc, ip6) {
		return int32(api.ADDRESS_FOUND_FOR_INTERFACE)
	}
	fam := famIdx(ip6)
	if old := ifc.table[fam]; old != 0 {
		v.unlockTableFam(old, ip6)
	}
	if id != 0 {
		v.lockTableFam(id, ip6)
	}
	ifc.table[fam] = id
	return 0
}

// hasAddrHonorUnnumbered tells whether the interface has an address of the
// family, its donor's when it is unnumbered.
func (v *VPP) hasAddrHonorUnnumbered(ifc *iface, ip6 bool) bool {
	if ifc.unnumbered {
		if d := v.iface(ifc.unnumberedTo); d != nil {
			ifc = d
		}
	}
	_, has := ifc.firstAddr(ip6)
	return has
}

// AddRouteIn installs dst in table via the interface ifName (as AddRoute
// does in table 0). It returns false for an unknown interface or table.
func (v *VPP) AddRouteIn(table uint32, dst netip.Prefix, ifName string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	ifc := v.ifaceNamed(ifName)
	if ifc == nil || !v.tableExistsFam(table, dst.Addr().Is6()) {
		return false
	}
	dst = dst.Masked()
	v.fibs().routes[routeKey{table, dst.Addr().Is6(), dst}] = &tableRoute{sw: ifc.index}
	return true
}

// AddRouteToTable installs dst in table as a lookup in table next (a path
// with no interface and no next hop: VPP's deaggregation route, how a pod
// VRF reaches the host's table). It returns false for an unknown table.
func (v *VPP) AddRouteToTable(table uint32, dst netip.Prefix, next uint32) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	ip6 := dst.Addr().Is6()
	if !v.tableExistsFam(table, ip6) || !v.tableExistsFam(next, ip6) {
		return false
	}
	dst = dst.Masked()
	v.fibs().routes[routeKey{table, ip6, dst}] = &tableRoute{viaTable: true, next: next}
	return true
}

// AddNeighbour records a static neighbour. The fake delivers into a
// connected subnet without resolving neighbours; the neighbour's host
// entry (neighbours.go) outranks NAT44-ED's receive entries.
func (v *VPP) AddNeighbour(ifName string, a netip.Addr) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	ifc := v.ifaceNamed(ifName)
	if ifc == nil {
		return false
	}
	v.fibs().nbrs[nbrKey{ifc.index, a}] = true
	return true
}

// fibInterfaceDeleted drops the interface's routes, neighbours and table
// locks.
func fibInterfaceDeleted(v *VPP, ifc *iface) {
	fs := v.fibs()
	for k, r := range fs.routes {
		if !r.viaTable && r.sw == ifc.index {
			delete(fs.routes, k)
		}
	}
	for k := range fs.learned {
		if k.sw == ifc.index {
			delete(fs.learned, k)
		}
	}
	for k := range fs.nbrs {
		if k.sw == ifc.index {
			delete(fs.nbrs, k)
		}
	}
	for fam, id := range ifc.table {
		if id != 0 {
			v.unlockTableFam(id, fam == 1)
			ifc.table[fam] = 0
		}
	}
}

func fibDump(v *VPP, w *dumpWriter) {
	fs := v.fibs()
	for k, r := range fs.routes {
		switch {
		case r.viaTable:
			w.add("table routes", "table %d %s via table %d", k.table, k.dst, r.next)
		case r.drop:
			w.add("table routes", "table %d %s via drop (preference %d)", k.table, k.dst, r.pref)
		default:
			w.add("table routes", "table %d %s via %s", k.table, k.dst, v.ifName(r.sw))
		}
	}
	v.ifaces.each(func(_ uint32, ifc *iface) bool {
		if ifc.table != [2]uint32{} {
			w.add("interface tables", "%s ip4 %d ip6 %d", ifc.name, ifc.table[0], ifc.table[1])
		}
		return true
	})
}

// ipTableAddDel (ip_api.c): table 0 is ignored both ways; deleting an
// unknown table answers 0.
func ipTableAddDel(c *call, req *ip.IPTableAddDel) []api.Message {
	if req.IsAdd {
		c.v.addTable(req.Table.TableID, req.Table.IsIP6, req.Table.Name)
	} else {
		c.v.delTable(req.Table.TableID, req.Table.IsIP6)
	}
	return c.reply(&ip.IPTableAddDelReply{})
}

func swInterfaceSetTable(c *call, req *interfaces.SwInterfaceSetTable) []api.Message {
	r := &interfaces.SwInterfaceSetTableReply{}
	ifc := c.v.iface(uint32(req.SwIfIndex))
	if ifc == nil {
		r.Retval = int32(api.INVALID_SW_IF_INDEX)
	} else {
		r.Retval = c.v.bindTable(ifc, req.VrfID, req.IsIPv6)
	}
	return c.reply(r)
}

func swInterfaceGetTable(c *call, req *interfaces.SwInterfaceGetTable) []api.Message {
	r := &interfaces.SwInterfaceGetTableReply{VrfID: ^uint32(0)}
	if ifc := c.v.iface(uint32(req.SwIfIndex)); ifc == nil {
		r.Retval = int32(api.INVALID_SW_IF_INDEX)
	} else {
		r.VrfID = ifc.table[famIdx(req.IsIPv6)]
	}
	return c.reply(r)
}

// ipRouteAddDel serves the routes a CNI adds: one path, out of an interface
// (with or without a next hop) or, with no interface and no next hop, a
// lookup in the path's table. Other paths are answered with UNIMPLEMENTED
// and a violation.
func ipRouteAddDel(c *call, req *ip.IPRouteAddDel) []api.Message {
	v := c.v
	r := &ip.IPRouteAddDelReply{}
	dst, ok := prefixOf(req.Route.Prefix)
	if !ok {
		r.Retval = int32(api.INVALID_VALUE)
		return c.reply(r)
	}
	ip6 := dst.Addr().Is6()
	k := routeKey{req.Route.TableID, ip6, dst.Masked()}
	if !v.tableExistsFam(k.table, ip6) {
		r.Retval = int32(api.NO_SUCH_FIB)
		return c.reply(r)
	}
	if !req.IsAdd {
		// Deleting a route that is not there answers 0 (a real VPP 25.10).
		delete(v.fibs().routes, k)
		return c.reply(r)
	}
	if len(req.Route.Paths) != 1 {
		v.violate("unmodelled route", fmt.Sprintf("route %s in table %d with %d paths: the fake models one path", dst, k.table, len(req.Route.Paths)))
		r.Retval = int32(api.UNIMPLEMENTED)
		return c.reply(r)
	}
	p := req.Route.Paths[0]
	nh := pathNextHop(p, ip6)
	switch {
	case p.Type == fib_types.FIB_API_PATH_TYPE_DROP:
		v.fibs().routes[k] = &tableRoute{drop: true, pref: p.Preference}
	case p.SwIfIndex != ^uint32(0):
		if v.iface(p.SwIfIndex) == nil {
			r.Retval = int32(api.NO_MATCHING_INTERFACE)
			return c.reply(r)
		}
		v.fibs().routes[k] = &tableRoute{sw: p.SwIfIndex, nh: nh}
	case !nh.IsUnspecified():
		v.violate("unmodelled route", fmt.Sprintf("recursive route %s via %s in table %d", dst, nh, k.table))
		r.Retval = int32(api.UNIMPLEMENTED)
	case !v.tableExistsFam(p.TableID, ip6):
		r.Retval = int32(api.NO_SUCH_FIB)
	default:
		v.fibs().routes[k] = &tableRoute{viaTable: true, next: p.TableID}
	}
	return c.reply(r)
}

func pathNextHop(p fib_types.FibPath, ip6 bool) netip.Addr {
	if ip6 {
		return netip.AddrFrom16(p.Nh.Address.GetIP6())
	}
	return netip.AddrFrom4(p.Nh.Address.GetIP4())
}

func prefixOf(p ip_types.Prefix) (netip.Prefix, bool) {
	a, ok := apiaddr.From(p.Address)
	if !ok {
		return netip.Prefix{}, false
	}
	q := netip.PrefixFrom(a, int(p.Len)) // unmasked: an interface address
	return q, q.IsValid()
}

// ipNeighborAddDel records or removes a neighbour (see AddNeighbour).
func ipNeighborAddDel(c *call, req *ip_neighbor.IPNeighborAddDel) []api.Message {
	r := &ip_neighbor.IPNeighborAddDelReply{}
	a, ok := apiaddr.From(req.Neighbor.IPAddress)
	sw := uint32(req.Neighbor.SwIfIndex)
	switch {
	case c.v.iface(sw) == nil:
		r.Retval = int32(api.INVALID_SW_IF_INDEX)
	case !ok:
		r.Retval = int32(api.INVALID_VALUE)
	case req.IsAdd:
		c.v.fibs().nbrs[nbrKey{sw, a}] = true
	default:
		delete(c.v.fibs().nbrs, nbrKey{sw, a})
	}
	return c.reply(r)
}

// neighbours lists an interface's neighbours, sorted.
func (v *VPP) neighbours(sw uint32) []netip.Addr {
	var out []netip.Addr
	for k := range v.fibs().nbrs {
		if k.sw == sw {
			out = append(out, k.ip)
		}
	}
	slices.SortFunc(out, netip.Addr.Compare)
	return out
}
