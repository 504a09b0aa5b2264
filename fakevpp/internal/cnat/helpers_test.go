package cnat

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.fd.io/govpp/binapi/cnat"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip_types"

	"github.com/vppsvc/vppsvc/fakevpp/internal/apiaddr"
)

// fakeIfs is a minimal Interfaces: sw 0 (local0) always exists.
type fakeIfs struct {
	exists map[uint32]bool
	addrs  map[uint32][]netip.Addr
	// hosts are the host routes (/32, /128) of table 0.
	hosts map[netip.Addr]bool
}

func newIfs(sws ...uint32) *fakeIfs {
	f := &fakeIfs{exists: map[uint32]bool{0: true}, addrs: map[uint32][]netip.Addr{}, hosts: map[netip.Addr]bool{}}
	for _, sw := range sws {
		f.exists[sw] = true
	}
	return f
}

func (f *fakeIfs) Exists(sw uint32) bool { return f.exists[sw] }

func (f *fakeIfs) Address(sw uint32, ip6 bool) (netip.Addr, bool) {
	for _, a := range f.addrs[sw] {
		if a.Is6() == ip6 {
			return a, true
		}
	}
	return netip.Addr{}, false
}

func (f *fakeIfs) HostEntry(a netip.Addr) bool {
	for _, as := range f.addrs {
		if slices.Contains(as, a) {
			return true
		}
	}
	return f.hosts[a]
}

func (f *fakeIfs) add(sw uint32, a string) netip.Addr {
	addr := netip.MustParseAddr(a)
	f.exists[sw] = true
	f.addrs[sw] = append(f.addrs[sw], addr)
	return addr
}

func (f *fakeIfs) del(sw uint32, a netip.Addr) {
	var keep []netip.Addr
	for _, x := range f.addrs[sw] {
		if x != a {
			keep = append(keep, x)
		}
	}
	f.addrs[sw] = keep
}

var t0 = time.Date(2025, 10, 27, 12, 0, 0, 0, time.UTC)

func at(sec float64) time.Time { return t0.Add(time.Duration(sec * float64(time.Second))) }

const (
	tcpProto  = ip_types.IP_API_PROTO_TCP
	udpProto  = ip_types.IP_API_PROTO_UDP
	anyIfIdx  = interface_types.InterfaceIndex(^uint32(0))
	noSuchID  = ^uint32(0)
	vip20     = "10.96.0.20:80"
	backendA  = "10.1.1.2:8080"
	backendB  = "10.1.1.3:8080"
	backendC  = "10.1.1.4:8080"
	clientIP  = "10.1.1.9"
	snatSrcIP = "10.0.0.1"
)

// lit is a literal endpoint ("10.0.0.1", "10.0.0.1:80", "[fd00::1]:80") with
// SwIfIndex ~0, the correct way to send one.
func lit(s string) cnat.CnatEndpoint {
	var ap netip.AddrPort
	if strings.Contains(s, "]:") || (strings.Count(s, ":") == 1) {
		ap = netip.MustParseAddrPort(s)
	} else {
		ap = netip.AddrPortFrom(netip.MustParseAddr(s), 0)
	}
	return cnat.CnatEndpoint{Addr: apiaddr.To(ap.Addr()), SwIfIndex: anyIfIdx, Port: ap.Port()}
}

// ifEp is an interface endpoint.
func ifEp(sw uint32, ip6 bool, port uint16) cnat.CnatEndpoint {
	af := ip_types.ADDRESS_IP4
	if ip6 {
		af = ip_types.ADDRESS_IP6
	}
	return cnat.CnatEndpoint{SwIfIndex: interface_types.InterfaceIndex(sw), IfAf: af, Port: port}
}

// to is a path without source NAT (SrcEp 0.0.0.0, SwIfIndex ~0).
func to(dst string) cnat.CnatEndpointTuple {
	return cnat.CnatEndpointTuple{SrcEp: lit("0.0.0.0"), DstEp: lit(dst)}
}

// to6 is an IPv6 path without source NAT.
func to6(dst string) cnat.CnatEndpointTuple {
	return cnat.CnatEndpointTuple{SrcEp: lit("::"), DstEp: lit(dst)}
}

// via is a path source-NATed to src.
func via(src, dst string) cnat.CnatEndpointTuple {
	return cnat.CnatEndpointTuple{SrcEp: lit(src), DstEp: lit(dst)}
}

// trans builds an exclusive (IsRealIP=0) translation update.
func trans(vip string, proto ip_types.IPProto, paths ...cnat.CnatEndpointTuple) *cnat.CnatTranslationUpdate {
	return &cnat.CnatTranslationUpdate{Translation: cnat.CnatTranslation{
		Vip: lit(vip), IPProto: proto, Paths: paths, NPaths: uint32(len(paths)),
	}}
}

func mustUpdate(t *testing.T, p *Plugin, m *cnat.CnatTranslationUpdate) uint32 {
	t.Helper()
	r := p.TranslationUpdate(m)
	require.Equal(t, int32(0), r.Retval, "CnatTranslationUpdate retval")
	return r.ID
}

func ap(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }

func tcpFlow(src, dst string, flags uint8) Flow {
	return Flow{Proto: protoTCP, Src: ap(src), Dst: ap(dst), TCPFlags: flags}
}

func udpFlow(src, dst string) Flow {
	return Flow{Proto: protoUDP, Src: ap(src), Dst: ap(dst)}
}

// reply is the packet a backend sends back for the translated flow f.
func reply(f Flow, flags uint8) Flow {
	return Flow{Proto: f.Proto, Src: f.Dst, Dst: f.Src, TCPFlags: flags}
}

func violationMessages(p *Plugin) []string {
	var out []string
	for _, v := range p.Violations() {
		out = append(out, v.Message)
	}
	return out
}

func addr(s string) netip.Addr { return netip.MustParseAddr(s) }

func netipAddrPort(a netip.Addr, port uint16) netip.AddrPort { return netip.AddrPortFrom(a, port) }
