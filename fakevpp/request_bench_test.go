package fakevpp

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net/netip"
	"reflect"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/acl"
	"go.fd.io/govpp/binapi/acl_types"
	cnatapi "go.fd.io/govpp/binapi/cnat"
	"go.fd.io/govpp/binapi/fib_types"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip"
	"go.fd.io/govpp/binapi/ip_types"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/binapi/nat_types"
	"go.fd.io/govpp/codec"
	"go.fd.io/govpp/core"
)

// The request benchmarks measure the fake's cost per write, the path every
// test and the control-plane benchmarks (internal/benchmarks) pay for each
// request: decode, dispatch, the handler, the reply's encoding and its
// delivery to the client's callback. Each request adds a new object, as a
// cold sync does, and every reply must carry retval 0.
//
//	go test -run '^$' -bench Requests -benchmem ./fakevpp/

// benchWrite is one kind of write: req(i) is the i-th distinct add.
type benchWrite struct {
	name string
	req  func(i int) api.Message
}

// benchVIP is the i-th service VIP (10.96.0.0 and up) and benchPod the i-th
// backend address (10.128.0.0 and up): distinct for a million requests.
func benchVIP(i int) netip.Addr { return addrPlus(addr("10.96.0.0"), i) }
func benchPod(i int) netip.Addr { return addrPlus(addr("10.128.0.0"), i) }

func addrPlus(a netip.Addr, i int) netip.Addr {
	b := a.As4()
	binary.BigEndian.PutUint32(b[:], binary.BigEndian.Uint32(b[:])+uint32(i))
	return netip.AddrFrom4(b)
}

// apiPrefix is p as the API's prefix.
func apiPrefix(p netip.Prefix) ip_types.Prefix {
	return ip_types.Prefix{Address: apiAddr(p.Addr()), Len: uint8(p.Bits())}
}

// benchTap0 is tap0's index in benchVPP.
const benchTap0 = 2

var benchWrites = []benchWrite{
	{"lb_mapping", func(i int) api.Message {
		return &nat44_ed.Nat44AddDelLbStaticMapping{
			IsAdd: true, Flags: nat_types.NAT_IS_OUT2IN_ONLY | nat_types.NAT_IS_SELF_TWICE_NAT,
			ExternalAddr: benchVIP(i).As4(), ExternalPort: 80, Protocol: tcp,
			Locals: []nat44_ed.Nat44LbAddrPort{
				{Addr: benchPod(2 * i).As4(), Port: 8080, Probability: 50},
				{Addr: benchPod(2*i + 1).As4(), Port: 8080, Probability: 50},
			},
			Tag: "default/svc",
		}
	}},
	{"static_mapping", func(i int) api.Message {
		return &nat44_ed.Nat44AddDelStaticMappingV2{
			IsAdd: true, Flags: nat_types.NAT_IS_OUT2IN_ONLY,
			LocalIPAddress: benchPod(i).As4(), ExternalIPAddress: benchVIP(i).As4(),
			LocalPort: 8080, ExternalPort: 80, Protocol: tcp, ExternalSwIfIndex: ^interface_types.InterfaceIndex(0),
		}
	}},
	{"acl", func(i int) api.Message {
		vip := apiPrefix(netip.PrefixFrom(benchVIP(i), 32))
		return &acl.ACLAddReplace{
			ACLIndex: ^uint32(0), Tag: fmt.Sprintf("bench-%d", i), Count: 2,
			R: []acl_types.ACLRule{
				{IsPermit: acl_types.ACL_ACTION_API_PERMIT, DstPrefix: vip, Proto: tcp,
					SrcportOrIcmptypeLast: 65535, DstportOrIcmpcodeFirst: 80, DstportOrIcmpcodeLast: 80},
				{IsPermit: acl_types.ACL_ACTION_API_DENY, DstPrefix: vip},
			},
		}
	}},
	{"route", func(i int) api.Message {
		return &ip.IPRouteAddDel{
			IsAdd: true,
			Route: ip.IPRoute{
				Prefix: apiPrefix(netip.PrefixFrom(benchPod(i), 32)), NPaths: 1,
				Paths: []fib_types.FibPath{{SwIfIndex: benchTap0, Proto: fib_types.FIB_API_PATH_NH_PROTO_IP4}},
			},
		}
	}},
	{"cnat_translation", func(i int) api.Message {
		ep := func(a netip.Addr, port uint16) cnatapi.CnatEndpoint {
			return cnatapi.CnatEndpoint{Addr: apiAddr(a), SwIfIndex: ^interface_types.InterfaceIndex(0), Port: port}
		}
		return &cnatapi.CnatTranslationUpdate{Translation: cnatapi.CnatTranslation{
			Vip: ep(benchVIP(i), 80), IPProto: ip_types.IP_API_PROTO_TCP, NPaths: 1,
			Paths: []cnatapi.CnatEndpointTuple{{DstEp: ep(benchPod(i), 8080), SrcEp: ep(netip.IPv4Unspecified(), 0)}},
		}}
	}},
}

// benchVPP is a VPP with eth0 (outside) and tap0 (inside) and NAT44-ED
// enabled, with a govpp connection.
func benchVPP(b *testing.B) (*VPP, *core.Connection) {
	b.Helper()
	v := New(WithSeed(1))
	v.AddInterface("eth0", pfx("192.168.0.1/24"))
	if sw := v.AddInterface("tap0", pfx("10.1.1.1/24")); sw != benchTap0 {
		b.Fatalf("tap0 is %d, want %d", sw, benchTap0)
	}
	v.AddRoute(pfx("0.0.0.0/0"), "eth0")
	conn, err := core.Connect(v)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(conn.Disconnect)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := nat44_ed.NewServiceClient(conn).Nat44EdPluginEnableDisable(ctx, &nat44_ed.Nat44EdPluginEnableDisable{Enable: true}); err != nil {
		b.Fatal(err)
	}
	return v, conn
}

// BenchmarkRequests sends b.N distinct adds of each kind of write, either
// as encoded frames straight into the adapter (the fake's own cost: the
// frames are encoded before the timer starts, and a callback that only
// checks the retval receives the replies) or through a govpp stream with
// 256 requests in flight, as the product's driver sends them.
func BenchmarkRequests(b *testing.B) {
	for _, w := range benchWrites {
		b.Run("via=adapter/msg="+w.name, func(b *testing.B) { benchAdapter(b, w) })
		b.Run("via=govpp/msg="+w.name, func(b *testing.B) { benchStream(b, w) })
	}
}

func benchAdapter(b *testing.B, w benchWrite) {
	v, _ := benchVPP(b)
	a := v.NewAdapter()
	var got, failed atomic.Int64
	var firstBad atomic.Int32
	done := make(chan struct{})
	at := retvalOffset(b, w.req(0).GetMessageName())
	a.SetMsgCallback(func(_ uint16, data []byte) {
		if rv := int32(binary.BigEndian.Uint32(data[at : at+4])); rv != 0 {
			firstBad.CompareAndSwap(0, rv)
			failed.Add(1)
		}
		if got.Add(1) == int64(b.N) {
			close(done)
		}
	})
	if err := a.Connect(); err != nil {
		b.Fatal(err)
	}
	defer a.Disconnect()
	frames := make([][]byte, b.N)
	for i := range frames {
		m := w.req(i)
		id, err := a.GetMsgID(m.GetMessageName(), m.GetCrcString())
		if err != nil {
			b.Fatal(err)
		}
		if frames[i], err = codec.DefaultCodec.EncodeMsg(m, id); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU(b)
	for i, f := range frames {
		if err := a.SendMsg(uint32(i+1), f); err != nil {
			b.Fatal(err)
		}
	}
	select {
	case <-done:
	case <-time.After(time.Minute):
		b.Fatalf("%d of %d replies after a minute", got.Load(), b.N)
	}
	b.StopTimer()
	cpu.report()
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d of %d requests failed (first retval %d); violations: %v", n, b.N, firstBad.Load(), v.Violations())
	}
}

func benchStream(b *testing.B, w benchWrite) {
	_, conn := benchVPP(b)
	const depth = 256
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := conn.NewStream(ctx, core.WithRequestSize(depth), core.WithReplySize(depth+1), core.WithReplyTimeout(10*time.Second))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	reqs := make([]api.Message, b.N)
	for i := range reqs {
		reqs[i] = w.req(i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU(b)
	defer cpu.report()
	for start := 0; start < len(reqs); start += depth {
		chunk := reqs[start:min(start+depth, len(reqs))]
		for _, m := range chunk {
			if err := s.SendMsg(m); err != nil {
				b.Fatal(err)
			}
		}
		for range chunk {
			r, err := s.RecvMsg()
			if err != nil {
				b.Fatal(err)
			}
			if rv := reflectRetval(r); rv != 0 {
				b.Fatalf("%s: retval %d", r.GetMessageName(), rv)
			}
		}
	}
}

// cpuMeter reports the process's CPU time per op (user and system, the
// garbage collector's and the outbox reader's included) as cpu-ns/op: on a
// shared machine it moves less than the wall time.
type cpuMeter struct {
	b     *testing.B
	start time.Duration
}

func startCPU(b *testing.B) cpuMeter { return cpuMeter{b, processCPU()} }

func (m cpuMeter) report() {
	m.b.ReportMetric(float64(processCPU()-m.start)/float64(m.b.N), "cpu-ns/op")
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// retvalOffset is where the retval sits in a frame of the reply to request
// name (not always right after the context: acl_add_replace_reply starts
// with the ACL index).
func retvalOffset(b *testing.B, name string) int {
	b.Helper()
	r := messages().replyFor(name)
	const marker = 0x7eadbeef
	setRetval(r, marker)
	data, err := codec.DefaultCodec.EncodeMsg(r, 1)
	if err != nil {
		b.Fatal(err)
	}
	at := bytes.Index(data, binary.BigEndian.AppendUint32(nil, marker))
	if at < 0 {
		b.Fatalf("no retval in %s", r.GetMessageName())
	}
	return at
}

// reflectRetval is the Retval field of a reply.
func reflectRetval(m api.Message) int32 {
	f := reflect.ValueOf(m).Elem().FieldByName("Retval")
	if !f.IsValid() {
		return 0
	}
	return int32(f.Int())
}
