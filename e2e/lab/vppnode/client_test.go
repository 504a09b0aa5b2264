package vppnode

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"go.fd.io/govpp/binapi/af_packet"
)

// fakeNode connects a Client to a fake VPP whose host links have the
// ifindexes of links.
func fakeNode(t *testing.T, f *fakeAPI, links map[string]int) *Client {
	t.Helper()
	c, err := connect(context.Background(), f, "fake")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	c.hostIfIndex = func(name string) (int, error) {
		if i, ok := links[name]; ok {
			return i, nil
		}
		return 0, fmt.Errorf("no link %s", name)
	}
	return c
}

var podMAC = net.HardwareAddr{0x0a, 0, 0, 0, 0, 5}

// fakePlan is a node agent's plan: a host interface with addresses, a pod
// interface unnumbered to it with IPv6, a /32 route and a neighbour.
func fakePlan(ctx context.Context, c *Client) error {
	if _, err := c.EnsureAfPacket(ctx, AfPacket{HostIf: "vslh", Name: "host0"}); err != nil {
		return err
	}
	if _, err := c.EnsureAfPacket(ctx, AfPacket{HostIf: "vslp", Name: "tap-ns-pod"}); err != nil {
		return err
	}
	for _, a := range []string{"10.99.0.1/24", "fd99::1/64"} {
		if err := c.AddAddress(ctx, "host0", netip.MustParsePrefix(a)); err != nil {
			return err
		}
	}
	for _, step := range []func() error{
		func() error { return c.EnableIP6(ctx, "host0") },
		func() error { return c.SetUnnumbered(ctx, "tap-ns-pod", "host0") },
		func() error { return c.EnableIP6(ctx, "tap-ns-pod") },
		func() error {
			return c.AddRoute(ctx, Route{Dst: netip.MustParsePrefix("10.99.1.5/32"), Dev: "tap-ns-pod"})
		},
		func() error {
			return c.AddRoute(ctx, Route{Dst: netip.MustParsePrefix("10.98.0.0/24"), Via: netip.MustParseAddr("10.99.0.2"), Dev: "host0"})
		},
		func() error { return c.AddNeighbour(ctx, "tap-ns-pod", netip.MustParseAddr("10.99.1.5"), podMAC) },
	} {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

func TestPlanOnAFakeVPP(t *testing.T) {
	ctx := context.Background()
	f := newFakeAPI("25.10.0-release")
	links := map[string]int{"vslh": 7, "vslp": 8}
	c := fakeNode(t, f, links)
	if err := fakePlan(ctx, c); err != nil {
		t.Fatal(err)
	}
	first := map[string]int{
		"af_packet_create_v3": 2, "sw_interface_set_interface_name": 2, "sw_interface_tag_add_del": 2,
		"sw_interface_set_flags": 2, "sw_interface_add_del_address": 2, "sw_interface_set_unnumbered": 1,
		"sw_interface_ip6_enable_disable": 1, // the pod's; host0's IPv6 address enabled it
		"ip_route_add_del":                2, "ip_neighbor_add_del": 1,
	}
	if got := f.changes(); !reflect.DeepEqual(got, first) {
		t.Errorf("first run sent %v, want %v", got, first)
	}
	if got := c.Changes(); !reflect.DeepEqual(got, first) {
		t.Errorf("Changes() = %v, want %v", got, first)
	}
	h, err := c.Interface(ctx, "host0")
	if err != nil || h.HostIf != "vslh" || !h.Up || h.Tag != afPacketTag(7, DefaultIO) || h.MAC.String() != HostMAC("vslh").String() {
		t.Errorf("host0 = %+v, %v", h, err)
	}

	t.Run("a restarted node agent sends nothing", func(t *testing.T) {
		f.resetRequests()
		c2 := fakeNode(t, f, links)
		if err := fakePlan(ctx, c2); err != nil {
			t.Fatal(err)
		}
		if got := f.changes(); len(got) != 0 {
			t.Errorf("second run sent %v", got)
		}
	})

	t.Run("an interface renamed by hand is renamed back, not re-created", func(t *testing.T) {
		f.mu.Lock()
		for _, i := range f.ifs {
			if i.name == "host0" {
				i.name = "host-vslh"
			}
		}
		f.mu.Unlock()
		f.resetRequests()
		if err := fakePlan(ctx, fakeNode(t, f, links)); err != nil {
			t.Fatal(err)
		}
		if got, want := f.changes(), map[string]int{"sw_interface_set_interface_name": 1}; !reflect.DeepEqual(got, want) {
			t.Errorf("sent %v, want %v", got, want)
		}
	})

	t.Run("a veth re-created under its name gets a new interface", func(t *testing.T) {
		f.resetRequests()
		c3 := fakeNode(t, f, map[string]int{"vslh": 7, "vslp": 9})
		if err := fakePlan(ctx, c3); err != nil {
			t.Fatal(err)
		}
		want := map[string]int{
			"ip_neighbor_flush": 2, "af_packet_delete": 1, // the stale one, neighbours first
			"af_packet_create_v3": 1, "sw_interface_set_interface_name": 1, "sw_interface_tag_add_del": 1,
			"sw_interface_set_flags": 1, "sw_interface_set_unnumbered": 1, "sw_interface_ip6_enable_disable": 1,
			"ip_route_add_del":    2, // the pod's route deleted with the stale interface, added again
			"ip_neighbor_add_del": 1,
		}
		if got := f.changes(); !reflect.DeepEqual(got, want) {
			t.Errorf("sent %v, want %v", got, want)
		}
	})
}

func TestEnsureAfPacketRefuses(t *testing.T) {
	ctx := context.Background()
	f := newFakeAPI("25.10.0-release")
	c := fakeNode(t, f, map[string]int{"vslh": 7, "vslx": 8})
	if _, err := c.EnsureAfPacket(ctx, AfPacket{HostIf: "vslh", Name: "host0"}); err != nil {
		t.Fatal(err)
	}
	f.resetRequests()
	for desc, a := range map[string]AfPacket{
		"a name on another veth": {HostIf: "vslx", Name: "host0"},
		"a missing veth":         {HostIf: "vslgone", Name: "pod9"},
		"no name":                {HostIf: "vslx"},
		"a 7-byte MAC":           {HostIf: "vslx", Name: "pod9", MAC: net.HardwareAddr{1, 2, 3, 4, 5, 6, 7}},
	} {
		if _, err := c.EnsureAfPacket(ctx, a); err == nil {
			t.Errorf("%s: EnsureAfPacket(%+v) succeeded", desc, a)
		}
	}
	if got := f.changes(); len(got) != 0 {
		t.Errorf("refusals sent %v", got)
	}
}

func TestEnsureAfPacketWithAGivenMAC(t *testing.T) {
	ctx := context.Background()
	c := fakeNode(t, newFakeAPI("25.10.0-release"), map[string]int{"vslh": 7})
	mac := net.HardwareAddr{0x02, 0xaa, 0, 0, 0, 1}
	i, err := c.EnsureAfPacket(ctx, AfPacket{HostIf: "vslh", Name: "uplink0", MAC: mac})
	if err != nil || i.MAC.String() != mac.String() {
		t.Errorf("EnsureAfPacket = %+v, %v; want MAC %s", i, err, mac)
	}
}

// TestEnsureAfPacketIO checks that each I/O setting reaches VPP as asked:
// the ring format and depths at creation, the RX queue's mode after it,
// and that an interface made with another setting is made anew, while
// one made with the same is left alone.
func TestEnsureAfPacketIO(t *testing.T) {
	ctx := context.Background()
	f := newFakeAPI("25.10.0-release")
	c := fakeNode(t, f, map[string]int{"vslp": 8})
	creates := func() int { return c.Changes()["af_packet_create_v3"] }
	prev := IO{}
	for _, io := range []IO{IOv3, IOv2, IOv2Polling, IOv2Polling, IOv2} {
		before := creates()
		i, err := c.EnsureAfPacket(ctx, AfPacket{HostIf: "vslp", Name: "tap-ns-pod", IO: io})
		if err != nil {
			t.Fatal(err)
		}
		f.mu.Lock()
		got := *f.ifs[i.Index]
		f.mu.Unlock()
		req := got.create
		if v2 := req.Flags&af_packet.AF_PACKET_API_FLAG_VERSION_2 != 0; v2 != io.V2 {
			t.Errorf("%s: VPP was asked for TPACKET_V2 %v", io.Name, v2)
		}
		if req.TxFramesPerBlock != io.Frames || io.V2 && (req.RxFramesPerBlock != io.Frames || req.RxFrameSize != frameSize) {
			t.Errorf("%s: rings asked for: TX %d frames, RX %d frames of %d B", io.Name, req.TxFramesPerBlock, req.RxFramesPerBlock, req.RxFrameSize)
		}
		if req.Flags&af_packet.AF_PACKET_API_FLAG_CKSUM_GSO == 0 {
			t.Errorf("%s: no checksum offload: VPP would forward veths' TCP segments with unfilled checksums", io.Name)
		}
		if got.polling != io.Polling {
			t.Errorf("%s: RX queue polling %v", io.Name, got.polling)
		}
		if i.Tag != afPacketTag(8, io) || !strings.HasSuffix(i.Tag, io.rings()) {
			t.Errorf("%s: tag %q", io.Name, i.Tag)
		}
		// Polling is a mode set in place; ring format and depth are not.
		remade := io.V2 != prev.V2 || io.Frames != prev.Frames
		if n := creates() - before; n != 1 && remade || n != 0 && !remade {
			t.Errorf("%s after %s: %d creations", io.Name, prev.Name, n)
		}
		prev = io
	}
	before := c.Changes()
	if _, err := c.EnsureAfPacket(ctx, AfPacket{HostIf: "vslp", Name: "tap-ns-pod", IO: IOv2}); err != nil {
		t.Fatal(err)
	}
	if after := c.Changes(); !maps.Equal(after, before) {
		t.Errorf("the same I/O setting again sent changes: %v, then %v", before, after)
	}
}

func TestRoutesAndNeighboursOnAFakeVPP(t *testing.T) {
	ctx := context.Background()
	f := newFakeAPI("25.10.0-release")
	c := fakeNode(t, f, map[string]int{"vslh": 7})
	if _, err := c.EnsureAfPacket(ctx, AfPacket{HostIf: "vslh", Name: "host0"}); err != nil {
		t.Fatal(err)
	}
	r := Route{Dst: netip.MustParsePrefix("10.98.0.0/24"), Via: netip.MustParseAddr("10.99.0.2"), Dev: "host0"}
	for _, step := range []struct {
		desc string
		do   func() error
		want int // ip_route_add_del or ip_neighbor_add_del sent
		msg  string
	}{
		{"a missing route deleted", func() error { return c.DelRoute(ctx, r) }, 0, "ip_route_add_del"},
		{"added", func() error { return c.AddRoute(ctx, r) }, 1, "ip_route_add_del"},
		{"added again", func() error { return c.AddRoute(ctx, r) }, 0, "ip_route_add_del"},
		{"another next hop replaces it", func() error {
			return c.AddRoute(ctx, Route{Dst: r.Dst, Via: netip.MustParseAddr("10.99.0.3"), Dev: "host0"})
		}, 1, "ip_route_add_del"},
		{"deleting the old one is a no-op", func() error { return c.DelRoute(ctx, r) }, 0, "ip_route_add_del"},
		{"a neighbour", func() error { return c.AddNeighbour(ctx, "host0", r.Via, podMAC) }, 1, "ip_neighbor_add_del"},
		{"the same neighbour", func() error { return c.AddNeighbour(ctx, "host0", r.Via, podMAC) }, 0, "ip_neighbor_add_del"},
		{"a new MAC for it", func() error {
			return c.AddNeighbour(ctx, "host0", r.Via, net.HardwareAddr{0x0a, 0, 0, 0, 0, 6})
		}, 1, "ip_neighbor_add_del"},
	} {
		f.resetRequests()
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.desc, err)
		}
		if got := f.changes()[step.msg]; got != step.want {
			t.Errorf("%s: sent %d %s, want %d", step.desc, got, step.msg, step.want)
		}
	}
	for desc, err := range map[string]error{
		"route on an unknown interface": c.AddRoute(ctx, Route{Dst: r.Dst, Dev: "nope"}),
		"route of mixed families":       c.AddRoute(ctx, Route{Dst: r.Dst, Via: netip.MustParseAddr("fd99::2"), Dev: "host0"}),
		"neighbour without MAC":         c.AddNeighbour(ctx, "host0", r.Via, nil),
		"address on an unknown name":    c.AddAddress(ctx, "nope", netip.MustParsePrefix("10.0.0.1/24")),
		"unnumbered to an unknown name": c.SetUnnumbered(ctx, "host0", "nope"),
	} {
		if err == nil {
			t.Errorf("%s: no error", desc)
		}
	}
	if err := c.DeleteInterface(ctx, "host0"); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteInterface(ctx, "host0"); err != nil {
		t.Errorf("deleting a missing interface: %v", err)
	}
	if ifs, err := c.Interfaces(ctx); err != nil || len(ifs) != 0 {
		t.Errorf("interfaces after delete: %v, %v", ifs, err)
	}
}

func TestConnectRefusesAnotherVersion(t *testing.T) {
	_, err := connect(context.Background(), newFakeAPI("25.06.0-release"), "/run/x/api.sock")
	if err == nil || !errors.Is(err, errWrongVersion) || !strings.Contains(err.Error(), `the VPP at /run/x/api.sock is VPP "25.06.0-release"; the lab needs VPP 25.10`) {
		t.Errorf("connect to VPP 25.06 = %v", err)
	}
}

func TestHostMAC(t *testing.T) {
	a, b := HostMAC("vsl-n1-pod-a"), HostMAC("vsl-n1-pod-b")
	if a.String() != HostMAC("vsl-n1-pod-a").String() {
		t.Error("HostMAC is not stable")
	}
	if a.String() == b.String() {
		t.Errorf("HostMAC of two veths: both %s", a)
	}
	if a[0] != 0x02 || a[1] != 0xfe {
		t.Errorf("HostMAC = %s: want a locally administered 02:fe:... unicast address", a)
	}
}

// TestLogCalls checks the call log: one well-formed line per request-reply
// call, so every change the client counts is there, timed.
func TestLogCalls(t *testing.T) {
	f := newFakeAPI("25.10.0-release")
	c := fakeNode(t, f, map[string]int{"vslh": 7, "vslp": 8})
	var log strings.Builder
	c.LogCalls(&log)
	if err := fakePlan(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	logged := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(log.String()), "\n") {
		var begin, end int64
		var msg string
		var ok bool
		if n, err := fmt.Sscanf(line, "%d %d %s %t", &begin, &end, &msg, &ok); n != 4 || err != nil || begin > end || !ok {
			t.Errorf("line %q: %d fields, %v", line, n, err)
			continue
		}
		logged[msg]++
	}
	for msg, n := range c.Changes() {
		if logged[msg] != n {
			t.Errorf("%s: %d calls logged, %d sent", msg, logged[msg], n)
		}
	}
	if len(c.Changes()) == 0 {
		t.Error("the plan changed nothing")
	}
}
