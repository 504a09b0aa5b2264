package vppnode

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/vppsvc/vppsvc/e2e/lab/host"
)

// bridgeNode is testNode's host (namespace A behind host0) with two pods
// behind the pods' bridge: B (10.99.1.5) and C (10.99.1.6), each routing
// everything through the gateway 169.254.1.1, a static neighbour with the
// BVI's MAC.
type bridgeNode struct {
	lab   *host.Lab
	nsA   string
	vethA string
	pods  []bridgePod
}

type bridgePod struct {
	ns, veth, name string
	ip             netip.Addr
}

var bridgeGateway = netip.MustParseAddr("169.254.1.1")

func newBridgeNode(t *testing.T, lab *host.Lab) bridgeNode {
	p := lab.Prefix()
	n := bridgeNode{lab: lab, nsA: p + "-a", vethA: p + "a", pods: []bridgePod{
		{ns: p + "-b", veth: p + "b", name: "pod-b", ip: netip.MustParseAddr("10.99.1.5")},
		{ns: p + "-c", veth: p + "c", name: "pod-c", ip: netip.MustParseAddr("10.99.1.6")},
	}}
	must(t, lab.AddNamespace(n.nsA))
	must(t, lab.Sysctl(n.nsA, "net.ipv4.ping_group_range", "0 2147483647"))
	must(t, lab.AddVeth(n.vethA, n.nsA, "eth0"))
	must(t, lab.AddAddress(n.nsA, "eth0", mustPrefix("10.99.0.2/24")))
	must(t, lab.AddRoute(n.nsA, host.Route{Dst: mustPrefix("10.99.1.0/24"), Via: netip.MustParseAddr("10.99.0.1"), Dev: "eth0"}))
	for _, pod := range n.pods {
		must(t, lab.AddNamespace(pod.ns))
		must(t, lab.Sysctl(pod.ns, "net.ipv4.ping_group_range", "0 2147483647"))
		must(t, lab.AddVeth(pod.veth, pod.ns, "eth0"))
		must(t, lab.AddAddress(pod.ns, "eth0", netip.PrefixFrom(pod.ip, 32)))
		must(t, lab.AddNeighbour(pod.ns, "eth0", bridgeGateway, bviMAC))
		must(t, lab.AddRoute(pod.ns, host.Route{Dst: mustPrefix("0.0.0.0/0"), Via: bridgeGateway, Dev: "eth0", OnLink: true}))
	}
	return n
}

// plan is what a node agent programs for bridgeNode: host0, the bridge
// 10 with its BVI pods0 unnumbered to host0, each pod's interface a
// member with its route and neighbour through the BVI.
func (n bridgeNode) plan(ctx context.Context, c *Client) error {
	if _, err := c.EnsureAfPacket(ctx, AfPacket{HostIf: n.vethA, Name: "host0"}); err != nil {
		return err
	}
	if err := c.AddAddress(ctx, "host0", mustPrefix("10.99.0.1/24")); err != nil {
		return err
	}
	macA, err := n.lab.MAC(n.nsA, "eth0")
	if err != nil {
		return err
	}
	if err := c.AddNeighbour(ctx, "host0", netip.MustParseAddr("10.99.0.2"), macA); err != nil {
		return err
	}
	if _, err := c.EnsureBridge(ctx, 10, "pods0", bviMAC); err != nil {
		return err
	}
	if err := c.SetUnnumbered(ctx, "pods0", "host0"); err != nil {
		return err
	}
	if err := c.EnableIP6(ctx, "pods0"); err != nil {
		return err
	}
	for _, pod := range n.pods {
		if err := n.wire(ctx, c, pod); err != nil {
			return err
		}
	}
	return nil
}

func (n bridgeNode) wire(ctx context.Context, c *Client, pod bridgePod) error {
	mac, err := n.lab.MAC(pod.ns, "eth0")
	if err != nil {
		return err
	}
	if _, err := c.EnsureAfPacket(ctx, AfPacket{HostIf: pod.veth, Name: pod.name}); err != nil {
		return err
	}
	if err := c.AddBridgeMember(ctx, 10, pod.name, mac); err != nil {
		return err
	}
	if err := c.AddRoute(ctx, Route{Dst: netip.PrefixFrom(pod.ip, 32), Via: pod.ip, Dev: "pods0"}); err != nil {
		return err
	}
	return c.AddNeighbour(ctx, "pods0", pod.ip, mac)
}

// ping reports whether one ping from ns to dst is answered within 2 s.
func ping(ns string, dst netip.Addr) ([]byte, error) {
	return host.Command(ns, "ping", "-c1", "-W2", dst.String()).CombinedOutput()
}

func TestBridgeOnARealVPP(t *testing.T) {
	v, lab := requireVPP(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	must(t, v.Start(ctx))
	n := newBridgeNode(t, lab)
	c, err := Connect(ctx, v.APISocket())
	must(t, err)
	defer c.Close()
	must(t, n.plan(ctx, c))
	b, cPod := n.pods[0], n.pods[1]

	t.Run("the host reaches both pods, the pods each other and VPP, through the BVI", func(t *testing.T) {
		for _, p := range []struct {
			ns  string
			dst netip.Addr
		}{{n.nsA, b.ip}, {n.nsA, cPod.ip}, {b.ns, cPod.ip}, {cPod.ns, b.ip}, {b.ns, netip.MustParseAddr("10.99.0.1")}, {b.ns, netip.MustParseAddr("10.99.0.2")}} {
			if out, err := ping(p.ns, p.dst); err != nil {
				t.Errorf("ping %s from %s: %v\n%s", p.dst, p.ns, err, out)
			}
		}
	})

	t.Run("a pod cannot reach another at L2 (split horizon)", func(t *testing.T) {
		macC, err := lab.MAC(cPod.ns, "eth0")
		must(t, err)
		// B sends to C's MAC directly: on-link route and C's MAC as a
		// static neighbour. The bridge drops what enters and would leave
		// by members of one split-horizon group.
		direct := host.Route{Dst: netip.PrefixFrom(cPod.ip, 32), Dev: "eth0"}
		must(t, lab.AddNeighbour(b.ns, "eth0", cPod.ip, macC))
		must(t, lab.AddRoute(b.ns, direct))
		if out, err := ping(b.ns, cPod.ip); err == nil {
			t.Errorf("B reached C at L2, past the BVI:\n%s", out)
		}
		must(t, lab.DelRoute(b.ns, direct))
		if out, err := ping(b.ns, cPod.ip); err != nil {
			t.Errorf("B no longer reaches C through the BVI: %v\n%s", err, out)
		}
	})

	t.Run("a restarted node agent adopts everything", func(t *testing.T) {
		c2, err := Connect(ctx, v.APISocket())
		must(t, err)
		defer c2.Close()
		must(t, n.plan(ctx, c2))
		if ch := c2.Changes(); len(ch) != 0 {
			t.Errorf("second run of the plan sent changes: %v", ch)
		}
	})

	t.Run("a pod's teardown leaves the others working", func(t *testing.T) {
		c2, err := Connect(ctx, v.APISocket())
		must(t, err)
		defer c2.Close()
		must(t, c2.DelRoute(ctx, Route{Dst: netip.PrefixFrom(cPod.ip, 32), Via: cPod.ip, Dev: "pods0"}))
		must(t, c2.DelNeighbour(ctx, "pods0", cPod.ip))
		must(t, c2.DelBridgeMember(ctx, 10, cPod.name))
		must(t, c2.DeleteInterface(ctx, cPod.name))
		fib, err := c2.l2FIB(ctx, 10)
		must(t, err)
		macC, err := lab.MAC(cPod.ns, "eth0")
		must(t, err)
		if _, ok := fib[[6]byte(macC)]; ok {
			t.Errorf("C's L2 FIB entry stayed: %v", fib)
		}
		if out, err := ping(n.nsA, b.ip); err != nil {
			t.Errorf("ping B from A after C's teardown: %v\n%s", err, out)
		}
		if _, err := ping(n.nsA, cPod.ip); err == nil {
			t.Error("C still answers after its teardown")
		}
		c3, err := Connect(ctx, v.APISocket())
		must(t, err)
		defer c3.Close()
		must(t, c3.DelBridgeMember(ctx, 10, cPod.name))
		must(t, c3.DelNeighbour(ctx, "pods0", cPod.ip))
		if ch := c3.Changes(); len(ch) != 0 {
			t.Errorf("a second teardown sent %v", ch)
		}
	})
}
