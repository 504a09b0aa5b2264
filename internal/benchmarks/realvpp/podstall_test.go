package realvpp

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
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
// (the target: a node with 50,000 services keeps forwarding).
const podStallLimit = 50 * time.Millisecond

// podStallServices is the number of services programmed first.
const podStallServices = 50000

// bridgeID and bviName are the pods' bridge domain and its BVI.
const (
	bridgeID = 10
	bviName  = "pods0"
)

// TestRealPodAddStall programs 50,000 services of one endpoint through the
// product's agent (uplink0, host0 and the BVI as frontends), then adds
// pods while a probe pings VPP every millisecond on a connection of its
// own: bridged backends (a pg interface made an L2 member of the bridge
// under the BVI, a host route and a static neighbour through the BVI, the
// pod reported on the BVI; each the BVI's only backend, so the agent
// gives the BVI the inside role), bridged clients (nothing for the agent
// to do), and backends on their own interface (unnumbered; the agent makes
// it NAT44 outside and inside), each podStallRounds times (addPod). It
// fails when a bridged pod stops VPP's main thread longer than
// podStallLimit in every round, or when a pod on its own interface does
// not (the probe would be blind to the mapping walk).
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

	// Endpoints are 10.0.x.y (internal/benchmarks): a pod with a service's
	// endpoint address is a backend, 10.1.1.x a client only. Each case
	// runs podStallRounds times, each round a new pod (a new interface and
	// address) added, measured, then withdrawn from the agent: a backend's
	// withdrawal takes the BVI's inside role away, so the next round's
	// backend is the first again.
	backend := func(svc int) netip.Addr { return offsetAddr(netip.MustParseAddr("10.0.0.0"), svc+1) }
	cases := []struct {
		name    string
		ip      func(round int) netip.Addr
		bridged bool
		writes  map[string]int // what the agent sends VPP for the pod
	}{
		{"bridged backend (the BVI's first: inside role)", func(r int) netip.Addr { return backend(3 * r) }, true,
			map[string]int{"nat44_interface_add_del_feature": 1}},
		{"bridged client", func(r int) netip.Addr { return offsetAddr(netip.MustParseAddr("10.1.1.20"), r) }, true,
			map[string]int{}},
		{"own interface, backend (outside and inside roles on it)", func(r int) netip.Addr { return backend(3*r + 1) }, false,
			map[string]int{"nat44_interface_add_del_feature": 2}},
	}
	// The probe's floor: the longest gap while nothing happens (the
	// machine's scheduling, VPP's main loop).
	idle := startPingProbe(t, n.Socket())
	time.Sleep(time.Second)
	floor, _, pings := idle.stop(time.Time{})
	t.Logf("idle: VPP stopped answering for %s at most (%d pings in 1 s)", floor.Round(100*time.Microsecond), pings)
	nextIf := 20
	for _, c := range cases {
		var stalls []time.Duration
		for round := range podStallRounds {
			ifName := fmt.Sprintf("tap%d", nextIf)
			nextIf++
			stall := addPod(t, n, a, timer, pods, c.name, ifName, c.ip(round), c.bridged, c.writes)
			stalls = append(stalls, stall)
			a.Processor.DeleteLocalPod(processor.PodID{Namespace: "default", Name: ifName})
			waitConverged(t, a)
		}
		// VPP's own work repeats in every round; the machine's hiccups
		// (two cores shared with other tests) do not.
		least := slices.Min(stalls)
		t.Logf("%s: least stall of %d rounds %s (all: %v)", c.name, podStallRounds, least.Round(100*time.Microsecond), stalls)
		if c.bridged && least > podStallLimit {
			t.Errorf("%s: VPP's main thread stopped for %s or more in every round, over %s", c.name, least, podStallLimit)
		}
		if !c.bridged && least <= podStallLimit {
			t.Errorf("%s: VPP stopped for %s only: the probe did not see the mapping walk", c.name, least)
		}
	}
}

// podStallRounds is how many pods each case of TestRealPodAddStall adds.
const podStallRounds = 3

// addPod adds one pod with ip on a new pg interface ifName, bridged or on
// its own interface, while a probe pings VPP, waits until the agent has
// converged, logs what it measured and returns the stall: the longest
// gap between two answers of the probe that began before the add's last
// VPP call was answered (later gaps, while the agent's convergence is
// polled after its last write, are the machine's).
func addPod(t *testing.T, n *rv.Node, a *runningAgent, timer *callTimer, pods *podBridge, name, ifName string, ip netip.Addr, bridged bool, want map[string]int) time.Duration {
	t.Helper()
	pod := processor.LocalPod{ID: processor.PodID{Namespace: "default", Name: ifName}, IPs: []netip.Addr{ip}, Interface: ifName}
	if bridged {
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
	if bridged {
		pods.addMember(ifName, ip)
	} else {
		if err := n.SetUnnumbered(ifName, "host0"); err != nil {
			t.Fatal(err)
		}
		if err := n.AddRoute(netip.PrefixFrom(ip, 32), ifName); err != nil {
			t.Fatal(err)
		}
	}
	wired := time.Now()
	cpu0 := processCPU()
	a.Processor.UpdateLocalPod(pod)
	// The agent's convergence check costs about as much CPU as it is
	// given at 50,000 services: the probe ends before it runs, once the
	// agent's expected calls are answered and 200 ms more have passed.
	timer.waitWrites(t, want)
	time.Sleep(200 * time.Millisecond)
	took := time.Since(addStart)
	cpu := processCPU() - cpu0
	stall, stallEnd, pings := probe.stop(latest(timer.lastAnswer(), wired))
	waitConverged(t, a)
	slowest, call, writes := timer.slowest()
	if !maps.Equal(writes, want) {
		t.Errorf("%s: the agent sent %v, want %v", name, writes, want)
	}
	agentCall, agentTook := call, slowest
	if ws := pods.slowest; ws.took > slowest {
		call, slowest = ws.name, ws.took
	}
	t.Logf("%s, %s: VPP stopped answering for %s at most (%d pings), the gap ending %s into the add; slowest call %s %s "+
		"(the agent's: %s %s, of its writes %v); the probe's window %s, of which %s the test node's pg interface; the test's process used %s of CPU in it",
		name, ip, stall.Round(100*time.Microsecond), pings, stallEnd.Sub(addStart).Round(time.Millisecond), call, slowest.Round(100*time.Microsecond),
		agentCall, agentTook.Round(100*time.Microsecond), writes, took.Round(time.Millisecond), created.Round(time.Millisecond), cpu.Round(time.Millisecond))
	return stall
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
// the node) an L2 member of the bridge in split-horizon group 1 (pods reach
// the BVI, not each other), a static L2 FIB entry for the
// pod's MAC on it, the pod's host route through the BVI and its static
// neighbour on the BVI.
func (b *podBridge) addMember(ifName string, podIP netip.Addr) {
	b.t.Helper()
	sw, ok := b.n.InterfaceIndex(ifName)
	if !ok {
		b.t.Fatalf("no interface %s", ifName)
	}
	mac := ethernet_types.MacAddress{0x02, 0xfe, 0x0c, 0, byte(sw >> 8), byte(sw)}
	b.call(&l2.SwInterfaceSetL2Bridge{RxSwIfIndex: interface_types.InterfaceIndex(sw), BdID: bridgeID, PortType: l2.L2_API_PORT_TYPE_NORMAL, Shg: 1, Enable: true},
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

// pingProbe is a process of its own (this test binary, running
// TestPingProbeProcess) pinging VPP over a connection of its own, one
// control_ping a millisecond, each waiting for its answer, and reporting
// when each answer came: while VPP's main thread runs one long request, it
// answers nothing. A process of its own, so that the test's own pauses
// (the garbage collector of a process holding 50,000 services, the agent's
// work) are not taken for VPP's.
type pingProbe struct {
	t       *testing.T
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	done    chan struct{}
	answers []time.Time // when each answer came, in order
	err     error
}

// gap is the time between two answers of the probe.
type gap struct{ begin, end time.Time }

// pingProbeEnv names the VPP API socket TestPingProbeProcess pings.
const pingProbeEnv = "VPPSVC_PING_PROBE_SOCKET"

// TestPingProbeProcess is the probe's process (startPingProbe); it skips
// unless started as one. It writes "ready" and the time of its first
// answer, then the time of every answer in Unix nanoseconds, one a line, until its
// standard input ends.
func TestPingProbeProcess(t *testing.T) {
	socket := os.Getenv(pingProbeEnv)
	if socket == "" {
		t.Skip("the ping probe's own process (startPingProbe)")
	}
	conn, err := core.Connect(socketclient.NewVppClient(socket))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Disconnect()
	ch, err := conn.NewAPIChannel()
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	ch.SetReplyTimeout(time.Minute)
	ping := func() error {
		return ch.SendRequest(&memclnt.ControlPing{}).ReceiveReply(&memclnt.ControlPingReply{})
	}
	if err := ping(); err != nil {
		t.Fatal(err)
	}
	out := bufio.NewWriter(os.Stdout)
	fmt.Fprintln(out, "ready", time.Now().UnixNano())
	out.Flush()
	stop := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); close(stop) }()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			out.Flush()
			return
		case <-tick.C:
		}
		if err := ping(); err != nil {
			fmt.Fprintln(out, "error", err)
			out.Flush()
			return
		}
		fmt.Fprintln(out, time.Now().UnixNano())
	}
}

func startPingProbe(t *testing.T, socket string) *pingProbe {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestPingProbeProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), pingProbeEnv+"="+socket)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &pingProbe{t: t, cmd: cmd, stdin: stdin, done: make(chan struct{})}
	ready := make(chan struct{})
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "ready "):
				if ns, err := strconv.ParseInt(strings.TrimPrefix(line, "ready "), 10, 64); err == nil {
					p.answers = append(p.answers, time.Unix(0, ns))
				}
				close(ready)
			case strings.HasPrefix(line, "error"):
				p.err = errors.New(line)
			default:
				if ns, err := strconv.ParseInt(line, 10, 64); err == nil {
					p.answers = append(p.answers, time.Unix(0, ns))
				}
			}
		}
	}()
	select {
	case <-ready:
	case <-p.done:
		_ = cmd.Wait()
		t.Fatal("the ping probe ended before its first answer")
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatal("the ping probe had no answer within a minute")
	}
	return p
}

// stop ends the probe and returns the longest gap between two answers
// that began before until (the zero time: any), when it ended, and the
// number of answers.
func (p *pingProbe) stop(until time.Time) (time.Duration, time.Time, int) {
	p.t.Helper()
	p.stdin.Close()
	select {
	case <-p.done:
	case <-time.After(2 * time.Minute): // a ping in flight waits at most its reply timeout
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	if err := p.cmd.Wait(); err != nil || p.err != nil {
		p.t.Fatalf("ping probe: %v %v", err, p.err)
	}
	var longest gap
	for i := 1; i < len(p.answers); i++ {
		g := gap{p.answers[i-1], p.answers[i]}
		if (until.IsZero() || g.begin.Before(until)) && g.end.Sub(g.begin) > longest.end.Sub(longest.begin) {
			longest = g
		}
	}
	return longest.end.Sub(longest.begin), longest.end, len(p.answers)
}

// callTimer is a client connection to VPP that times each state-changing
// request from its write to its reply.
type callTimer struct {
	adapter.VppAPI

	mu      sync.Mutex
	names   map[uint16]string // message ID → name
	sent    map[uint32]timedCall
	longest timedCall
	writes  map[string]int // state-changing requests by name
	last    time.Time      // when the last of them was answered
}

func newCallTimer(a adapter.VppAPI) *callTimer {
	return &callTimer{VppAPI: a, names: map[uint16]string{}, sent: map[uint32]timedCall{}, writes: map[string]int{}}
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
			c.writes[name]++
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
				c.last = time.Now()
			}
			c.mu.Unlock()
		}
		cb(msgID, data)
	})
}

// waitWrites waits, 5 minutes at most, until the state-changing requests
// sent since the last reset include want and every one is answered.
func (c *callTimer) waitWrites(t *testing.T, want map[string]int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		c.mu.Lock()
		done := len(c.sent) == 0
		for name, n := range want {
			done = done && c.writes[name] >= n
		}
		c.mu.Unlock()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent did not send %v within 5 minutes", want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// lastAnswer is when the last state-changing request since the last reset
// was answered (the zero time: none).
func (c *callTimer) lastAnswer() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

// waitConverged waits until the agent has converged, for 5 minutes at
// most, looking every 100 ms: Agent.WaitConverged looks every 5 ms, and
// each look at 50,000 services costs CPU that VPP, on the same two cores,
// would miss.
func waitConverged(t *testing.T, a *runningAgent) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for !a.Converged() {
		if time.Now().After(deadline) {
			t.Fatalf("the agent did not converge within 5 minutes: %s", a.Divergence())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// latest is the later of two times.
func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// reset forgets the calls timed so far.
func (c *callTimer) reset() {
	c.mu.Lock()
	c.sent, c.longest, c.writes, c.last = map[uint32]timedCall{}, timedCall{}, map[string]int{}, time.Time{}
	c.mu.Unlock()
}

// slowest is the slowest request answered since the last reset, and the
// state-changing requests sent.
func (c *callTimer) slowest() (time.Duration, string, map[string]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.longest.took, c.longest.name, maps.Clone(c.writes)
}
