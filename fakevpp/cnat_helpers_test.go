package fakevpp

// cnat test address plan (on top of helpers_test.go and dualStackEnv):
//
//	eth0  uplink     192.168.0.1/24, 2001:db8::1/64, default routes
//	tap0  pods       10.1.1.1/24 (pods A B C = 10.1.1.2–4), fd00::1/64 (fd00::2–4)
//	10.96.0.20–23, fd00:96::20   service VIPs (exclusive unless said otherwise)
//	10.0.0.1, fd00:ff::1         cnat source-NAT addresses
//	8.8.8.8, 2001:db8::7         external clients

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
	"go.fd.io/govpp/binapi/cnat"
	"go.fd.io/govpp/binapi/feature"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip_types"
)

const (
	cnatVIP   = "10.96.0.20:80"
	backendA  = "10.1.1.2:8080"
	backendB  = "10.1.1.3:8080"
	backendC  = "10.1.1.4:8080"
	snatAddr4 = "10.0.0.1"
	snatAddr6 = "fd00:ff::1"
)

// cnatEnv is a dual-stack env with the cnat and feature clients.
type cnatEnv struct {
	*env
	cnat cnat.RPCService
	feat feature.RPCService
}

func newCnatEnv(t *testing.T) *cnatEnv {
	t.Helper()
	e := dualStackEnv(t)
	return &cnatEnv{env: e, cnat: cnat.NewServiceClient(e.conn), feat: feature.NewServiceClient(e.conn)}
}

// lit is a literal endpoint ("10.0.0.1", "10.1.1.2:8080", "[fd00::2]:8080")
// with SwIfIndex ~0, the way a literal must be sent (fakevpp/internal/cnat/README.md#endpoints).
func lit(s string) cnat.CnatEndpoint {
	a, err := netip.ParseAddrPort(s)
	if err != nil {
		a = netip.AddrPortFrom(addr(s), 0)
	}
	return cnat.CnatEndpoint{Addr: apiAddr(a.Addr()), SwIfIndex: ^interface_types.InterfaceIndex(0), Port: a.Port()}
}

func apiAddr(a netip.Addr) ip_types.Address {
	if a.Is4() {
		return ip_types.Address{Af: ip_types.ADDRESS_IP4, Un: ip_types.AddressUnionIP4(a.As4())}
	}
	return ip_types.Address{Af: ip_types.ADDRESS_IP6, Un: ip_types.AddressUnionIP6(a.As16())}
}

// fromAPIAddr is the inverse of apiAddr (the zero address for Af 0 with a
// zero union, which is how VPP dumps an unresolved endpoint).
func fromAPIAddr(a ip_types.Address) netip.Addr {
	if a.Af == ip_types.ADDRESS_IP6 {
		return netip.AddrFrom16(a.Un.GetIP6())
	}
	return netip.AddrFrom4(a.Un.GetIP4())
}

// ifEndpoint takes its address from an interface (IPv4).
func ifEndpoint(sw interface_types.InterfaceIndex, port uint16) cnat.CnatEndpoint {
	return cnat.CnatEndpoint{SwIfIndex: sw, IfAf: ip_types.ADDRESS_IP4, Port: port}
}

// cnatPath is a path to dst, source-NATed to src unless src is "".
func cnatPath(src, dst string) cnat.CnatEndpointTuple {
	if src == "" {
		src = "0.0.0.0"
		if ap(dst).Addr().Is6() {
			src = "::"
		}
	}
	return cnat.CnatEndpointTuple{SrcEp: lit(src), DstEp: lit(dst)}
}

// cnatTCP is an exclusive TCP translation of vip to the paths; tests adjust
// the other fields.
func cnatTCP(vip string, paths ...cnat.CnatEndpointTuple) cnat.CnatTranslation {
	return cnat.CnatTranslation{Vip: lit(vip), IPProto: ip_types.IP_API_PROTO_TCP, Paths: paths}
}

// update sends CnatTranslationUpdate and returns the ID (~0 on error).
func (e *cnatEnv) update(t cnat.CnatTranslation) (uint32, error) {
	r, err := e.cnat.CnatTranslationUpdate(e.ctx, &cnat.CnatTranslationUpdate{Translation: t})
	if r == nil {
		return ^uint32(0), err
	}
	return r.ID, err
}

func (e *cnatEnv) mustUpdate(t cnat.CnatTranslation) uint32 {
	e.t.Helper()
	id, err := e.update(t)
	e.ok(err)
	return id
}

func (e *cnatEnv) del(id uint32) error {
	_, err := e.cnat.CnatTranslationDel(e.ctx, &cnat.CnatTranslationDel{ID: id})
	return err
}

func (e *cnatEnv) translations() []*cnat.CnatTranslationDetails {
	e.t.Helper()
	s, err := e.cnat.CnatTranslationDump(e.ctx, &cnat.CnatTranslationDump{})
	e.ok(err)
	return recvAll(e.t, s.Recv)
}

func (e *cnatEnv) cnatSessions() []*cnat.CnatSessionDetails {
	e.t.Helper()
	s, err := e.cnat.CnatSessionDump(e.ctx, &cnat.CnatSessionDump{})
	e.ok(err)
	return recvAll(e.t, s.Recv)
}

// backends lists a dumped translation's path destinations.
func backends(d *cnat.CnatTranslationDetails) []netip.AddrPort {
	var out []netip.AddrPort
	for _, p := range d.Translation.Paths {
		out = append(out, netip.AddrPortFrom(fromAPIAddr(p.DstEp.Addr), p.DstEp.Port))
	}
	return out
}

func (e *cnatEnv) setFeature(ifName, arc, name string, on bool) error {
	_, err := e.feat.FeatureEnableDisable(e.ctx, &feature.FeatureEnableDisable{SwIfIndex: e.sw(ifName), Enable: on, ArcName: arc, FeatureName: name})
	return err
}

func (e *cnatEnv) featureOn(ifName, arc, name string) bool {
	e.t.Helper()
	r, err := e.feat.FeatureIsEnabled(e.ctx, &feature.FeatureIsEnabled{SwIfIndex: e.sw(ifName), ArcName: arc, FeatureName: name})
	e.ok(err)
	return r.IsEnabled
}

// setSnat configures the cnat-snat addresses (literals) and policy.
func (e *cnatEnv) setSnat(ip4, ip6 string, policy cnat.CnatSnatPolicies) {
	e.t.Helper()
	_, err := e.cnat.CnatSetSnatAddresses(e.ctx, &cnat.CnatSetSnatAddresses{
		SnatIP4: addr(ip4).As4(), SnatIP6: addr(ip6).As16(), SwIfIndex: ^interface_types.InterfaceIndex(0)})
	e.ok(err)
	_, err = e.cnat.CnatSetSnatPolicy(e.ctx, &cnat.CnatSetSnatPolicy{Policy: policy})
	e.ok(err)
}

func (e *cnatEnv) snatPolicyIf(ifName string, table cnat.CnatSnatPolicyTable) {
	e.t.Helper()
	_, err := e.cnat.CnatSnatPolicyAddDelIf(e.ctx, &cnat.CnatSnatPolicyAddDelIf{SwIfIndex: e.sw(ifName), IsAdd: 1, Table: table})
	e.ok(err)
}

// requireCnatForward asserts a forwarded packet whose reply comes back.
func requireCnatForward(t *testing.T, tr Trace, egress, src, dst string) {
	t.Helper()
	requireForward(t, tr, egress, src, dst)
	require.True(t, tr.ReplyOK, "reply; steps:\n%s", steps(tr))
}

// ack is the next packet of the flow of a traced SYN.
func ack(p Packet) Packet {
	p.TCPFlags = tcpACK
	return p
}
