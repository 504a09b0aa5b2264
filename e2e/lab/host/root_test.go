package host

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// requireRoot skips tests that change the machine unless asked for: they
// need root and VPPSVC_LAB_NET=1.
func requireRoot(t *testing.T) *Lab {
	t.Helper()
	if os.Geteuid() != 0 || os.Getenv("VPPSVC_LAB_NET") != "1" {
		t.Skip("needs root and VPPSVC_LAB_NET=1: creates namespaces, veths and a bridge")
	}
	l, err := New(Options{Prefix: fmt.Sprintf("vt%d", os.Getpid()%1000), StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if removed, err := l.Cleanup(); err != nil {
			t.Errorf("cleanup: %v (removed %q)", err, removed)
		}
	})
	return l
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestTwoNamespacesOnABridge builds two namespaces joined by a bridge,
// talks between them over both families, and checks that Cleanup leaves
// nothing of the lab's behind, also a process still running inside.
func TestTwoNamespacesOnABridge(t *testing.T) {
	l := requireRoot(t)
	p := l.Prefix()
	br := p + "br"
	must(t, l.AddBridge(br))
	type end struct {
		ns, link string
		v4, v6   netip.Prefix
	}
	ends := []end{
		{p + "-a", p + "a", mustPrefix("198.18.0.1/24"), mustPrefix("2001:db8::1/64")},
		{p + "-b", p + "b", mustPrefix("198.18.0.2/24"), mustPrefix("2001:db8::2/64")},
	}
	for _, e := range ends {
		must(t, l.AddNamespace(e.ns))
		must(t, l.AddVeth(e.link, e.ns, "eth0"))
		must(t, l.SetMaster(e.link, br))
		must(t, l.AddAddress(e.ns, "eth0", e.v4))
		must(t, l.AddAddress(e.ns, "eth0", e.v6))
		must(t, l.Sysctl(e.ns, "net.ipv4.ping_group_range", "0 2147483647"))
	}
	// A sysctl set inside a namespace stays there.
	must(t, l.Sysctl(ends[0].ns, "net.ipv4.ip_default_ttl", "33"))
	if out, err := Command(ends[0].ns, "cat", "/proc/sys/net/ipv4/ip_default_ttl").Output(); err != nil || strings.TrimSpace(string(out)) != "33" {
		t.Errorf("ip_default_ttl inside the namespace = %q, %v; want 33", out, err)
	}
	if root, _ := os.ReadFile("/proc/sys/net/ipv4/ip_default_ttl"); strings.TrimSpace(string(root)) == "33" {
		t.Error("the namespace's sysctl reached the root namespace")
	}
	// Every step again: the lab's own objects are kept, nothing fails.
	must(t, l.AddBridge(br))
	for _, e := range ends {
		must(t, l.AddNamespace(e.ns))
		must(t, l.AddVeth(e.link, e.ns, "eth0"))
		must(t, l.AddAddress(e.ns, "eth0", e.v4))
	}
	// A route and a permanent neighbour: b reaches 203.0.113.0/24 via a,
	// whose MAC it is told.
	macA, err := l.MAC(ends[0].ns, "eth0")
	must(t, err)
	must(t, l.AddNeighbour(ends[1].ns, "eth0", ends[0].v4.Addr(), macA))
	must(t, l.AddRoute(ends[1].ns, Route{Dst: mustPrefix("203.0.113.0/24"), Via: ends[0].v4.Addr(), Dev: "eth0"}))
	must(t, l.AddRoute(ends[1].ns, Route{Dst: mustPrefix("::/0"), Via: ends[0].v6.Addr(), Dev: "eth0", OnLink: true}))
	out, err := exec.Command("ip", "-n", ends[1].ns, "neigh", "show", "dev", "eth0").CombinedOutput()
	must(t, err)
	if !strings.Contains(string(out), strings.ToLower(macA.String())) || !strings.Contains(string(out), "PERMANENT") {
		t.Errorf("neighbours of b: %s", out)
	}
	out, err = exec.Command("ip", "-n", ends[1].ns, "-6", "route", "show", "default").CombinedOutput()
	must(t, err)
	if !strings.Contains(string(out), "via 2001:db8::1 dev eth0") {
		t.Errorf("IPv6 default route of b: %s", out)
	}
	must(t, l.DelRoute(ends[1].ns, Route{Dst: mustPrefix("203.0.113.0/24"), Via: ends[0].v4.Addr(), Dev: "eth0"}))
	must(t, l.DelRoute(ends[1].ns, Route{Dst: mustPrefix("203.0.113.0/24"), Via: ends[0].v4.Addr(), Dev: "eth0"}))

	// ping over both families, as a program run in the namespace.
	if _, err := exec.LookPath("ping"); err == nil {
		for _, dst := range []string{"198.18.0.2", "2001:db8::2"} {
			if out, err := Command(ends[0].ns, "ping", "-c1", "-W2", dst).CombinedOutput(); err != nil {
				t.Errorf("ping %s from a: %v\n%s", dst, err, out)
			}
		}
	}
	// TCP and UDP with sockets opened in the namespaces.
	for _, fam := range []struct{ tcp, udp, dst string }{{"tcp4", "udp4", "198.18.0.2"}, {"tcp6", "udp6", "2001:db8::2"}} {
		ln, err := Listen(ends[1].ns, fam.tcp, net.JoinHostPort(fam.dst, "0"))
		must(t, err)
		go func() {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
			fmt.Fprintf(c, "from %s\n", c.RemoteAddr())
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c, err := DialContext(ctx, ends[0].ns, fam.tcp, ln.Addr().String())
		cancel()
		must(t, err)
		line, err := bufio.NewReader(c).ReadString('\n')
		c.Close()
		ln.Close()
		src := strings.TrimPrefix(ends[0].v4.Addr().String(), "")
		if fam.tcp == "tcp6" {
			src = ends[0].v6.Addr().String()
		}
		if err != nil || !strings.Contains(line, src) {
			t.Errorf("%s: read %q, %v; want the client's address %s", fam.tcp, line, err, src)
		}

		pc, err := ListenPacket(ends[1].ns, fam.udp, net.JoinHostPort(fam.dst, "0"))
		must(t, err)
		ctx, cancel = context.WithTimeout(context.Background(), 5*time.Second)
		u, err := DialContext(ctx, ends[0].ns, fam.udp, pc.LocalAddr().String())
		cancel()
		must(t, err)
		_, err = u.Write([]byte("hello"))
		must(t, err)
		pc.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 64)
		n, from, err := pc.ReadFrom(buf)
		if err != nil || string(buf[:n]) != "hello" {
			t.Errorf("%s: got %q from %v, %v", fam.udp, buf[:n], from, err)
		}
		u.Close()
		pc.Close()
	}
	// Every thread InNamespace used went back: goroutines on any thread
	// of the process see the root namespace's bridge.
	errs := make(chan error, 32)
	for range 32 {
		go func() {
			_, err := net.InterfaceByName(br)
			errs <- err
		}()
	}
	for range 32 {
		if err := <-errs; err != nil {
			t.Fatalf("a thread is not in the root namespace after InNamespace: %v", err)
		}
	}

	// A long-running process inside a namespace, which Cleanup kills.
	sleeper := Command(ends[0].ns, "sleep", "300")
	must(t, sleeper.Start())
	done := make(chan error, 1)
	go func() { done <- sleeper.Wait() }()

	removed, err := l.Cleanup()
	must(t, err)
	for _, want := range []string{"namespace " + ends[0].ns, "namespace " + ends[1].ns, "link " + br,
		fmt.Sprintf("process %d in namespace %s", sleeper.Process.Pid, ends[0].ns)} {
		if !containsString(removed, want) {
			t.Errorf("Cleanup removed %q, want %q among them", removed, want)
		}
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Error("the process in the namespace survived Cleanup")
	}
	assertNothingLeft(t, p)
	if removed, err := l.Cleanup(); err != nil || len(removed) != 0 {
		t.Errorf("second Cleanup = %q, %v; want nothing", removed, err)
	}
}

// TestRefusesAForeignName pre-creates an unmarked link under a name the
// lab needs: the lab refuses it, leaves it, and Cleanup does not delete it.
func TestRefusesAForeignName(t *testing.T) {
	l := requireRoot(t)
	foreign := l.Prefix() + "br"
	// No dummy driver on every kernel: a veth pair is the foreign link.
	if out, err := exec.Command("ip", "link", "add", foreign, "type", "veth", "peer", "name", foreign+"p").CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "link", "del", foreign).Run() })
	err := l.AddBridge(foreign)
	if err == nil || !strings.Contains(err.Error(), "link "+foreign+" exists and is not marked") {
		t.Fatalf("AddBridge over a foreign link = %v", err)
	}
	if err := l.AddVeth(l.Prefix()+"x", "", foreign+"p"); err == nil {
		t.Error("AddVeth with a foreign peer name: want a refusal")
	}
	if err := l.DelLink(foreign); err == nil {
		t.Error("DelLink of a foreign link: want a refusal")
	}
	ns := l.Prefix() + "-foreign"
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	if err := l.AddNamespace(ns); err == nil || !strings.Contains(err.Error(), "namespace "+ns+" exists and is not marked") {
		t.Errorf("AddNamespace over a foreign namespace = %v", err)
	}
	removed, err := l.Cleanup()
	if err != nil || len(removed) != 0 {
		t.Errorf("Cleanup = %q, %v; want nothing removed", removed, err)
	}
	if out, _ := exec.Command("ip", "-o", "link", "show", "dev", foreign).CombinedOutput(); !strings.Contains(string(out), foreign) {
		t.Errorf("the foreign link is gone: %s", out)
	}
	if out, _ := exec.Command("ip", "netns", "list").CombinedOutput(); !strings.Contains(string(out), ns) {
		t.Errorf("the foreign namespace is gone: %s", out)
	}
}

// TestCleanupAfterAKilledRun removes what another Lab value (a killed
// earlier run with the same prefix and state directory) left.
func TestCleanupAfterAKilledRun(t *testing.T) {
	l := requireRoot(t)
	p := l.Prefix()
	must(t, l.AddNamespace(p+"-k"))
	must(t, l.AddVeth(p+"k", p+"-k", "eth0"))
	must(t, l.AddVeth(p+"u", "", p+"v"))
	again, err := New(Options{Prefix: p, StateDir: filepath.Dir(l.dir)})
	must(t, err)
	removed, err := again.Cleanup()
	must(t, err)
	if !containsString(removed, "namespace "+p+"-k") || !containsString(removed, "link "+p+"u") {
		t.Errorf("removed %q", removed)
	}
	assertNothingLeft(t, p)
}

func assertNothingLeft(t *testing.T, prefix string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		links, _ := exec.Command("ip", "-o", "link").CombinedOutput()
		nss, _ := exec.Command("ip", "netns", "list").CombinedOutput()
		var left []string
		for _, line := range strings.Split(string(links), "\n") {
			if f := strings.Fields(line); len(f) > 1 && strings.HasPrefix(strings.TrimSuffix(strings.Split(f[1], "@")[0], ":"), prefix) {
				left = append(left, "link "+f[1])
			}
		}
		for _, ns := range parseNetnsList(nss) {
			if strings.HasPrefix(ns, prefix) {
				left = append(left, "namespace "+ns)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("left behind: %q", left)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}
