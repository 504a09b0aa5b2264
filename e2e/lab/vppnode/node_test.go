package vppnode

import (
	"bufio"
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vppsvc/vppsvc/e2e/lab/host"
)

// requireVPP skips tests that start a real VPP unless VPPSVC_LAB_VPP names
// one and the test runs as root.
func requireVPP(t *testing.T) (*VPP, *host.Lab) {
	t.Helper()
	if os.Getenv(EnvBinary) == "" || os.Geteuid() != 0 {
		t.Skipf("needs root and %s (a VPP 25.10 build's bin/vpp)", EnvBinary)
	}
	state := t.TempDir()
	lab, err := host.New(host.Options{Prefix: fmt.Sprintf("vv%d", os.Getpid()%1000), StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	v, err := New(Options{Dir: filepath.Join(state, lab.Prefix(), "vpp-n1")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := v.Kill(); err != nil {
			t.Errorf("kill VPP: %v", err)
		}
		if removed, err := lab.Cleanup(); err != nil {
			t.Errorf("lab cleanup: %v (removed %q)", err, removed)
		}
	})
	return v, lab
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func mustPrefix(s string) netip.Prefix { return netip.MustParsePrefix(s) }

// The test node: namespace A is the node's host behind host0
// (10.99.0.0/24, fd99::/64); namespace B is a pod behind pod1, unnumbered
// to host0, with 10.99.1.5/32 and its default route via host0's address.
type testNode struct {
	lab          *host.Lab
	nsA, nsB     string
	vethA, vethB string
}

func newTestNode(t *testing.T, lab *host.Lab) testNode {
	p := lab.Prefix()
	n := testNode{lab: lab, nsA: p + "-a", nsB: p + "-b", vethA: p + "a", vethB: p + "b"}
	for _, ns := range []string{n.nsA, n.nsB} {
		must(t, lab.AddNamespace(ns))
		must(t, lab.Sysctl(ns, "net.ipv4.ping_group_range", "0 2147483647"))
	}
	must(t, lab.AddVeth(n.vethA, n.nsA, "eth0"))
	must(t, lab.AddVeth(n.vethB, n.nsB, "eth0"))
	must(t, lab.AddAddress(n.nsA, "eth0", mustPrefix("10.99.0.2/24")))
	must(t, lab.AddAddress(n.nsA, "eth0", mustPrefix("fd99::2/64")))
	must(t, lab.AddRoute(n.nsA, host.Route{Dst: mustPrefix("10.99.1.0/24"), Via: netip.MustParseAddr("10.99.0.1"), Dev: "eth0"}))
	must(t, lab.AddAddress(n.nsB, "eth0", mustPrefix("10.99.1.5/32")))
	must(t, lab.AddRoute(n.nsB, host.Route{Dst: mustPrefix("0.0.0.0/0"), Via: netip.MustParseAddr("10.99.0.1"), Dev: "eth0", OnLink: true}))
	return n
}

// plan is what a node agent programs into its VPP for testNode.
func (n testNode) plan(ctx context.Context, c *Client) error {
	if _, err := c.EnsureAfPacket(ctx, AfPacket{HostIf: n.vethA, Name: "host0"}); err != nil {
		return err
	}
	if _, err := c.EnsureAfPacket(ctx, AfPacket{HostIf: n.vethB, Name: "pod1"}); err != nil {
		return err
	}
	for _, a := range []string{"10.99.0.1/24", "fd99::1/64"} {
		if err := c.AddAddress(ctx, "host0", mustPrefix(a)); err != nil {
			return err
		}
	}
	if err := c.EnableIP6(ctx, "host0"); err != nil {
		return err
	}
	if err := c.SetUnnumbered(ctx, "pod1", "host0"); err != nil {
		return err
	}
	if err := c.AddRoute(ctx, Route{Dst: mustPrefix("10.99.1.5/32"), Dev: "pod1"}); err != nil {
		return err
	}
	macA, err := n.lab.MAC(n.nsA, "eth0")
	if err != nil {
		return err
	}
	macB, err := n.lab.MAC(n.nsB, "eth0")
	if err != nil {
		return err
	}
	// Both families: after a VPP restart A's caches still hold VPP's MAC,
	// so A sends no neighbour discovery VPP could learn from, and the
	// first reply would wait for VPP's own resolution (and be dropped).
	for _, a := range []string{"10.99.0.2", "fd99::2"} {
		if err := c.AddNeighbour(ctx, "host0", netip.MustParseAddr(a), macA); err != nil {
			return err
		}
	}
	return c.AddNeighbour(ctx, "pod1", netip.MustParseAddr("10.99.1.5"), macB)
}

// check pings VPP from A over both families and from the pod B through
// its unnumbered interface, and opens a TCP connection from A to B
// through VPP (the veths' checksum offloads as they come).
func (n testNode) check(t *testing.T) {
	t.Helper()
	for _, p := range []struct{ ns, dst string }{{n.nsA, "10.99.0.1"}, {n.nsA, "fd99::1"}, {n.nsB, "10.99.0.1"}, {n.nsA, "10.99.1.5"}} {
		if out, err := host.Command(p.ns, "ping", "-c1", "-W2", p.dst).CombinedOutput(); err != nil {
			t.Errorf("ping %s from %s: %v\n%s", p.dst, p.ns, err, out)
		}
	}
	ln, err := host.Listen(n.nsB, "tcp4", "10.99.1.5:0")
	must(t, err)
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		line, _ := bufio.NewReader(c).ReadString('\n')
		fmt.Fprintf(c, "%s from %s\n", strings.TrimSpace(line), c.RemoteAddr())
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := host.DialContext(ctx, n.nsA, "tcp4", ln.Addr().String())
	if err != nil {
		t.Errorf("TCP from A to the pod through VPP: %v", err)
		return
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	payload := strings.Repeat("x", 3000) // more than one segment
	fmt.Fprintf(c, "%s\n", payload)
	got, err := bufio.NewReader(c).ReadString('\n')
	if want := payload + " from 10.99.0.2:"; err != nil || !strings.HasPrefix(got, want) {
		t.Errorf("TCP through VPP: read %d bytes (%v), want the payload back from 10.99.0.2", len(got), err)
	}
}

func TestNodeOnARealVPP(t *testing.T) {
	v, lab := requireVPP(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	must(t, v.Start(ctx))
	pid, ok := v.Running()
	if !ok {
		t.Fatal("VPP not running after Start")
	}
	n := newTestNode(t, lab)

	c, err := Connect(ctx, v.APISocket())
	must(t, err)
	must(t, n.plan(ctx, c))
	if got := c.Changes()["af_packet_create_v3"]; got != 2 {
		t.Errorf("first run created %d af_packet interfaces, want 2", got)
	}
	c.Close()
	n.check(t)

	t.Run("interfaces", func(t *testing.T) {
		c, err := Connect(ctx, v.APISocket())
		must(t, err)
		defer c.Close()
		h, err := c.Interface(ctx, "host0")
		must(t, err)
		if h.HostIf != n.vethA || !h.Up || !strings.HasPrefix(h.Tag, Tag+":") || len(h.MAC) != 6 {
			t.Errorf("host0 = %+v", h)
		}
		veth, err := lab.MAC("", n.vethA)
		must(t, err)
		if h.MAC.String() == veth.String() || h.MAC.String() != HostMAC(n.vethA).String() {
			t.Errorf("VPP's MAC %s: want HostMAC %s, not the veth's %s", h.MAC, HostMAC(n.vethA), veth)
		}
		mac, err := c.MAC(ctx, "pod1")
		must(t, err)
		if len(mac) != 6 {
			t.Errorf("MAC(pod1) = %v", mac)
		}
		addrs, err := c.Addresses(ctx, "host0")
		must(t, err)
		if !containsPrefix(addrs, mustPrefix("10.99.0.1/24")) || !containsPrefix(addrs, mustPrefix("fd99::1/64")) {
			t.Errorf("host0's addresses %v", addrs)
		}
	})

	t.Run("start again adopts the running VPP", func(t *testing.T) {
		must(t, v.Start(ctx))
		if again, _ := v.Running(); again != pid {
			t.Errorf("pid %d after a second Start, want %d", again, pid)
		}
	})

	t.Run("a restarted node agent adopts everything", func(t *testing.T) {
		c, err := Connect(ctx, v.APISocket())
		must(t, err)
		defer c.Close()
		must(t, n.plan(ctx, c))
		if ch := c.Changes(); len(ch) != 0 {
			t.Errorf("second run of the plan sent changes: %v", ch)
		}
	})

	t.Run("a veth re-created under its name gets a new interface", func(t *testing.T) {
		c, err := Connect(ctx, v.APISocket())
		must(t, err)
		defer c.Close()
		must(t, lab.DelNamespace(n.nsB))
		n = newTestNode(t, lab)
		must(t, n.plan(ctx, c))
		ch := c.Changes()
		if ch["af_packet_delete"] != 1 || ch["af_packet_create_v3"] != 1 {
			t.Errorf("changes %v: want pod1's stale interface deleted and one created", ch)
		}
		n.check(t)
	})

	t.Run("VPP killed and restarted", func(t *testing.T) {
		must(t, v.Kill())
		if _, ok := v.Running(); ok {
			t.Fatal("VPP still running after Kill")
		}
		start := time.Now()
		must(t, v.Start(ctx))
		c, err := Connect(ctx, v.APISocket())
		must(t, err)
		defer c.Close()
		must(t, n.plan(ctx, c))
		t.Logf("VPP restart and re-plan took %s", time.Since(start).Round(time.Millisecond))
		if got := c.Changes()["af_packet_create_v3"]; got != 2 {
			t.Errorf("after a VPP restart the plan created %d af_packet interfaces, want 2", got)
		}
		if newPid, _ := v.Running(); newPid == pid {
			t.Errorf("same pid %d after a restart", pid)
		}
		n.check(t)
	})

	t.Run("idle CPU", func(t *testing.T) {
		pid, _ := v.Running()
		time.Sleep(time.Second) // let the start's work settle
		before, err := cpuTicks(pid)
		must(t, err)
		const window = 5 * time.Second
		time.Sleep(window)
		after, err := cpuTicks(pid)
		must(t, err)
		pct := float64(after-before) / 100 / window.Seconds() * 100 // USER_HZ is 100
		t.Logf("idle VPP with 2 af_packet interfaces: %.1f %% of a core over %s", pct, window)
		if pct > 25 {
			t.Errorf("idle VPP uses %.1f %% of a core: it spins", pct)
		}
	})

	t.Run("delete an interface", func(t *testing.T) {
		c, err := Connect(ctx, v.APISocket())
		must(t, err)
		defer c.Close()
		must(t, c.DeleteInterface(ctx, "pod1"))
		must(t, c.DeleteInterface(ctx, "pod1"))
		if _, err := c.Interface(ctx, "pod1"); err == nil {
			t.Error("pod1 still in VPP")
		}
		ifs, err := c.Interfaces(ctx)
		must(t, err)
		if len(ifs) != 1 || ifs[0].Name != "host0" {
			t.Errorf("interfaces %+v, want host0 only", ifs)
		}
		if err := c.DeleteInterface(ctx, "local0"); err != nil {
			t.Errorf("DeleteInterface(local0) = %v, want nothing done (local0 is not listed)", err)
		}
	})
}

func containsPrefix(ps []netip.Prefix, p netip.Prefix) bool {
	for _, x := range ps {
		if x == p {
			return true
		}
	}
	return false
}

// cpuTicks is a process's user and system time in clock ticks.
func cpuTicks(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	// Fields after the command: state is f[0]; utime and stime are the
	// 14th and 15th fields of the line, f[11] and f[12] here.
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("parse /proc/%d/stat: %q", pid, s)
	}
	return u + st, nil
}
