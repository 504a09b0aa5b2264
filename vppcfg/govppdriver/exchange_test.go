package govppdriver

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.fd.io/govpp/adapter"
	"go.fd.io/govpp/binapi/feature"
	"go.fd.io/govpp/binapi/memclnt"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/core"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
)

// A Dump reads the same state by lane as by govpp's stream, and goes by
// lane whenever the adapter routes replies.
func TestDumpByLaneOrStream(t *testing.T) {
	var states [2][]string
	for i, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			v := newFake()
			d := connectWith(t, tr.over(v), Options{ReconnectInterval: 20 * time.Millisecond})
			ops := everyDumpedKind(t, v)
			mustApply(t, d, ops...)
			before := d.laneNext
			st, err := d.Dump(context.Background())
			require.NoError(t, err)
			assert.Equal(t, tr.lane, d.laneNext != before, "the dump went by lane")
			for _, op := range ops {
				if acl, ok := op.Item.(*vppcfg.ACL); ok {
					_, found := findACL(st, op.Tag)
					assert.True(t, found, "dump has ACL %s", acl.Name)
					continue
				}
				_, found := find(st, op.Key)
				assert.True(t, found, "dump has %s", op.Key)
			}
			states[i] = itemStrings(st)
		})
	}
	assert.Equal(t, states[0], states[1])
}

// everyDumpedKind creates an object of each kind Dump reads from the fake
// VPP (cnat's aside: the fake serves it only when asked to).
func everyDumpedKind(t *testing.T, v interface {
	InterfaceIndex(string) (uint32, bool)
}) []driverapi.Op {
	t.Helper()
	return []driverapi.Op{
		create(&vppcfg.NAT44Global{}, ""),
		create(&vppcfg.NAT44Address{Addr: netip.MustParseAddr("1.1.1.1"), VRF: vppcfg.AnyVRF}, ""),
		withIf(create(&vppcfg.NAT44Interface{Interface: "tap0", Role: vppcfg.NAT44Inside}, ""), v, "tap0"),
		withIf(create(&vppcfg.NAT44Interface{Interface: "eth0", Role: vppcfg.NAT44Output}, ""), v, "eth0"),
		create(&vppcfg.NAT44StaticMapping{External: ap("1.1.1.1:80"), Protocol: vppcfg.ProtoTCP, Local: ap("10.1.1.5:8080")}, "t"),
		create(&vppcfg.NAT44IdentityMapping{Addr: netip.MustParseAddr("192.168.0.1"), Port: 22, Protocol: vppcfg.ProtoTCP}, "t"),
		create(lbMapping(1, 2), "t"),
		create(&vppcfg.ACL{Name: "a", Rules: []vppcfg.ACLRule{{Action: vppcfg.ACLDeny, Src: pfx("10.0.0.0/8"), Dst: pfx("0.0.0.0/0"),
			SrcPorts: vppcfg.AnyPort, DstPorts: vppcfg.AnyPort}}}, "vppsvc:pol:a"),
		create(&vppcfg.DropRoute{Prefix: pfx("10.96.0.0/16")}, ""),
	}
}

// A dump whose end never comes fails after the reply timeout, on either
// transport, and the next dump on the connection is read whole.
func TestDumpReplyTimeout(t *testing.T) {
	for _, lane := range []bool{true, false} {
		t.Run(map[bool]string{true: "lane", false: "stream"}[lane], func(t *testing.T) {
			v := newFake()
			reply := &memclnt.ControlPingReply{}
			id, err := v.GetMsgID(reply.GetMessageName(), reply.GetCrcString())
			require.NoError(t, err)
			m := &mutingRouter{muteAdapter{VppAPI: v, replyID: id}}
			var a adapter.VppAPI = m
			if !lane {
				a = &m.muteAdapter
			}
			d := connectWith(t, a, Options{ReconnectInterval: time.Hour, ReplyTimeout: 200 * time.Millisecond})
			mustApply(t, d, append([]driverapi.Op{create(&vppcfg.NAT44Global{}, "")}, createUDPMappings(50)...)...)
			m.mute.Store(1)
			start := time.Now()
			got := 0
			err = drain(d, context.Background(), &nat44_ed.Nat44StaticMappingDump{}, func(*nat44_ed.Nat44StaticMappingDetails) { got++ })
			require.ErrorIs(t, err, core.ErrReplyTimeout)
			assert.Less(t, time.Since(start), 5*time.Second, "bounded by the reply timeout")
			got = 0
			require.NoError(t, drain(d, context.Background(), &nat44_ed.Nat44StaticMappingDump{}, func(*nat44_ed.Nat44StaticMappingDetails) { got++ }))
			assert.Equal(t, 50, got)
		})
	}
}

// A dump on a lane ends with its connection: the replies that came are
// read, then the loss is the error, long before the reply timeout.
func TestDumpEndsWithTheConnection(t *testing.T) {
	v := newFake()
	reply := &memclnt.ControlPingReply{}
	id, err := v.GetMsgID(reply.GetMessageName(), reply.GetCrcString())
	require.NoError(t, err)
	m := &mutingRouter{muteAdapter{VppAPI: v, replyID: id}}
	d := connectWith(t, m, Options{ReconnectInterval: time.Hour, ReplyTimeout: time.Minute})
	mustApply(t, d, append([]driverapi.Op{create(&vppcfg.NAT44Global{}, "")}, createUDPMappings(600)...)...)
	ctx, cancel := d.withDeadline(context.Background())
	defer cancel()
	m.mute.Store(1) // the dump's end never comes
	start := time.Now()
	before := d.laneNext
	got := 0
	err = drain(d, ctx, &nat44_ed.Nat44StaticMappingDump{}, func(*nat44_ed.Nat44StaticMappingDetails) {
		if got++; got == 1 {
			v.DropConnections()
		}
	})
	require.Error(t, err)
	assert.Positive(t, got)
	assert.NotEqual(t, before, d.laneNext, "the dump went by lane")
	assert.Less(t, time.Since(start), 10*time.Second, "the dump waited for the reply timeout, not for the connection")
}

// A reply with a request's header (the client index before the context)
// cannot be routed by its context: such an exchange takes govpp's stream,
// and is answered.
func TestRequestHeaderedRepliesTakeTheStream(t *testing.T) {
	d := connect(t, newFake(), true)
	x := &exchange{req: &feature.FeatureIsEnabled{SwIfIndex: 1, ArcName: "ip4-unicast", FeatureName: "acl-plugin-in-ip4-fa"},
		reply: &feature.FeatureIsEnabledReply{}}
	assert.Nil(t, d.openLaneFor(x))
	before := d.laneNext
	require.NoError(t, d.exchange(context.Background(), x))
	assert.Equal(t, before, d.laneNext)
	l := d.openLaneFor(&exchange{req: &memclnt.ControlPing{}, reply: &memclnt.ControlPingReply{}})
	require.NotNil(t, l, "a reply's header routes")
	l.close()
}

// BenchmarkDumpTransport is one Dump of 20,000 static mappings, by lane
// and by govpp's stream: what an agent restart reads. On the fake VPP its
// emulation, the same on both, is included; with VPPSVC_TEST_VPP_SOCKET it
// runs on that VPP (dataplane.SocketEnv). ns/object is the time per object.
func BenchmarkDumpTransport(b *testing.B) {
	const n = 20000
	for _, lane := range []bool{true, false} {
		b.Run(map[bool]string{true: "lane", false: "stream"}[lane], func(b *testing.B) {
			node := newNode(b)
			var a adapter.VppAPI = node.Adapter()
			if !lane {
				a = routeless{a}
			}
			d := connectOn(b, a)
			for i, r := range d.Apply(context.Background(), append([]driverapi.Op{create(&vppcfg.NAT44Global{}, "")}, createUDPMappings(n)...)) {
				require.NoError(b, r.Err, "op %d", i)
			}
			b.ReportAllocs()
			for b.Loop() {
				before := d.laneNext
				st, err := d.Dump(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				if len(st.Objects) < n {
					b.Fatalf("%d objects", len(st.Objects))
				}
				if (d.laneNext != before) != lane {
					b.Fatal("lane used:", !lane)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/object")
		})
	}
}

// A lane whose route has heard its connection end sends nothing more: the
// adapter may be connected again by then, and the reply would reach
// govpp's core while it rewrites its message table (govpp's reconnect
// race). The request fails as not connected.
func TestLostLaneSendsNothing(t *testing.T) {
	v := newFake()
	d := connect(t, v, true)
	l := d.openLane()
	require.NotNil(t, l)
	defer l.close()
	l.ConnectionLost(errors.New("socket closed"))
	pings := v.Calls()["control_ping"]
	err := l.exchange(context.Background(), &exchange{req: &memclnt.ControlPing{}, reply: &memclnt.ControlPingReply{}})
	require.ErrorIs(t, err, core.ErrNotConnected)
	assert.True(t, connectionBroken(err), "a pipe stops sending at it")
	assert.Equal(t, pings, v.Calls()["control_ping"], "nothing sent")
}
