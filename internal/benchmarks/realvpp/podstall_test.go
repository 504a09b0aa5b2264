package realvpp

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"time"

	"go.fd.io/govpp/adapter"
	"go.fd.io/govpp/adapter/socketclient"
	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/ethernet_types"
	"go.fd.io/govpp/binapi/fib_types"
	interfaces "go.fd.io/govpp/binapi/interface"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip"
	"go.fd.io/govpp/binapi/ip_neighbor"
	"go.fd.io/govpp/binapi/ip_types"
	"go.fd.io/govpp/binapi/l2"
	"go.fd.io/govpp/binapi/memclnt"
	"go.fd.io/govpp/core"

	"github.com/vppsvc/vppsvc/processor"
	rv "github.com/vppsvc/vppsvc/realvpp"
)

// A new pod on a busy node. NAT44-ED's outside role on an interface makes
// VPP walk every static and LB mapping and register each external address
// on the interface (nat44_ed_add_interface → nat44_ed_add_del_sm_fib_reg_entries),
// each registration a linear search of every registration so far: with the
// renderer's roles on every pod interface, a pod's interface costs VPP's
// main thread, which also forwards, seconds at 50,000 services. The shape
// that avoids it (docs/renderer-nat44.md, "Pods behind one bridge"): the
// pods' interfaces are L2 members of one bridge domain whose BVI is the one
// L3 interface of all pods, known to vppsvc from the start (a configured
// frontend interface, and every pod's LocalPod.Interface), so a new pod
// adds no NAT44 interface at all.

// podStallLimit is the longest VPP may stop answering while a pod is added
// (issue 36).
const podStallLimit = 50 * time.Millisecond

// podStallServices is the number of services programmed first.
const podStallServices = 50000

// bridgeID and bviName are the pods' bridge domain and its BVI.
const (
	bridgeID = 10
	bviName  = "pods0"
)

// TestRealPodAddStall programs 50,000 services of one endpoint through the
// product's agent, then adds pods three times while a probe pings VPP
// every millisecond on a connection of its own: twice the bridged way (a
// pg interface made an L2 member of the bridge under the BVI, a host route
// and a static neighbour through the BVI, the pod reported on the BVI; the
// first pod is a backend and gives the BVI the inside role, the second is
// a client and changes nothing of vppsvc's), then once the per-interface
// way (its own interface, unnumbered, which the agent makes NAT44 outside
// and inside). It logs, for each, the longest gap between two answers of
// the probe (how long VPP's main thread stopped) and the slowest VPP call
// of the add (the agent's and the pod wiring's), and fails when a bridged
// add stops VPP longer than podStallLimit. The per-interface add must stop
// it longer, or the probe saw nothing and proves nothing.
func TestRealPodAddStall(t *testing.T) {
	skipLarge(t, podStallServices)
	n := openNode(t)
	buildNode(t, n, false)
	pods := newPodBridge(t, n)

	timer := newCallTimer(n.Adapter())
	a := startAgentOn(t, timer, ipv4, 0, "uplink0", "host0", bviName)
	defer a.stop()
	start := time.Now()
	a.Processor.Resync(snapshot(podStallServices, 1, false, false))
	if err := a.WaitConverged(context.Background(), 20*time.Minute); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d services × 1 programmed in %s", podStallServices, time.Since(start).Round(time.Millisecond))

	// Endpoints are 10.0.x.y (internal/benchmarks): a pod with the first
	// service's endpoint address is a backend, 10.1.1.x a client only.
	backend := func(svc int) netip.Addr { return offsetAddr(netip.MustParseAddr("10.0.0.0"), svc+1) }
	cases := []struct {
		name    string
		ip      netip.Addr
		bridged bool
	}{
		{"bridged backend (inside role on the BVI)", backend(0), true},
		{"bridged client", netip.MustParseAddr("10.1.1.20"), true},
		{"own interface, backend (outside and inside roles on it)", backend(1), false},
	}
	// The probe's floor: the longest gap while nothing happens (the
	// machine's scheduling, VPP's main loop).
	idle := startPingProbe(t, n.Socket())
	time.Sleep(time.Second)
	floor, _, pings := idle.stop()
	t.Logf("idle: VPP stopped answering for %s at most (%d pings in 1 s)", floor.Round(100*time.Microsecond), pings)
	var stalls []time.Duration
	for i, c := range cases {
		ifName := fmt.Sprintf("tap%d", 20+i)
		pod := processor.LocalPod{ID: processor.PodID{Namespace: "default", Name: ifName}, IPs: []netip.Addr{c.ip}, Interface: ifName}
		if c.bridged {
			pod.Interface = bviName
		}
		probe := startPingProbe(t, n.Socket())
		timer.reset()
		pods.slowest = timedCall{}
		addStart := time.Now()
		if err := n.AddInterface(ifName); err != nil {
			t.Fatal(err)
		}
		created := time.Since(addStart)
		if c.bridged {
			pods.addMember(ifName, c.ip)
		} else {
			if err := n.SetUnnumbered(ifName, "host0"); err != nil {
				t.Fatal(err)
			}
			if err := n.AddRoute(netip.PrefixFrom(c.ip, 32), ifName); err != nil {
				t.Fatal(err)
			}
		}
		a.Processor.UpdateLocalPod(pod)
		if err := a.WaitConverged(context.Background(), 5*time.Minute); err != nil {
			t.Fatal(err)
		}
		took := time.Since(addStart)
		stall, stallEnd, pings := probe.stop()
		slowest, call := timer.slowest()
		agentCall, agentTook := call, slowest
		if ws := pods.slowest; ws.took > slowest {
			call, slowest = ws.name, ws.took
		}
		t.Logf("%s: VPP stopped answering for %s at most (%d pings), the gap ending %s into the add; slowest call %s %s (the agent's: %s %s); "+
			"the add took %s, of which %s the test node's pg interface",
			c.name, stall.Round(100*time.Microsecond), pings, stallEnd.Sub(addStart).Round(time.Millisecond), call, slowest.Round(100*time.Microsecond),
			agentCall, agentTook.Round(100*time.Microsecond), took.Round(time.Millisecond), created.Round(time.Millisecond))
		stalls = append(stalls, stall)
		if c.bridged && stall > podStallLimit {
			t.Errorf("%s: VPP's main thread stopped for %s, over %s", c.name, stall, podStallLimit)
		}
	}
	if own := stalls[len(stalls)-1]; own <= podStallLimit {
		t.Errorf("a pod on its own NAT44 interface stopped VPP for %s only: the probe did not see the mapping walk", own)
	}
}

// podBridge is the bridged pod wiring of a test node: bridge domain
// bridgeID with a loopback BVI called bviName, unnumbered to host0 and
// IPv6-enabled. It is removed when the test ends (before the node's own
// reset, which knows only its pg interfaces).
type podBridge struct {
	t       *testing.T
	n       *rv.Node
	ch      api.Channel
	bvi     interface_types.InterfaceIndex
	members []interface_types.InterfaceIndex
	slowest timedCall // the slowest of the calls made by addMember
}

type timedCall struct {
	name string
	took time.Duration
}

func newPodBridge(t *testing.T, n *rv.Node) *podBridge {
	t.Helper()
	conn, err := core.Connect(n.Adapter())
	if err != nil {
		t.Fatal(err)
	}
	ch, err := conn.NewAPIChannel()
	if err != nil {
		conn.Disconnect()
		t.Fatal(err)
	}
	ch.SetReplyTimeout(30 * time.Second)
	b := &podBridge{t: t, n: n, ch: ch}
	t.Cleanup(func() {
		b.remove()
		ch.Close()
		conn.Disconnect()
	})
	host0, _ := n.InterfaceIndex("host0")
	b.call(&l2.BridgeDomainAddDelV2{BdID: bridgeID, IsAdd: true, Flood: true, UuFlood: true, Forward: true, Learn: true}, &l2.BridgeDomainAddDelV2Reply{})
	loop := &interfaces.CreateLoopbackReply{}
	b.call(&interfaces.CreateLoopback{MacAddress: ethernet_types.MacAddress{0x02, 0xfe, 0x0b, 0x51, 0, 1}}, loop)
	b.bvi = loop.SwIfIndex
	b.call(&interfaces.SwInterfaceSetInterfaceName{SwIfIndex: b.bvi, Name: bviName}, &interfaces.SwInterfaceSetInterfaceNameReply{})
	b.call(&l2.SwInterfaceSetL2Bridge{RxSwIfIndex: b.bvi, BdID: bridgeID, PortType: l2.L2_API_PORT_TYPE_BVI, Enable: true}, &l2.SwInterfaceSetL2BridgeReply{})
	b.call(&interfaces.SwInterfaceSetUnnumbered{SwIfIndex: interface_types.InterfaceIndex(host0), UnnumberedSwIfIndex: b.bvi, IsAdd: true},
		&interfaces.SwInterfaceSetUnnumberedReply{})
	b.call(&ip.SwInterfaceIP6EnableDisable{SwIfIndex: b.bvi, Enable: true}, &ip.SwInterfaceIP6EnableDisableReply{})
	b.call(&interfaces.SwInterfaceSetFlags{SwIfIndex: b.bvi, Flags: interface_types.IF_STATUS_API_FLAG_ADMIN_UP}, &interfaces.SwInterfaceSetFlagsReply{})
	return b
}

// call sends one request and fails the test on an error; it keeps the
// slowest call.
func (b *podBridge) call(req, reply api.Message) {
	b.t.Helper()
	start := time.Now()
	err := b.ch.SendRequest(req).ReceiveReply(reply)
	if d := time.Since(start); d > b.slowest.took {
		b.slowest = timedCall{req.GetMessageName(), d}
	}
	if err != nil {
		b.t.Fatalf("%s: %v", req.GetMessageName(), err)
	}
}

// addMember wires a pod the bridged way: its interface (a pg interface of
// the node) an L2 member of the bridge, a static L2 FIB entry for the
// pod's MAC on it, the pod's host route through the BVI and its static
// neighbour on the BVI.
func (b *podBridge) addMember(ifName string, podIP netip.Addr) {
	b.t.Helper()
	sw, ok := b.n.InterfaceIndex(ifName)
	if !ok {
		b.t.Fatalf("no interface %s", ifName)
	}
	mac := ethernet_types.MacAddress{0x02, 0xfe, 0x0c, 0, byte(sw >> 8), byte(sw)}
	b.call(&l2.SwInterfaceSetL2Bridge{RxSwIfIndex: interface_types.InterfaceIndex(sw), BdID: bridgeID, PortType: l2.L2_API_PORT_TYPE_NORMAL, Enable: true},
		&l2.SwInterfaceSetL2BridgeReply{})
	b.members = append(b.members, interface_types.InterfaceIndex(sw))
	b.call(&l2.L2fibAddDel{Mac: mac, BdID: bridgeID, SwIfIndex: interface_types.InterfaceIndex(sw), IsAdd: true, StaticMac: true}, &l2.L2fibAddDelReply{})
	nh := ip_types.AddressUnion{}
	nh.SetIP4(ip_types.IP4Address(podIP.As4()))
	b.call(&ip.IPRouteAddDel{IsAdd: true, Route: ip.IPRoute{Prefix: ip_types.Prefix{Address: ip_types.Address{Af: ip_types.ADDRESS_IP4, Un: nh}, Len: 32},
		NPaths: 1, Paths: []fib_types.FibPath{{SwIfIndex: uint32(b.bvi), Weight: 1, Proto: fib_types.FIB_API_PATH_NH_PROTO_IP4, Nh: fib_types.FibPathNh{Address: nh}}}}},
		&ip.IPRouteAddDelReply{})
	b.call(&ip_neighbor.IPNeighborAddDel{IsAdd: true, Neighbor: ip_neighbor.IPNeighbor{SwIfIndex: b.bvi, Flags: ip_neighbor.IP_API_NEIGHBOR_FLAG_STATIC,
		MacAddress: mac, IPAddress: ip_types.Address{Af: ip_types.ADDRESS_IP4, Un: nh}}}, &ip_neighbor.IPNeighborAddDelReply{})
}

// remove deletes the BVI's routes and neighbours, the BVI and the bridge
// domain; the members, the node's pg interfaces, go back to L3 (the
// node's reset deletes them).
func (b *podBridge) remove() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var errs []error
	for _, sw := range b.members {
		errs = append(errs, b.ch.SendRequest(&l2.SwInterfaceSetL2Bridge{RxSwIfIndex: sw, BdID: bridgeID, Enable: false}).ReceiveReply(&l2.SwInterfaceSetL2BridgeReply{}))
	}
	if b.bvi != 0 {
		routes, err := recvRoutes(ctx, b.ch)
		errs = append(errs, err)
		for _, r := range routes {
			if len(r.Paths) > 0 && r.Paths[0].SwIfIndex == uint32(b.bvi) {
				errs = append(errs, b.ch.SendRequest(&ip.IPRouteAddDel{IsAdd: false, Route: r}).ReceiveReply(&ip.IPRouteAddDelReply{}))
			}
		}
		errs = append(errs,
			b.ch.SendRequest(&ip_neighbor.IPNeighborFlush{Af: ip_types.ADDRESS_IP4, SwIfIndex: b.bvi}).ReceiveReply(&ip_neighbor.IPNeighborFlushReply{}),
			b.ch.SendRequest(&l2.SwInterfaceSetL2Bridge{RxSwIfIndex: b.bvi, BdID: bridgeID, PortType: l2.L2_API_PORT_TYPE_BVI, Enable: false}).ReceiveReply(&l2.SwInterfaceSetL2BridgeReply{}),
			b.ch.SendRequest(&interfaces.DeleteLoopback{SwIfIndex: b.bvi}).ReceiveReply(&interfaces.DeleteLoopbackReply{}))
	}
	errs = append(errs, b.ch.SendRequest(&l2.BridgeDomainAddDelV2{BdID: bridgeID, IsAdd: false}).ReceiveReply(&l2.BridgeDomainAddDelV2Reply{}))
	if err := errors.Join(errs...); err != nil {
		b.t.Errorf("removing the pods' bridge: %v", err)
	}
}

// recvRoutes dumps VPP's default IPv4 table.
func recvRoutes(ctx context.Context, ch api.Channel) ([]ip.IPRoute, error) {
	req := ch.SendMultiRequest(&ip.IPRouteDump{Table: ip.IPTable{}})
	var out []ip.IPRoute
	for ctx.Err() == nil {
		d := &ip.IPRouteDetails{}
		last, err := req.ReceiveReply(d)
		if err != nil || last {
			return out, err
		}
		out = append(out, d.Route)
	}
	return out, ctx.Err()
}

// pingProbe pings VPP over a connection of its own, one control_ping a
// millisecond, each waiting for its answer, and keeps the longest time
// between two answers: while VPP's main thread runs one long request, it
// answers nothing.
type pingProbe struct {
	t      *testing.T
	conn   *core.Connection
	cancel func()
	done   chan struct{}

	mu         sync.Mutex
	longest    time.Duration
	longestEnd time.Time // when the longest gap ended
	pings      int
	err        error
}

func startPingProbe(t *testing.T, socket string) *pingProbe {
	t.Helper()
	conn, err := core.Connect(socketclient.NewVppClient(socket))
	if err != nil {
		t.Fatal(err)
	}
	ch, err := conn.NewAPIChannel()
	if err != nil {
		conn.Disconnect()
		t.Fatal(err)
	}
	ch.SetReplyTimeout(time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	p := &pingProbe{t: t, conn: conn, cancel: cancel, done: make(chan struct{})}
	ping := func() error {
		return ch.SendRequest(&memclnt.ControlPing{}).ReceiveReply(&memclnt.ControlPingReply{})
	}
	if err := ping(); err != nil {
		cancel()
		ch.Close()
		conn.Disconnect()
		t.Fatal(err)
	}
	go func() {
		defer close(p.done)
		defer ch.Close()
		last := time.Now()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			err := ping()
			now := time.Now()
			p.mu.Lock()
			if err != nil {
				p.err = err
				p.mu.Unlock()
				return
			}
			p.pings++
			if gap := now.Sub(last); gap > p.longest {
				p.longest, p.longestEnd = gap, now
			}
			p.mu.Unlock()
			last = now
		}
	}()
	return p
}

// stop ends the probe and returns the longest gap between two answers,
// when it ended, and the number of pings answered.
func (p *pingProbe) stop() (time.Duration, time.Time, int) {
	p.t.Helper()
	p.cancel()
	<-p.done // a ping in flight waits at most its reply timeout
	p.conn.Disconnect()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		p.t.Fatalf("ping probe: %v", p.err)
	}
	return p.longest, p.longestEnd, p.pings
}

// callTimer is a client connection to VPP that times each state-changing
// request from its write to its reply.
type callTimer struct {
	adapter.VppAPI

	mu      sync.Mutex
	names   map[uint16]string // message ID → name
	sent    map[uint32]timedCall
	longest timedCall
}

func newCallTimer(a adapter.VppAPI) *callTimer {
	return &callTimer{VppAPI: a, names: map[uint16]string{}, sent: map[uint32]timedCall{}}
}

func (c *callTimer) GetMsgID(msgName, msgCrc string) (uint16, error) {
	id, err := c.VppAPI.GetMsgID(msgName, msgCrc)
	if err == nil {
		c.mu.Lock()
		c.names[id] = msgName
		c.mu.Unlock()
	}
	return id, err
}

func (c *callTimer) SendMsg(context uint32, data []byte) error {
	if len(data) >= 2 {
		c.mu.Lock()
		if name := c.names[binary.BigEndian.Uint16(data)]; name != "" && !isReadOnly(name) {
			c.sent[context] = timedCall{name: name, took: time.Duration(time.Now().UnixNano())}
		}
		c.mu.Unlock()
	}
	return c.VppAPI.SendMsg(context, data)
}

func (c *callTimer) SetMsgCallback(cb adapter.MsgCallback) {
	c.VppAPI.SetMsgCallback(func(msgID uint16, data []byte) {
		if len(data) >= 6 {
			// A reply's header: message ID, then the request's context.
			ctx := binary.BigEndian.Uint32(data[2:6])
			now := time.Duration(time.Now().UnixNano())
			c.mu.Lock()
			if s, ok := c.sent[ctx]; ok {
				delete(c.sent, ctx)
				if d := now - s.took; d > c.longest.took {
					c.longest = timedCall{s.name, d}
				}
			}
			c.mu.Unlock()
		}
		cb(msgID, data)
	})
}

// reset forgets the calls timed so far.
func (c *callTimer) reset() {
	c.mu.Lock()
	c.sent, c.longest = map[uint32]timedCall{}, timedCall{}
	c.mu.Unlock()
}

// slowest is the slowest request answered since the last reset.
func (c *callTimer) slowest() (time.Duration, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.longest.took, c.longest.name
}
