package vppnode

import (
	"context"
	"net"
	"net/netip"
	"reflect"
	"testing"

	"go.fd.io/govpp/binapi/ethernet_types"
)

var bviMAC = net.HardwareAddr{0x02, 0xfe, 0, 0, 0, 0x0b}

// bridgePlan is a node agent's bridged pod: host0 with an address, the
// pods' bridge 10 with its BVI pods0 unnumbered to host0 and IPv6 on, the
// pod's interface a member with its MAC's L2 FIB entry, the pod's host
// route and static neighbour through the BVI.
func bridgePlan(ctx context.Context, c *Client) error {
	podIP := netip.MustParseAddr("10.99.1.5")
	for _, step := range []func() error{
		func() error { _, err := c.EnsureAfPacket(ctx, AfPacket{HostIf: "vslh", Name: "host0"}); return err },
		func() error { return c.AddAddress(ctx, "host0", netip.MustParsePrefix("10.99.0.1/24")) },
		func() error { _, err := c.EnsureBridge(ctx, 10, "pods0", bviMAC); return err },
		func() error { return c.SetUnnumbered(ctx, "pods0", "host0") },
		func() error { return c.EnableIP6(ctx, "pods0") },
		func() error {
			_, err := c.EnsureAfPacket(ctx, AfPacket{HostIf: "vslp", Name: "tap-ns-pod"})
			return err
		},
		func() error { return c.AddBridgeMember(ctx, 10, "tap-ns-pod", podMAC) },
		func() error {
			return c.AddRoute(ctx, Route{Dst: netip.PrefixFrom(podIP, 32), Via: podIP, Dev: "pods0"})
		},
		func() error { return c.AddNeighbour(ctx, "pods0", podIP, podMAC) },
	} {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// bridgeTeardown is the pod's teardown: route, neighbour, L2 FIB entry and
// membership, interface.
func bridgeTeardown(ctx context.Context, c *Client) error {
	podIP := netip.MustParseAddr("10.99.1.5")
	for _, step := range []func() error{
		func() error {
			return c.DelRoute(ctx, Route{Dst: netip.PrefixFrom(podIP, 32), Via: podIP, Dev: "pods0"})
		},
		func() error { return c.DelNeighbour(ctx, "pods0", podIP) },
		func() error { return c.DelBridgeMember(ctx, 10, "tap-ns-pod") },
		func() error { return c.DeleteInterface(ctx, "tap-ns-pod") },
	} {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

func TestBridgeOnAFakeVPP(t *testing.T) {
	ctx := context.Background()
	f := newFakeAPI("25.10.0-release")
	links := map[string]int{"vslh": 7, "vslp": 8}
	c := fakeNode(t, f, links)
	if err := bridgePlan(ctx, c); err != nil {
		t.Fatal(err)
	}
	first := map[string]int{
		"af_packet_create_v3": 2, "sw_interface_set_interface_name": 3, "sw_interface_tag_add_del": 3,
		"sw_interface_set_flags": 3, "sw_interface_add_del_address": 1,
		"bridge_domain_add_del_v2": 1, "create_loopback": 1, "sw_interface_set_l2_bridge": 2, "l2fib_add_del": 1,
		"sw_interface_set_unnumbered": 1, "sw_interface_ip6_enable_disable": 1,
		"ip_route_add_del": 1, "ip_neighbor_add_del": 1,
	}
	if got := f.changes(); !reflect.DeepEqual(got, first) {
		t.Errorf("first run sent %v, want %v", got, first)
	}
	bvi, err := c.Interface(ctx, "pods0")
	if err != nil || !bvi.Up || bvi.Tag != Tag || bvi.MAC.String() != bviMAC.String() {
		t.Errorf("pods0 = %+v, %v", bvi, err)
	}
	pod, _ := c.Interface(ctx, "tap-ns-pod")
	f.mu.Lock()
	bd := f.bds[10]
	if bd == nil || bd.bvi != bvi.Index || !reflect.DeepEqual(bd.members, []uint32{bvi.Index, pod.Index}) ||
		bd.fib[ethernet_types.MacAddress(podMAC)] != (fakeL2Entry{sw: pod.Index, static: true}) || bd.shg[bvi.Index] != 0 || bd.shg[pod.Index] != MemberGroup {
		t.Errorf("bridge 10 = %+v, want BVI %d and member %d (split-horizon group %d) with a static entry for %s", bd, bvi.Index, pod.Index, MemberGroup, podMAC)
	}
	f.mu.Unlock()

	t.Run("a restarted node agent sends nothing", func(t *testing.T) {
		f.resetRequests()
		if err := bridgePlan(ctx, fakeNode(t, f, links)); err != nil {
			t.Fatal(err)
		}
		if got := f.changes(); len(got) != 0 {
			t.Errorf("second run sent %v", got)
		}
	})

	t.Run("a member of another split-horizon group is put back in the pods'", func(t *testing.T) {
		f.mu.Lock()
		f.bds[10].shg[pod.Index] = 0
		f.mu.Unlock()
		f.resetRequests()
		if err := bridgePlan(ctx, fakeNode(t, f, links)); err != nil {
			t.Fatal(err)
		}
		if got, want := f.changes(), map[string]int{"sw_interface_set_l2_bridge": 1}; !reflect.DeepEqual(got, want) {
			t.Errorf("sent %v, want %v", got, want)
		}
	})

	t.Run("a teardown leaves the bridge its BVI alone, twice", func(t *testing.T) {
		c := fakeNode(t, f, links) // the fake answers its last client only
		f.resetRequests()
		if err := bridgeTeardown(ctx, c); err != nil {
			t.Fatal(err)
		}
		want := map[string]int{"ip_route_add_del": 1, "ip_neighbor_add_del": 1, "l2fib_add_del": 1, "sw_interface_set_l2_bridge": 1,
			"ip_neighbor_flush": 2, "af_packet_delete": 1}
		if got := f.changes(); !reflect.DeepEqual(got, want) {
			t.Errorf("teardown sent %v, want %v", got, want)
		}
		f.mu.Lock()
		if len(f.nbrs) != 0 || len(f.routes) != 0 || len(bd.fib) != 0 || !reflect.DeepEqual(bd.members, []uint32{bvi.Index}) {
			t.Errorf("after the teardown: neighbours %v, routes %v, bridge %+v", f.nbrs, f.routes, bd)
		}
		f.mu.Unlock()
		f.resetRequests()
		if err := bridgeTeardown(ctx, c); err != nil {
			t.Fatal(err)
		}
		if got := f.changes(); len(got) != 0 {
			t.Errorf("second teardown sent %v", got)
		}
	})

	t.Run("refusals", func(t *testing.T) {
		c := fakeNode(t, f, links)
		if _, err := c.EnsureBridge(ctx, 10, "host0", bviMAC); err == nil {
			t.Error("an af_packet interface taken as the BVI")
		}
		if _, err := c.EnsureBridge(ctx, 0, "pods1", bviMAC); err == nil {
			t.Error("bridge domain 0 accepted")
		}
		if err := c.AddBridgeMember(ctx, 11, "host0", podMAC); err == nil {
			t.Error("a member of a bridge VPP has not")
		}
	})
}
