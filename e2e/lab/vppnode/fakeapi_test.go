package vppnode

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"reflect"
	"slices"
	"sync"

	"go.fd.io/govpp/adapter"
	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/af_packet"
	"go.fd.io/govpp/binapi/ethernet_types"
	"go.fd.io/govpp/binapi/fib_types"
	interfaces "go.fd.io/govpp/binapi/interface"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip"
	"go.fd.io/govpp/binapi/ip_neighbor"
	"go.fd.io/govpp/binapi/ip_types"
	"go.fd.io/govpp/binapi/l2"
	"go.fd.io/govpp/binapi/memclnt"
	"go.fd.io/govpp/binapi/vpe"
	"go.fd.io/govpp/codec"

	"github.com/vppsvc/vppsvc/internal/govppnode"
)

// fakeAPI is a govpp adapter answering the messages Client sends as VPP
// 25.10 does, from a small model of its state, so that the Client's
// read-then-change decisions are tested without a VPP. The real-VPP test
// (node_test.go) is the judge of the model.
type fakeAPI struct {
	version string

	mu       sync.Mutex
	cb       adapter.MsgCallback
	ids      map[string]uint16 // name_crc -> id
	types    map[uint16]reflect.Type
	nextID   uint16
	ifs      map[uint32]*fakeIf
	nextSw   uint32
	routes   map[netip.Prefix]fakePath
	nbrs     map[fakeNbrKey]ethernet_types.MacAddress
	bds      map[uint32]*fakeBD
	requests map[string]int
}

// fakeBD is a bridge domain: its BVI (0: none), members (the BVI among
// them, as VPP lists it) and L2 FIB.
type fakeBD struct {
	bvi     uint32
	members []uint32
	shg     map[uint32]uint8 // split-horizon group by member
	fib     map[ethernet_types.MacAddress]fakeL2Entry
}

type fakeL2Entry struct {
	sw     uint32
	static bool
}

type fakeIf struct {
	name, tag, hostIf string
	mac               ethernet_types.MacAddress
	up, ip6           bool
	addrs             []netip.Prefix
	unnumberedTo      uint32                      // 0: none (local0 never lends)
	create            *af_packet.AfPacketCreateV3 // what made it
	polling           bool                        // its one RX queue's mode
	bd                uint32                      // the bridge domain it is an L2 member of; 0: L3
}

type fakePath struct {
	sw uint32
	nh ip_types.AddressUnion
}

type fakeNbrKey struct {
	sw uint32
	ip netip.Addr
}

func newFakeAPI(version string) *fakeAPI {
	return &fakeAPI{version: version, ids: map[string]uint16{}, types: map[uint16]reflect.Type{}, nextID: 1,
		ifs: map[uint32]*fakeIf{}, nextSw: 1, routes: map[netip.Prefix]fakePath{}, nbrs: map[fakeNbrKey]ethernet_types.MacAddress{}, bds: map[uint32]*fakeBD{}, requests: map[string]int{}}
}

func (f *fakeAPI) Connect() error    { return nil }
func (f *fakeAPI) Disconnect() error { return nil }
func (f *fakeAPI) WaitReady() error  { return nil }

func (f *fakeAPI) SetMsgCallback(cb adapter.MsgCallback) {
	f.mu.Lock()
	f.cb = cb
	f.mu.Unlock()
}

func (f *fakeAPI) GetMsgID(name, crc string) (uint16, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := name + "_" + crc
	if id, ok := f.ids[k]; ok {
		return id, nil
	}
	for _, msgs := range api.GetRegisteredMessages() {
		if m, ok := msgs[k]; ok {
			id := f.nextID
			f.nextID++
			f.ids[k] = id
			f.types[id] = reflect.TypeOf(m).Elem()
			return id, nil
		}
	}
	return 0, &adapter.UnknownMsgError{MsgName: name, MsgCrc: crc}
}

func (f *fakeAPI) SendMsg(context uint32, data []byte) error {
	f.mu.Lock()
	t, ok := f.types[binary.BigEndian.Uint16(data)]
	cb := f.cb
	f.mu.Unlock()
	if !ok {
		return fmt.Errorf("fake VPP: unknown message id %d", binary.BigEndian.Uint16(data))
	}
	req := reflect.New(t).Interface().(api.Message)
	if err := codec.DecodeMsg(data, req); err != nil {
		return err
	}
	f.mu.Lock()
	f.requests[req.GetMessageName()]++
	replies := f.handle(req)
	f.mu.Unlock()
	for _, r := range replies {
		id, err := f.GetMsgID(r.GetMessageName(), r.GetCrcString())
		if err != nil {
			return err
		}
		out, err := codec.EncodeMsg(r, id)
		if err != nil {
			return err
		}
		// The context follows the client index in messages that carry one
		// (VPP declares sw_interface_rx_placement_details so).
		at := 2
		if r.GetMessageType() == api.RequestMessage {
			at = 6
		}
		binary.BigEndian.PutUint32(out[at:at+4], context)
		cb(id, out)
	}
	return nil
}

// retval of VPP's errors the Client relies on.
const (
	errNoSuchEntry    = -6  // VNET_API_ERROR_NO_SUCH_ENTRY
	errIfExists       = -79 // VNET_API_ERROR_IF_ALREADY_EXISTS
	errIP6NotEnabled  = -62
	errInvalidIfIndex = -2
)

// handle answers one request with VPP's replies. Called with mu held.
func (f *fakeAPI) handle(req api.Message) []api.Message {
	switch m := req.(type) {
	case *memclnt.ControlPing:
		return []api.Message{&memclnt.ControlPingReply{VpePID: 4242}}
	case *vpe.ShowVersion:
		return []api.Message{&vpe.ShowVersionReply{Version: f.version}}
	case *interfaces.SwInterfaceDump:
		var out []api.Message
		out = append(out, &interfaces.SwInterfaceDetails{SwIfIndex: 0, InterfaceName: "local0"})
		for _, sw := range f.sortedIfs() {
			i := f.ifs[sw]
			d := &interfaces.SwInterfaceDetails{SwIfIndex: interface_types.InterfaceIndex(sw), InterfaceName: i.name, Tag: i.tag, L2Address: i.mac}
			if i.up {
				d.Flags = interface_types.IF_STATUS_API_FLAG_ADMIN_UP
			}
			out = append(out, d)
		}
		return out
	case *af_packet.AfPacketDump:
		var out []api.Message
		for _, sw := range f.sortedIfs() {
			out = append(out, &af_packet.AfPacketDetails{SwIfIndex: interface_types.InterfaceIndex(sw), HostIfName: f.ifs[sw].hostIf})
		}
		return out
	case *af_packet.AfPacketCreateV3:
		for sw, i := range f.ifs {
			if i.hostIf == m.HostIfName {
				return []api.Message{&af_packet.AfPacketCreateV3Reply{Retval: errIfExists, SwIfIndex: interface_types.InterfaceIndex(sw)}}
			}
		}
		sw := f.nextSw
		f.nextSw++
		mac := m.HwAddr
		if m.UseRandomHwAddr || mac == (ethernet_types.MacAddress{}) {
			mac = ethernet_types.MacAddress{0x02, 0xfe, 0, 0, 0, byte(sw)}
		}
		f.ifs[sw] = &fakeIf{name: "host-" + m.HostIfName, hostIf: m.HostIfName, mac: mac, create: m}
		return []api.Message{&af_packet.AfPacketCreateV3Reply{SwIfIndex: interface_types.InterfaceIndex(sw)}}
	case *af_packet.AfPacketDelete:
		for sw, i := range f.ifs {
			if i.hostIf == m.HostIfName {
				delete(f.ifs, sw)
				// A deleted interface leaves its bridge; static L2 FIB
				// entries pointing at it stay.
				if bd := f.bds[i.bd]; bd != nil {
					bd.members = slices.DeleteFunc(bd.members, func(x uint32) bool { return x == sw })
				}
				return []api.Message{&af_packet.AfPacketDeleteReply{}}
			}
		}
		return []api.Message{&af_packet.AfPacketDeleteReply{Retval: errNoSuchEntry}}
	case *interfaces.SwInterfaceRxPlacementDump:
		i, _ := f.iface(uint32(m.SwIfIndex))
		if i == nil {
			return nil
		}
		mode := interface_types.RX_MODE_API_INTERRUPT
		if i.polling {
			mode = interface_types.RX_MODE_API_POLLING
		}
		return []api.Message{&interfaces.SwInterfaceRxPlacementDetails{SwIfIndex: m.SwIfIndex, Mode: mode}}
	case *interfaces.SwInterfaceSetRxMode:
		i, rv := f.iface(uint32(m.SwIfIndex))
		if i != nil {
			i.polling = m.Mode == interface_types.RX_MODE_API_POLLING
		}
		return []api.Message{&interfaces.SwInterfaceSetRxModeReply{Retval: rv}}
	case *interfaces.SwInterfaceSetInterfaceName:
		i, rv := f.iface(uint32(m.SwIfIndex))
		if i != nil {
			i.name = m.Name
		}
		return []api.Message{&interfaces.SwInterfaceSetInterfaceNameReply{Retval: rv}}
	case *interfaces.SwInterfaceTagAddDel:
		i, rv := f.iface(uint32(m.SwIfIndex))
		if i != nil {
			i.tag = m.Tag
		}
		return []api.Message{&interfaces.SwInterfaceTagAddDelReply{Retval: rv}}
	case *interfaces.SwInterfaceSetFlags:
		i, rv := f.iface(uint32(m.SwIfIndex))
		if i != nil {
			i.up = m.Flags&interface_types.IF_STATUS_API_FLAG_ADMIN_UP != 0
		}
		return []api.Message{&interfaces.SwInterfaceSetFlagsReply{Retval: rv}}
	case *ip.IPAddressDump:
		i, _ := f.iface(uint32(m.SwIfIndex))
		var out []api.Message
		if i != nil {
			for _, a := range i.addrs {
				if a.Addr().Is6() == m.IsIPv6 {
					out = append(out, &ip.IPAddressDetails{SwIfIndex: m.SwIfIndex, Prefix: ip_types.AddressWithPrefix(govppnode.Prefix(a))})
				}
			}
		}
		return out
	case *interfaces.SwInterfaceAddDelAddress:
		i, rv := f.iface(uint32(m.SwIfIndex))
		if i != nil {
			p := govppnode.FromPrefix(ip_types.Prefix(m.Prefix))
			for _, a := range i.addrs {
				if a == p {
					return []api.Message{&interfaces.SwInterfaceAddDelAddressReply{Retval: -1}} // VPP refuses a duplicate
				}
			}
			i.addrs = append(i.addrs, p)
			if p.Addr().Is6() {
				i.ip6 = true
			}
		}
		return []api.Message{&interfaces.SwInterfaceAddDelAddressReply{Retval: rv}}
	case *ip.IPUnnumberedDump:
		var out []api.Message
		for sw, i := range f.ifs {
			if i.unnumberedTo != 0 && (m.SwIfIndex == ^interface_types.InterfaceIndex(0) || uint32(m.SwIfIndex) == sw) {
				out = append(out, &ip.IPUnnumberedDetails{SwIfIndex: interface_types.InterfaceIndex(sw), IPSwIfIndex: interface_types.InterfaceIndex(i.unnumberedTo)})
			}
		}
		return out
	case *interfaces.SwInterfaceSetUnnumbered:
		i, rv := f.iface(uint32(m.UnnumberedSwIfIndex))
		if i != nil {
			i.unnumberedTo = uint32(m.SwIfIndex)
		}
		return []api.Message{&interfaces.SwInterfaceSetUnnumberedReply{Retval: rv}}
	case *ip.SwInterfaceIP6GetLinkLocalAddress:
		i, rv := f.iface(uint32(m.SwIfIndex))
		if i != nil && !i.ip6 {
			rv = errIP6NotEnabled
		}
		return []api.Message{&ip.SwInterfaceIP6GetLinkLocalAddressReply{Retval: rv}}
	case *ip.SwInterfaceIP6EnableDisable:
		i, rv := f.iface(uint32(m.SwIfIndex))
		if i != nil {
			if i.ip6 && m.Enable {
				rv = -81 // VNET_API_ERROR_VALUE_EXIST, and a leaked reference
			}
			i.ip6 = m.Enable
		}
		return []api.Message{&ip.SwInterfaceIP6EnableDisableReply{Retval: rv}}
	case *ip.IPRouteLookup:
		p := govppnode.FromPrefix(m.Prefix)
		r, ok := f.routes[p]
		if !ok {
			return []api.Message{&ip.IPRouteLookupReply{Retval: errNoSuchEntry}}
		}
		return []api.Message{&ip.IPRouteLookupReply{Route: ip.IPRoute{Prefix: m.Prefix, NPaths: 1, Paths: []fib_types.FibPath{{SwIfIndex: r.sw, Nh: fib_types.FibPathNh{Address: r.nh}}}}}}
	case *ip.IPRouteDump:
		var out []api.Message
		for p, r := range f.routes {
			if p.Addr().Is6() == m.Table.IsIP6 {
				out = append(out, &ip.IPRouteDetails{Route: ip.IPRoute{Prefix: govppnode.Prefix(p), NPaths: 1, Paths: []fib_types.FibPath{{SwIfIndex: r.sw, Nh: fib_types.FibPathNh{Address: r.nh}}}}})
			}
		}
		return out
	case *ip.IPRouteAddDel:
		p := govppnode.FromPrefix(m.Route.Prefix)
		if !m.IsAdd {
			if _, ok := f.routes[p]; !ok {
				return []api.Message{&ip.IPRouteAddDelReply{Retval: errNoSuchEntry}}
			}
			delete(f.routes, p)
			return []api.Message{&ip.IPRouteAddDelReply{}}
		}
		path := m.Route.Paths[0]
		f.routes[p] = fakePath{sw: path.SwIfIndex, nh: path.Nh.Address}
		return []api.Message{&ip.IPRouteAddDelReply{}}
	case *ip_neighbor.IPNeighborDump:
		var out []api.Message
		for k, mac := range f.nbrs {
			if k.sw == uint32(m.SwIfIndex) && k.ip.Is6() == (m.Af == ip_types.ADDRESS_IP6) {
				out = append(out, &ip_neighbor.IPNeighborDetails{Neighbor: ip_neighbor.IPNeighbor{SwIfIndex: m.SwIfIndex,
					Flags: ip_neighbor.IP_API_NEIGHBOR_FLAG_STATIC, MacAddress: mac, IPAddress: govppnode.Address(k.ip)}})
			}
		}
		return out
	case *ip_neighbor.IPNeighborAddDel:
		_, rv := f.iface(uint32(m.Neighbor.SwIfIndex))
		k := fakeNbrKey{uint32(m.Neighbor.SwIfIndex), govppnode.FromAddress(m.Neighbor.IPAddress)}
		if _, ok := f.nbrs[k]; rv == 0 && !m.IsAdd && !ok {
			rv = errNoSuchEntry
		}
		if rv == 0 && m.IsAdd {
			f.nbrs[k] = m.Neighbor.MacAddress
		} else if rv == 0 {
			delete(f.nbrs, k)
		}
		return []api.Message{&ip_neighbor.IPNeighborAddDelReply{Retval: rv}}
	case *interfaces.CreateLoopback:
		sw := f.nextSw
		f.nextSw++
		f.ifs[sw] = &fakeIf{name: fmt.Sprintf("loop%d", sw), mac: m.MacAddress}
		return []api.Message{&interfaces.CreateLoopbackReply{SwIfIndex: interface_types.InterfaceIndex(sw)}}
	case *l2.BridgeDomainDump:
		var out []api.Message
		for id, bd := range f.bds {
			if m.BdID != ^uint32(0) && m.BdID != id {
				continue
			}
			d := &l2.BridgeDomainDetails{BdID: id, BviSwIfIndex: ^interface_types.InterfaceIndex(0), NSwIfs: uint32(len(bd.members))}
			if bd.bvi != 0 {
				d.BviSwIfIndex = interface_types.InterfaceIndex(bd.bvi)
			}
			for _, sw := range bd.members {
				d.SwIfDetails = append(d.SwIfDetails, l2.BridgeDomainSwIf{SwIfIndex: interface_types.InterfaceIndex(sw), Shg: bd.shg[sw]})
			}
			out = append(out, d)
		}
		return out
	case *l2.BridgeDomainAddDelV2:
		if _, ok := f.bds[m.BdID]; m.IsAdd == ok {
			return []api.Message{&l2.BridgeDomainAddDelV2Reply{Retval: -81}} // exists / no such
		}
		if m.IsAdd {
			f.bds[m.BdID] = &fakeBD{shg: map[uint32]uint8{}, fib: map[ethernet_types.MacAddress]fakeL2Entry{}}
		} else {
			delete(f.bds, m.BdID)
		}
		return []api.Message{&l2.BridgeDomainAddDelV2Reply{BdID: m.BdID}}
	case *l2.SwInterfaceSetL2Bridge:
		i, rv := f.iface(uint32(m.RxSwIfIndex))
		bd := f.bds[m.BdID]
		if rv == 0 && bd == nil {
			rv = errNoSuchEntry
		}
		if rv != 0 {
			return []api.Message{&l2.SwInterfaceSetL2BridgeReply{Retval: rv}}
		}
		sw := uint32(m.RxSwIfIndex)
		// VPP first takes the interface out of any bridge, then puts it
		// into this one (losing what it learnt on the way).
		for _, b := range f.bds {
			b.members = slices.DeleteFunc(b.members, func(x uint32) bool { return x == sw })
			if b.bvi == sw {
				b.bvi = 0
			}
		}
		i.bd = 0
		if m.Enable {
			if m.PortType == l2.L2_API_PORT_TYPE_BVI {
				if bd.bvi != 0 {
					return []api.Message{&l2.SwInterfaceSetL2BridgeReply{Retval: -1}} // MODE_ERROR_BVI_DEF
				}
				bd.bvi = sw
			}
			bd.members = append(bd.members, sw)
			bd.shg[sw] = m.Shg
			i.bd = m.BdID
		}
		return []api.Message{&l2.SwInterfaceSetL2BridgeReply{}}
	case *l2.L2FibTableDump:
		var out []api.Message
		if bd := f.bds[m.BdID]; bd != nil {
			for mac, e := range bd.fib {
				out = append(out, &l2.L2FibTableDetails{BdID: m.BdID, Mac: mac, SwIfIndex: interface_types.InterfaceIndex(e.sw), StaticMac: e.static})
			}
		}
		return out
	case *l2.L2fibAddDel:
		bd := f.bds[m.BdID]
		if bd == nil {
			return []api.Message{&l2.L2fibAddDelReply{Retval: errNoSuchEntry}}
		}
		if !m.IsAdd {
			if _, ok := bd.fib[m.Mac]; !ok {
				return []api.Message{&l2.L2fibAddDelReply{Retval: errNoSuchEntry}}
			}
			delete(bd.fib, m.Mac)
			return []api.Message{&l2.L2fibAddDelReply{}}
		}
		if i, rv := f.iface(uint32(m.SwIfIndex)); rv != 0 || i.bd == 0 {
			return []api.Message{&l2.L2fibAddDelReply{Retval: errInvalidIfIndex}} // VPP wants a bridged interface
		}
		bd.fib[m.Mac] = fakeL2Entry{sw: uint32(m.SwIfIndex), static: m.StaticMac}
		return []api.Message{&l2.L2fibAddDelReply{}}
	case *ip_neighbor.IPNeighborFlush:
		for k := range f.nbrs {
			if k.sw == uint32(m.SwIfIndex) && k.ip.Is6() == (m.Af == ip_types.ADDRESS_IP6) {
				delete(f.nbrs, k)
			}
		}
		return []api.Message{&ip_neighbor.IPNeighborFlushReply{}}
	}
	panic(fmt.Sprintf("fake VPP: no model of %s", req.GetMessageName()))
}

func (f *fakeAPI) iface(sw uint32) (*fakeIf, int32) {
	i, ok := f.ifs[sw]
	if !ok {
		return nil, errInvalidIfIndex
	}
	return i, 0
}

func (f *fakeAPI) sortedIfs() []uint32 {
	var out []uint32
	for sw := range f.ifs {
		out = append(out, sw)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// changes counts the requests of the fake that change its state.
func (f *fakeAPI) changes() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]int{}
	for k, v := range f.requests {
		if !readOnly[k] {
			out[k] = v
		}
	}
	return out
}

var readOnly = map[string]bool{"control_ping": true, "show_version": true, "sw_interface_dump": true, "af_packet_dump": true,
	"ip_address_dump": true, "ip_unnumbered_dump": true, "sw_interface_ip6_get_link_local_address": true,
	"ip_route_lookup": true, "ip_route_dump": true, "ip_neighbor_dump": true, "memclnt_keepalive": true,
	"sw_interface_rx_placement_dump": true, "bridge_domain_dump": true, "l2_fib_table_dump": true}

func (f *fakeAPI) resetRequests() {
	f.mu.Lock()
	f.requests = map[string]int{}
	f.mu.Unlock()
}
