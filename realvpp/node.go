package realvpp

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"go.fd.io/govpp/adapter"
	"go.fd.io/govpp/adapter/socketclient"
	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/acl"
	"go.fd.io/govpp/binapi/cnat"
	"go.fd.io/govpp/binapi/fib_types"
	interfaces "go.fd.io/govpp/binapi/interface"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip"
	"go.fd.io/govpp/binapi/ip_neighbor"
	"go.fd.io/govpp/binapi/ip_types"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/binapi/pg"
	"go.fd.io/govpp/binapi/vlib"
	"go.fd.io/govpp/binapi/vpe"
	"go.fd.io/govpp/core"

	"github.com/vppsvc/vppsvc/internal/govppnode"
	"github.com/vppsvc/vppsvc/vppsock"
)

// Tag marks the interfaces a Node created. A VPP holding any interface
// without it (local0 aside) is somebody's node, and Open refuses it.
const Tag = "vppsvc-realvpp"

// callTimeout bounds one binary-API call of the node's own connection.
const callTimeout = 10 * time.Second

// Node is a running VPP 25.10 used as a scratch test node: it builds the
// interfaces (packet-generator interfaces under the names a test asks
// for), addresses, routes and neighbours of a topology, sends packets in
// and reports where they left, and resets VPP to a clean state. The
// configuration under test is programmed by whoever connects through
// Adapter (the agent, through the product's own driver).
type Node struct {
	socket string
	opts   Options
	conn   *core.Connection
	dir    string // pcap files: streams and captures (VPP runs on this machine)

	mu     sync.Mutex
	ifaces []*pgIface
	nextID uint32 // next packet-generator interface id
	seq    int    // streams and capture generations, never reused
	nbrs   map[nbrKey]bool
	steps  []step // the topology as built, for Restart
	counts *callCounts
}

// Options tune a Node.
type Options struct {
	// RestartCommand is a shell command line that restarts the VPP behind
	// the socket (e.g. "systemctl restart vpp"); without it Restart
	// returns ErrNoRestart.
	RestartCommand string
}

type nbrKey struct {
	sw uint32
	ip netip.Addr
}

// pgIface is a packet-generator interface standing for one interface of
// the topology.
type pgIface struct {
	name    string
	id      uint32 // pg instance: "source pg<id>" in stream commands
	sw      uint32
	mac     mac
	addrs   []netip.Prefix
	table   [2]uint32 // IPv4 and IPv6 VRF (vrf.go)
	capture string    // the pcap file VPP writes what the interface sends into
	seen    int       // frames of capture already reported
}

// peerMAC is the address of the hosts behind an interface: the source of
// the frames the node injects there and the MAC of every static neighbour.
func (i *pgIface) peerMAC() mac { return mac{0x02, 0xfe, 0, 0, byte(i.sw >> 8), byte(i.sw)} }

// Open connects to the VPP whose API socket is socket, checks that it is
// VPP 25.10 and a scratch VPP (no interface but local0 and those a Node
// created), and resets it: every interface, route, NAT44-ED, cnat and ACL
// configuration a previous node or agent left is removed.
func Open(socket string, opts Options) (*Node, error) {
	if _, err := os.Stat(socket); err != nil {
		return nil, fmt.Errorf("VPP API socket: %w", err)
	}
	conn, err := core.Connect(socketclient.NewVppClient(socket))
	if err != nil {
		return nil, fmt.Errorf("connect to VPP at %s: %w", socket, err)
	}
	n := &Node{socket: socket, opts: opts, conn: conn, nbrs: map[nbrKey]bool{}, counts: newCallCounts()}
	if err := n.init(); err != nil {
		conn.Disconnect()
		return nil, err
	}
	return n, nil
}

func (n *Node) init() error {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	ver, err := vpe.NewServiceClient(n.conn).ShowVersion(ctx, &vpe.ShowVersion{})
	if err != nil {
		return fmt.Errorf("show version: %w", err)
	}
	if !strings.HasPrefix(ver.Version, "25.10") {
		return fmt.Errorf("VPP at %s is version %q; vppsvc's test node needs 25.10", n.socket, ver.Version)
	}
	ifs, err := n.dumpInterfaces(ctx)
	if err != nil {
		return err
	}
	var foreign []string
	for _, d := range ifs {
		if d.SwIfIndex != 0 && d.Tag != Tag {
			foreign = append(foreign, d.InterfaceName)
		}
	}
	if len(foreign) > 0 {
		return fmt.Errorf("VPP at %s has interfaces vppsvc's test node did not create (%s): "+
			"refusing to trace into what may be a production node; use a scratch VPP", n.socket, strings.Join(foreign, ", "))
	}
	if n.dir, err = os.MkdirTemp("", "vppsvc-realvpp-"); err != nil {
		return err
	}
	return n.Reset()
}

// Close removes what the node configured and disconnects. VPP keeps
// running.
func (n *Node) Close() error {
	err := n.Reset()
	n.conn.Disconnect()
	os.RemoveAll(n.dir)
	return err
}

// Disconnect closes the node's connection and leaves VPP as it is (the
// next Open resets it).
func (n *Node) Disconnect() {
	n.conn.Disconnect()
	os.RemoveAll(n.dir)
}

// Socket is the VPP API socket the node drives.
func (n *Node) Socket() string { return n.socket }

// Adapter returns a new client connection to the VPP, for an agent or a
// driver under test. Messages sent through it are counted (Calls).
func (n *Node) Adapter() adapter.VppAPI {
	return newCountingAdapter(vppsock.New(n.socket), n.counts)
}

// Calls counts the requests sent through the node's adapters since the
// last ResetCalls, by message name (e.g. "nat44_add_del_static_mapping_v2").
func (n *Node) Calls() map[string]int { return n.counts.snapshot() }

// ResetCalls zeroes Calls.
func (n *Node) ResetCalls() { n.counts.reset() }

// CLI runs a VPP debug-CLI command through the binary API and returns its
// output.
func (n *Node) CLI(cmd string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	r, err := vlib.NewServiceClient(n.conn).CliInband(ctx, &vlib.CliInband{Cmd: cmd})
	if err != nil {
		return "", fmt.Errorf("%s: %w", cmd, err)
	}
	return r.Reply, nil
}

func (n *Node) dumpInterfaces(ctx context.Context) ([]*interfaces.SwInterfaceDetails, error) {
	ds, err := govppnode.RecvAll[*interfaces.SwInterfaceDetails](interfaces.NewServiceClient(n.conn).SwInterfaceDump(ctx, &interfaces.SwInterfaceDump{SwIfIndex: ^interface_types.InterfaceIndex(0)}))
	if err != nil {
		return nil, fmt.Errorf("sw_interface_dump: %w", err)
	}
	return ds, nil
}

// AddInterface creates a packet-generator interface named name, admin up,
// with addresses, and starts capturing what VPP sends out of it.
func (n *Node) AddInterface(name string, addrs ...netip.Prefix) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	if n.iface(name) != nil {
		return fmt.Errorf("interface %s exists", name)
	}
	id := n.nextID
	n.nextID++
	r, err := pg.NewServiceClient(n.conn).PgCreateInterfaceV2(ctx, &pg.PgCreateInterfaceV2{InterfaceID: interface_types.InterfaceIndex(id), Mode: pg.PG_API_MODE_ETHERNET})
	if err != nil {
		return fmt.Errorf("create pg%d for %s: %w", id, name, err)
	}
	ifc := &pgIface{name: name, id: id, sw: uint32(r.SwIfIndex), addrs: addrs}
	n.steps = append(n.steps, step{addIface: name, addrs: addrs})
	ic := interfaces.NewServiceClient(n.conn)
	sw := interface_types.InterfaceIndex(ifc.sw)
	if _, err := ic.SwInterfaceTagAddDel(ctx, &interfaces.SwInterfaceTagAddDel{IsAdd: true, SwIfIndex: sw, Tag: Tag}); err != nil {
		return fmt.Errorf("tag %s: %w", name, err)
	}
	n.ifaces = append(n.ifaces, ifc)
	if _, err := ic.SwInterfaceSetInterfaceName(ctx, &interfaces.SwInterfaceSetInterfaceName{SwIfIndex: sw, Name: name}); err != nil {
		return fmt.Errorf("name pg%d %s: %w", id, name, err)
	}
	for _, a := range addrs {
		if err := govppnode.AddDelAddress(ctx, n.conn, ifc.sw, a, true); err != nil {
			return fmt.Errorf("address %s on %s: %w", a, name, err)
		}
	}
	if _, err := ic.SwInterfaceSetFlags(ctx, &interfaces.SwInterfaceSetFlags{SwIfIndex: sw, Flags: interface_types.IF_STATUS_API_FLAG_ADMIN_UP}); err != nil {
		return fmt.Errorf("set %s up: %w", name, err)
	}
	ds, err := n.dumpInterfaces(ctx)
	if err != nil {
		return err
	}
	for _, d := range ds {
		if uint32(d.SwIfIndex) == ifc.sw {
			copy(ifc.mac[:], d.L2Address[:])
		}
	}
	return n.startCapture(ifc)
}

// startCapture makes VPP write what it sends out of ifc into a pcap file.
// It goes through the CLI: the pg_capture message answers 0 and captures
// nothing on VPP 25.10 (seen on a real VPP; the CLI form works).
func (n *Node) startCapture(ifc *pgIface) error {
	n.seq++
	ifc.capture = filepath.Join(n.dir, fmt.Sprintf("out-%s-%d.pcap", ifc.name, n.seq))
	ifc.seen = 0
	out, err := n.CLI(fmt.Sprintf("packet-generator capture %s pcap %s count %d", ifc.name, ifc.capture, 1<<30))
	if err != nil || strings.TrimSpace(out) != "" {
		return fmt.Errorf("capture on %s: %v %s", ifc.name, err, strings.TrimSpace(out))
	}
	return nil
}

// SetUnnumbered makes name borrow the addresses of from, which enables IP
// on it without an address of its own: how a CNI builds pod interfaces.
func (n *Node) SetUnnumbered(name, from string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	ifc, src := n.iface(name), n.iface(from)
	if ifc == nil || src == nil {
		return fmt.Errorf("unnumbered %s to %s: unknown interface", name, from)
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	if err := govppnode.SetUnnumbered(ctx, n.conn, ifc.sw, src.sw); err != nil {
		return fmt.Errorf("unnumbered %s to %s: %w", name, from, err)
	}
	n.steps = append(n.steps, step{unnumbered: [2]string{name, from}})
	return nil
}

// AddRoute sends dst out of the interface ifName, as fakevpp's AddRoute
// does. A real VPP needs a next hop with a resolved neighbour to send a
// packet: a host route's next hop is the host itself; any other route's
// is a gateway inside the interface's own subnet of that family (or the
// first address of dst when the interface has none). Each next hop gets a
// static neighbour with the interface's peer MAC.
func (n *Node) AddRoute(dst netip.Prefix, ifName string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	ifc := n.iface(ifName)
	if ifc == nil {
		return fmt.Errorf("route %s via %s: unknown interface", dst, ifName)
	}
	dst = dst.Masked()
	nh := nextHop(dst, ifc.addrs)
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	if err := n.addNeighbour(ctx, ifc, nh); err != nil {
		return err
	}
	if err := govppnode.AddDelRoute(ctx, n.conn, govppnode.Route(0, dst, govppnode.Path(ifc.sw, 0, dst, nh)), true); err != nil {
		return fmt.Errorf("route %s via %s: %w", dst, ifName, err)
	}
	n.steps = append(n.steps, step{route: dst, via: ifName})
	return nil
}

// addNeighbour gives ip a static neighbour entry with ifc's peer MAC, once.
func (n *Node) addNeighbour(ctx context.Context, ifc *pgIface, ip netip.Addr) error {
	k := nbrKey{ifc.sw, ip}
	if n.nbrs[k] {
		return nil
	}
	if err := govppnode.AddStaticNeighbour(ctx, n.conn, ifc.sw, ip, ifc.peerMAC()); err != nil {
		return fmt.Errorf("neighbour %s on %s: %w", ip, ifc.name, err)
	}
	n.nbrs[k] = true
	return nil
}

// learnNeighbour makes a client inside one of rx's connected subnets a
// known neighbour, as its own ARP or neighbour discovery would before it
// talks: replies to it then leave without VPP resolving it (the fake
// delivers into a connected subnet directly). Called with mu held.
func (n *Node) learnNeighbour(rx *pgIface, src netip.Addr) error {
	for _, a := range rx.addrs {
		if a.Contains(src) && a.Addr() != src {
			ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
			defer cancel()
			return n.addNeighbour(ctx, rx, src)
		}
	}
	return nil
}

// nextHop picks the next hop of a route to dst out of an interface with
// addrs (see AddRoute).
func nextHop(dst netip.Prefix, addrs []netip.Prefix) netip.Addr {
	if dst.IsSingleIP() {
		return dst.Addr()
	}
	for _, a := range addrs {
		if a.Addr().Is4() != dst.Addr().Is4() || a.IsSingleIP() {
			continue
		}
		// The last host of the subnet (the first one is usually VPP's).
		gw := lastHost(a.Masked())
		if gw != a.Addr() {
			return gw
		}
		return a.Masked().Addr().Next()
	}
	return dst.Addr().Next()
}

func lastHost(p netip.Prefix) netip.Addr {
	b := p.Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	b[len(b)-1] &^= 1 // …254, not the IPv4 broadcast
	a, _ := netip.AddrFromSlice(b)
	return a
}

func (n *Node) iface(name string) *pgIface {
	for _, i := range n.ifaces {
		if i.name == name {
			return i
		}
	}
	return nil
}

// InterfaceIndex is VPP's sw_if_index of an interface the node created.
func (n *Node) InterfaceIndex(name string) (uint32, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if ifc := n.iface(name); ifc != nil {
		return ifc.sw, true
	}
	return 0, false
}

// Interfaces lists the names of the interfaces the node created, in order.
func (n *Node) Interfaces() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	names := make([]string, len(n.ifaces))
	for i, ifc := range n.ifaces {
		names[i] = ifc.name
	}
	return names
}

// Reset brings VPP back to a clean state: ACLs unbound and deleted,
// NAT44-ED disabled (which removes its mappings, addresses and interface
// roles), cnat translations, sessions and SNAT settings removed, routes
// through the node's interfaces deleted and the interfaces themselves
// deleted (with their neighbours and features).
func (n *Node) Reset() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 4*callTimeout)
	defer cancel()
	var errs []error
	errs = append(errs, n.resetACL(ctx), n.resetNAT44(ctx), n.resetCNAT(ctx))
	ifs, err := n.dumpInterfaces(ctx)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	var ours []uint32
	for _, d := range ifs {
		if d.Tag == Tag {
			ours = append(ours, uint32(d.SwIfIndex))
		}
	}
	errs = append(errs, n.deleteRoutes(ctx, ours), n.deleteNeighbours(ctx, ours), n.unbindTables(ctx, ours))
	pgc := pg.NewServiceClient(n.conn)
	for _, sw := range ours {
		if _, err := pgc.PgDeleteInterface(ctx, &pg.PgDeleteInterface{SwIfIndex: interface_types.InterfaceIndex(sw)}); err != nil {
			errs = append(errs, fmt.Errorf("delete pg interface %d: %w", sw, err))
		}
	}
	errs = append(errs, n.deleteTables(ctx))
	n.ifaces, n.nbrs, n.steps = nil, map[nbrKey]bool{}, nil
	return errors.Join(errs...)
}

func (n *Node) resetACL(ctx context.Context) error {
	c := acl.NewServiceClient(n.conn)
	lists, err := govppnode.RecvAll[*acl.ACLInterfaceListDetails](c.ACLInterfaceListDump(ctx, &acl.ACLInterfaceListDump{SwIfIndex: ^interface_types.InterfaceIndex(0)}))
	if err != nil {
		return fmt.Errorf("acl_interface_list_dump: %w", err)
	}
	for _, l := range lists {
		if l.Count == 0 {
			continue
		}
		if _, err := c.ACLInterfaceSetACLList(ctx, &acl.ACLInterfaceSetACLList{SwIfIndex: l.SwIfIndex}); err != nil {
			return fmt.Errorf("unbind ACLs of %d: %w", l.SwIfIndex, err)
		}
	}
	acls, err := govppnode.RecvAll[*acl.ACLDetails](c.ACLDump(ctx, &acl.ACLDump{ACLIndex: ^uint32(0)}))
	if err != nil {
		return fmt.Errorf("acl_dump: %w", err)
	}
	for _, a := range acls {
		if _, err := c.ACLDel(ctx, &acl.ACLDel{ACLIndex: a.ACLIndex}); err != nil {
			return fmt.Errorf("acl_del %d: %w", a.ACLIndex, err)
		}
	}
	return nil
}

func (n *Node) resetNAT44(ctx context.Context) error {
	_, err := nat44_ed.NewServiceClient(n.conn).Nat44EdPluginEnableDisable(ctx, &nat44_ed.Nat44EdPluginEnableDisable{Enable: false})
	if err != nil && !isRetval(err, int32(api.FEATURE_ALREADY_DISABLED)) { // never enabled
		return fmt.Errorf("disable NAT44-ED: %w", err)
	}
	return nil
}

func (n *Node) resetCNAT(ctx context.Context) error {
	c := cnat.NewServiceClient(n.conn)
	ts, err := govppnode.RecvAll[*cnat.CnatTranslationDetails](c.CnatTranslationDump(ctx, &cnat.CnatTranslationDump{}))
	if err != nil {
		return fmt.Errorf("cnat_translation_dump: %w", err)
	}
	for _, tr := range ts {
		if _, err := c.CnatTranslationDel(ctx, &cnat.CnatTranslationDel{ID: tr.Translation.ID}); err != nil {
			return fmt.Errorf("cnat_translation_del %d: %w", tr.Translation.ID, err)
		}
	}
	if _, err := c.CnatSessionPurge(ctx, &cnat.CnatSessionPurge{}); err != nil {
		return fmt.Errorf("cnat_session_purge: %w", err)
	}
	if _, err := c.CnatSetSnatAddresses(ctx, &cnat.CnatSetSnatAddresses{SwIfIndex: ^interface_types.InterfaceIndex(0)}); err != nil {
		return fmt.Errorf("cnat_set_snat_addresses: %w", err)
	}
	if _, err := c.CnatSetSnatPolicy(ctx, &cnat.CnatSetSnatPolicy{Policy: cnat.CNAT_POLICY_NONE}); err != nil {
		return fmt.Errorf("cnat_set_snat_policy: %w", err)
	}
	return n.resetCNATExcludes(ctx, c)
}

// resetCNATExcludes removes cnat's SNAT exclusion prefixes. No message
// dumps them, so they are read from "show cnat snat-policy".
func (n *Node) resetCNATExcludes(ctx context.Context, c cnat.RPCService) error {
	r, err := vlib.NewServiceClient(n.conn).CliInband(ctx, &vlib.CliInband{Cmd: "show cnat snat-policy"})
	if err != nil {
		return err
	}
	for _, p := range parseExcludedPrefixes(r.Reply) {
		if _, err := c.CnatSnatPolicyAddDelExcludePfx(ctx, &cnat.CnatSnatPolicyAddDelExcludePfx{IsAdd: 0, Prefix: govppnode.Prefix(p)}); err != nil {
			return fmt.Errorf("remove cnat SNAT exclusion %s: %w", p, err)
		}
	}
	return nil
}

// parseExcludedPrefixes picks the prefixes out of "show cnat snat-policy"
// (every word that parses as a prefix: the command prints nothing else
// that does).
func parseExcludedPrefixes(out string) []netip.Prefix {
	var ps []netip.Prefix
	for _, w := range strings.Fields(out) {
		if p, err := netip.ParsePrefix(strings.Trim(w, ",;")); err == nil && !slices.Contains(ps, p) {
			ps = append(ps, p)
		}
	}
	return ps
}

// deleteNeighbours removes the neighbour entries of sws. VPP 25.10 keeps a
// deleted interface's static neighbours; with the interface's index
// re-used by the next interface they answered for the wrong one, and the
// next neighbour added there crashed VPP (seen here, SIGSEGV in
// ip_pmtu_adj_delegate_adj_created).
func (n *Node) deleteNeighbours(ctx context.Context, sws []uint32) error {
	c := ip_neighbor.NewServiceClient(n.conn)
	for _, sw := range sws {
		for _, af := range []ip_types.AddressFamily{ip_types.ADDRESS_IP4, ip_types.ADDRESS_IP6} {
			nbs, err := govppnode.RecvAll[*ip_neighbor.IPNeighborDetails](c.IPNeighborDump(ctx, &ip_neighbor.IPNeighborDump{SwIfIndex: interface_types.InterfaceIndex(sw), Af: af}))
			if err != nil {
				return fmt.Errorf("ip_neighbor_dump: %w", err)
			}
			for _, nb := range nbs {
				if _, err := c.IPNeighborAddDel(ctx, &ip_neighbor.IPNeighborAddDel{IsAdd: false, Neighbor: nb.Neighbor}); err != nil {
					return fmt.Errorf("delete neighbour %v: %w", nb.Neighbor.IPAddress, err)
				}
			}
		}
	}
	return nil
}

// deleteRoutes removes the routes of every table (both families) that
// leave through one of sws or continue in another table.
func (n *Node) deleteRoutes(ctx context.Context, sws []uint32) error {
	c := ip.NewServiceClient(n.conn)
	tables, err := govppnode.RecvAll[*ip.IPTableDetails](c.IPTableDump(ctx, &ip.IPTableDump{}))
	if err != nil {
		return fmt.Errorf("ip_table_dump: %w", err)
	}
	for _, t := range tables {
		// Every table, not only 0: a route left in a VRF keeps its
		// shared path list, and VPP hands that list, resolved against the
		// deleted interface, to the next node's route with the same path
		// (seen: a default route that stayed unresolved).
		routes, err := govppnode.RecvAll[*ip.IPRouteDetails](c.IPRouteDump(ctx, &ip.IPRouteDump{Table: t.Table}))
		if err != nil {
			return fmt.Errorf("ip_route_dump: %w", err)
		}
		var del []ip.IPRoute
		for _, d := range routes {
			for _, p := range d.Route.Paths {
				// Through one of the node's interfaces, or a lookup in
				// another table (AddRouteToTable; a scratch VPP has no
				// other routes without an interface).
				if (slices.Contains(sws, p.SwIfIndex) || p.SwIfIndex == ^uint32(0)) && p.Type == fib_types.FIB_API_PATH_TYPE_NORMAL {
					del = append(del, d.Route)
					break
				}
				// vppsvc's drop routes, marked by their path preference
				// (DropRoutePreference of vppcfg/internal/core; realvpp imports nothing of
				// the VPP layer).
				if p.Type == fib_types.FIB_API_PATH_TYPE_DROP && p.Preference == dropRoutePreference {
					del = append(del, d.Route)
					break
				}
			}
		}
		for _, r := range del {
			// The interfaces' connected and local prefixes are listed too;
			// VPP refuses to delete them through the API (they go with the
			// address), so a refusal here is expected and harmless.
			_ = govppnode.AddDelRoute(ctx, n.conn, r, false)
		}
	}
	return nil
}

// dropRoutePreference is vppcfg/internal/core.DropRoutePreference, the mark of the drop
// routes a test's agent adds.
const dropRoutePreference = 0x76

func isRetval(err error, retval int32) bool {
	var ve api.VPPApiError
	return errors.As(err, &ve) && int32(ve) == retval
}

// dumpCommands are the "show" commands whose outputs make Dump: the state
// an agent programs, without counters that move with traffic.
var dumpCommands = []string{
	"show nat44 interfaces",
	"show nat44 addresses",
	"show nat44 static mappings",
	"show acl-plugin acl",
	"show acl-plugin interface",
	"show cnat translation",
}

// Dump returns VPP's NAT44-ED, ACL and cnat configuration as VPP's CLI
// prints it; two equal dumps mean equal configuration.
func (n *Node) Dump() string {
	var b strings.Builder
	for _, cmd := range dumpCommands {
		out, err := n.CLI(cmd)
		if err != nil {
			out = "error: " + err.Error()
		}
		fmt.Fprintf(&b, "== %s\n%s\n", cmd, strings.TrimRight(out, "\n"))
	}
	return b.String()
}
