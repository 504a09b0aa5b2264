package iochoice

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os/exec"
	"testing"

	"github.com/vppsvc/vppsvc/e2e/lab/host"
	"github.com/vppsvc/vppsvc/e2e/lab/netexec"
	"github.com/vppsvc/vppsvc/e2e/lab/vppnode"
)

// path is a client namespace and a server namespace with one forwarding
// hop between them: a VPP's two af_packet interfaces, or a kernel router.
type path struct {
	name     string
	clientNS string
	serverNS string
	serverIP netip.Addr
	io       vppnode.IO         // zero for the kernel router
	vppIfs   []vppnode.AfPacket // VPP's interfaces of the path
	kernel   bool
	server   *netexec.Server
}

// Addresses: path k's client is 10.77.k.2/24 behind 10.77.k.1, its server
// 10.78.k.2/24 behind 10.78.k.1, the router (VPP or kernel) holding both .1s.
func clientNet(k int) netip.Prefix {
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 77, byte(k), 0}), 24)
}
func serverNet(k int) netip.Prefix {
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 78, byte(k), 0}), 24)
}

func hostAddr(p netip.Prefix, i byte) netip.Prefix {
	a := p.Addr().As4()
	a[3] = i
	return netip.PrefixFrom(netip.AddrFrom4(a), p.Bits())
}

// endpoints makes path k's client and server namespaces.
func endpoints(t *testing.T, l *host.Lab, k int, p *path) {
	t.Helper()
	p.clientNS = fmt.Sprintf("%sc%d", prefix, k)
	p.serverNS = fmt.Sprintf("%ss%d", prefix, k)
	for _, ns := range []string{p.clientNS, p.serverNS} {
		must(t, l.AddNamespace(ns))
	}
}

// addressEndpoints addresses the client's and server's eth0 of path k,
// now that they exist, and routes each via its router.
func addressEndpoints(t *testing.T, l *host.Lab, k int, p *path) {
	t.Helper()
	for _, e := range []struct {
		ns  string
		net netip.Prefix
	}{{p.clientNS, clientNet(k)}, {p.serverNS, serverNet(k)}} {
		must(t, l.SetUp(e.ns, "eth0"))
		must(t, l.AddAddress(e.ns, "eth0", hostAddr(e.net, 2)))
		must(t, l.AddRoute(e.ns, host.Route{Dst: netip.MustParsePrefix("0.0.0.0/0"), Via: hostAddr(e.net, 1).Addr(), Dev: "eth0"}))
	}
	p.serverIP = hostAddr(serverNet(k), 2).Addr()
}

// vppPath builds path k through VPP with the I/O setting io: veths from
// the root namespace to each endpoint, VPP's af_packet interfaces on the
// root ends, addressed as the endpoints' routers.
func vppPath(ctx context.Context, t *testing.T, l *host.Lab, vc *vppnode.Client, k int, io vppnode.IO) *path {
	t.Helper()
	p := &path{name: "vpp " + io.Name, io: io}
	endpoints(t, l, k, p)
	for _, e := range []struct {
		ns, side string
		net      netip.Prefix
	}{{p.clientNS, "c", clientNet(k)}, {p.serverNS, "s", serverNet(k)}} {
		veth := fmt.Sprintf("%s%d%s", prefix, k, e.side)
		must(t, l.AddVeth(veth, e.ns, "eth0"))
		name := fmt.Sprintf("%s%d", e.side, k)
		a := vppnode.AfPacket{HostIf: veth, Name: name, IO: io}
		if _, err := vc.EnsureAfPacket(ctx, a); err != nil {
			t.Fatal(err)
		}
		must(t, vc.AddAddress(ctx, name, hostAddr(e.net, 1)))
		p.vppIfs = append(p.vppIfs, a)
	}
	addressEndpoints(t, l, k, p)
	return p
}

// kernelPath builds path k through a router namespace: the client's and
// the server's veths on two bridges of their own there, each bridge the
// endpoint's router, IPv4 forwarding on. A kube-proxy node's pods sit on
// a bridge its kernel routes from in the same way.
func kernelPath(t *testing.T, l *host.Lab, k int) *path {
	t.Helper()
	p := &path{name: "kernel", kernel: true}
	endpoints(t, l, k, p)
	router := fmt.Sprintf("%sr%d", prefix, k)
	must(t, l.AddNamespace(router))
	must(t, l.Sysctl(router, "net.ipv4.ip_forward", "1"))
	for _, e := range []struct {
		ns, side string
		net      netip.Prefix
	}{{p.clientNS, "c", clientNet(k)}, {p.serverNS, "s", serverNet(k)}} {
		br := "br" + e.side
		must(t, l.AddBridgeIn(router, br, []netip.Prefix{hostAddr(e.net, 1)}))
		must(t, l.AddVethIn(router, "v"+e.side, br, e.ns, "eth0"))
	}
	addressEndpoints(t, l, k, p)
	return p
}

// serve starts a netexec server (HTTP on port 8080) in p's server
// namespace until the test ends.
func (p *path) serve(t *testing.T) {
	t.Helper()
	var err error
	must(t, host.InNamespace(p.serverNS, func() error {
		p.server, err = netexec.New(netexec.Options{HTTPPort: httpPort, UDPPort: -1, TCPLinePort: -1, Hostname: p.serverNS})
		return err
	}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = p.server.Serve(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

const httpPort = 8080

func (p *path) addr() string { return netip.AddrPortFrom(p.serverIP, httpPort).String() }

// dial connects from p's client namespace.
func (p *path) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	return host.DialContext(ctx, p.clientNS, network, addr)
}

// inNS runs a command in the namespace ns (iperf3's client and server).
func inNS(ns string) netexec.CommandFunc {
	return func(ctx context.Context, name string, args ...string) *exec.Cmd {
		cmd := host.Command(ns, name, args...)
		return exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
