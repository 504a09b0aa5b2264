package fakevpp

// Test address plan:
//
//	eth0  uplink, outside         192.168.0.1/24, default route 0.0.0.0/0
//	tap0  pods, inside+outside    10.1.1.1/24 (pods 10.1.1.2 …)
//	tap1  pods, inside only       10.1.2.1/24 (created by tests that need it)
//	1.1.1.1                       NAT pool address
//	10.1.1.252–254                twice-NAT pool addresses
//	10.96.0.0/16                  service VIPs (out2in-only LB mappings)
//	8.8.8.8, 8.8.4.4, 192.168.0.7 external clients / servers
//
// Every test talks to the fake through govpp's core and the generated RPC
// clients, exactly as the driver does.

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/acl"
	"go.fd.io/govpp/binapi/acl_types"
	interfaces "go.fd.io/govpp/binapi/interface"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip_types"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/binapi/nat_types"
	"go.fd.io/govpp/core"
)

func init() {
	core.SetLogLevel(2) // logrus.ErrorLevel: keep test output quiet
}

const (
	tcp = 6
	udp = 17
)

var (
	ap   = netip.MustParseAddrPort
	addr = netip.MustParseAddr
	pfx  = netip.MustParsePrefix
)

func a4(s string) ip_types.IP4Address { return addr(s).As4() }

// env is a fake VPP with a govpp connection and the RPC clients.
type env struct {
	t    *testing.T
	v    *VPP
	conn *core.Connection
	ctx  context.Context
	nat  nat44_ed.RPCService
	acl  acl.RPCService
	ifs  interfaces.RPCService
}

// newEnv boots a VPP with eth0 and tap0 (startup interfaces) and a default
// route, and connects to it.
func newEnv(t *testing.T, opts ...Option) *env {
	t.Helper()
	v := New(opts...)
	v.AddInterface("eth0", pfx("192.168.0.1/24"))
	v.AddInterface("tap0", pfx("10.1.1.1/24"))
	v.AddRoute(pfx("0.0.0.0/0"), "eth0")
	return connectEnv(t, v)
}

func connectEnv(t *testing.T, v *VPP) *env {
	t.Helper()
	conn, err := core.Connect(v)
	require.NoError(t, err)
	t.Cleanup(conn.Disconnect)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return &env{t: t, v: v, conn: conn, ctx: ctx,
		nat: nat44_ed.NewServiceClient(conn), acl: acl.NewServiceClient(conn), ifs: interfaces.NewServiceClient(conn)}
}

// rv turns an RPC error into its VPP retval (0 for success). Transport
// errors fail the test.
func rv(t *testing.T, err error) api.VPPApiError {
	t.Helper()
	if err == nil {
		return 0
	}
	var ve api.VPPApiError
	require.True(t, errors.As(err, &ve), "not a VPP API error: %v", err)
	return ve
}

func (e *env) sw(name string) interface_types.InterfaceIndex {
	e.t.Helper()
	i, ok := e.v.InterfaceIndex(name)
	require.True(e.t, ok, "no interface %s", name)
	return interface_types.InterfaceIndex(i)
}

// ok asserts that a call succeeded.
func (e *env) ok(err error) {
	e.t.Helper()
	require.NoError(e.t, err)
}

// expect asserts a retval.
func (e *env) expect(want api.VPPApiError, err error) {
	e.t.Helper()
	require.Equal(e.t, want, rv(e.t, err), "retval")
}

func (e *env) enableNAT() {
	e.t.Helper()
	_, err := e.nat.Nat44EdPluginEnableDisable(e.ctx, &nat44_ed.Nat44EdPluginEnableDisable{Enable: true})
	e.ok(err)
}

func (e *env) natRole(name string, isAdd bool, flags nat_types.NatConfigFlags) error {
	_, err := e.nat.Nat44InterfaceAddDelFeature(e.ctx, &nat44_ed.Nat44InterfaceAddDelFeature{IsAdd: isAdd, SwIfIndex: e.sw(name), Flags: flags})
	return err
}

func (e *env) pool(first string, flags nat_types.NatConfigFlags) {
	e.t.Helper()
	_, err := e.nat.Nat44AddDelAddressRange(e.ctx, &nat44_ed.Nat44AddDelAddressRange{
		FirstIPAddress: a4(first), LastIPAddress: a4(first), VrfID: ^uint32(0), IsAdd: true, Flags: flags})
	e.ok(err)
}

// standardNAT is the NAT44-ED tests' default setup: NAT enabled, pool 1.1.1.1, tap0
// inside+outside, eth0 outside, forwarding off.
func (e *env) standardNAT() {
	e.t.Helper()
	e.enableNAT()
	e.ok(e.natRole("tap0", true, nat_types.NAT_IS_INSIDE))
	e.ok(e.natRole("tap0", true, nat_types.NAT_IS_OUTSIDE))
	e.ok(e.natRole("eth0", true, nat_types.NAT_IS_OUTSIDE))
	e.pool("1.1.1.1", 0)
}

// static adds (or deletes) a static mapping; ExternalSwIfIndex is ~0 and the
// VRF the inside one.
func (e *env) static(isAdd bool, local, ext string, proto uint8, flags nat_types.NatConfigFlags) error {
	l, x := ap(local), ap(ext)
	_, err := e.nat.Nat44AddDelStaticMappingV2(e.ctx, &nat44_ed.Nat44AddDelStaticMappingV2{
		IsAdd: isAdd, Flags: flags, LocalIPAddress: l.Addr().As4(), ExternalIPAddress: x.Addr().As4(),
		Protocol: proto, LocalPort: l.Port(), ExternalPort: x.Port(),
		ExternalSwIfIndex: ^interface_types.InterfaceIndex(0), VrfID: ^uint32(0)})
	return err
}

// local builds an LB local: "10.1.1.2:8080" with a probability.
func local(ep string, prob uint8) nat44_ed.Nat44LbAddrPort {
	a := ap(ep)
	return nat44_ed.Nat44LbAddrPort{Addr: a.Addr().As4(), Port: a.Port(), Probability: prob}
}

func (e *env) lb(isAdd bool, ext string, flags nat_types.NatConfigFlags, affinity uint32, locals ...nat44_ed.Nat44LbAddrPort) error {
	x := ap(ext)
	_, err := e.nat.Nat44AddDelLbStaticMapping(e.ctx, &nat44_ed.Nat44AddDelLbStaticMapping{
		IsAdd: isAdd, Flags: flags, ExternalAddr: x.Addr().As4(), ExternalPort: x.Port(), Protocol: tcp,
		Affinity: affinity, Locals: locals})
	return err
}

func (e *env) lbLocal(isAdd bool, ext string, local nat44_ed.Nat44LbAddrPort) error {
	x := ap(ext)
	_, err := e.nat.Nat44LbStaticMappingAddDelLocal(e.ctx, &nat44_ed.Nat44LbStaticMappingAddDelLocal{
		IsAdd: isAdd, ExternalAddr: x.Addr().As4(), ExternalPort: x.Port(), Protocol: tcp, Local: local})
	return err
}

// delSession deletes a NAT session by its inside side and remote host.
func (e *env) delSession(inside, remote string, proto uint8) error {
	i, r := ap(inside), ap(remote)
	_, err := e.nat.Nat44DelSession(e.ctx, &nat44_ed.Nat44DelSession{Address: i.Addr().As4(), Port: i.Port(),
		Protocol: proto, ExtHostAddress: r.Addr().As4(), ExtHostPort: r.Port()})
	return err
}

// recvAll drains a generated dump client.
func recvAll[T any](t *testing.T, recv func() (*T, error)) []*T {
	t.Helper()
	var out []*T
	for {
		m, err := recv()
		if err != nil {
			require.ErrorContains(t, err, "EOF")
			return out
		}
		out = append(out, m)
	}
}

func (e *env) sessions(inside string) []*nat44_ed.Nat44UserSessionV3Details {
	e.t.Helper()
	s, err := e.nat.Nat44UserSessionV3Dump(e.ctx, &nat44_ed.Nat44UserSessionV3Dump{IPAddress: a4(inside)})
	e.ok(err)
	return recvAll(e.t, s.Recv)
}

// ACL helpers.

func prefix(s string) ip_types.Prefix {
	p, err := ip_types.ParsePrefix(s)
	if err != nil {
		panic(err)
	}
	return p
}

// rule builds an ACL rule; ports are inclusive ranges, zero proto means any.
func rule(action acl_types.ACLAction, src, dst string, proto uint8, dport uint16) acl_types.ACLRule {
	r := acl_types.ACLRule{IsPermit: action, SrcPrefix: prefix(src), DstPrefix: prefix(dst), Proto: ip_types.IPProto(proto),
		SrcportOrIcmptypeLast: 65535, DstportOrIcmpcodeFirst: 0, DstportOrIcmpcodeLast: 65535}
	if dport != 0 {
		r.DstportOrIcmpcodeFirst, r.DstportOrIcmpcodeLast = dport, dport
	}
	return r
}

func (e *env) addACL(tag string, rules ...acl_types.ACLRule) uint32 {
	e.t.Helper()
	r, err := e.acl.ACLAddReplace(e.ctx, &acl.ACLAddReplace{ACLIndex: ^uint32(0), Tag: tag, R: rules})
	e.ok(err)
	return r.ACLIndex
}

func (e *env) setACLs(name string, in []uint32, out []uint32) error {
	_, err := e.acl.ACLInterfaceSetACLList(e.ctx, &acl.ACLInterfaceSetACLList{
		SwIfIndex: e.sw(name), NInput: uint8(len(in)), Acls: append(append([]uint32(nil), in...), out...)})
	return err
}

// Packet builders.

func tcpSyn(ingress, src, dst string) Packet {
	return Packet{Ingress: ingress, Protocol: tcp, Src: ap(src), Dst: ap(dst)}
}

func udpPkt(ingress, src, dst string) Packet {
	return Packet{Ingress: ingress, Protocol: udp, Src: ap(src), Dst: ap(dst)}
}

// requireForward asserts a forwarded packet with its egress and addresses.
func requireForward(t *testing.T, tr Trace, egress, src, dst string) {
	t.Helper()
	require.Equal(t, Forward, tr.Verdict, "verdict; steps:\n%s", steps(tr))
	require.Equal(t, egress, tr.Egress, "egress; steps:\n%s", steps(tr))
	require.Equal(t, ap(src), tr.Out.Src, "source; steps:\n%s", steps(tr))
	require.Equal(t, ap(dst), tr.Out.Dst, "destination; steps:\n%s", steps(tr))
}

func requireDrop(t *testing.T, tr Trace, reasonPart string) {
	t.Helper()
	require.Equal(t, Drop, tr.Verdict, "verdict; steps:\n%s", steps(tr))
	require.Contains(t, tr.Reason, reasonPart, "steps:\n%s", steps(tr))
}

func steps(tr Trace) string {
	s := ""
	for _, x := range tr.Steps {
		s += "  " + x + "\n"
	}
	return s
}

func hasViolation(v *VPP, msg string) bool {
	for _, x := range v.Violations() {
		if x.Message == msg {
			return true
		}
	}
	return false
}
