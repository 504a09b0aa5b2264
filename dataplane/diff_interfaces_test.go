package dataplane_test

// Differential cases of IP enablement: VPP drops what arrives on an
// interface where the packet's family is not enabled (no address of that
// family, not unnumbered, and for IPv6 no explicit enable).

import (
	"testing"

	"go.fd.io/govpp/binapi/ip"
)

// ifTopology is an uplink with both families, tap3 with no address and
// routes to a pod behind tap3 in both families.
func ifTopology(d *diffCase) {
	d.Must(d.Node.AddInterface("uplink0", pfx("192.168.16.1/24"), pfx("fd00:16::1/64")))
	d.Must(d.Node.AddInterface("tap3"))
	d.Must(d.Node.AddRoute(pfx("10.1.1.3/32"), "tap3"))
	d.Must(d.Node.AddRoute(pfx("fd00:1:1::3/128"), "tap3"))
	d.Must(d.Node.AddRoute(pfx("0.0.0.0/0"), "uplink0"))
	d.Must(d.Node.AddRoute(pfx("::/0"), "uplink0"))
}

func TestDiffInterfaces(t *testing.T) {
	runDifferential(t, "interfaces/not-enabled-then-unnumbered", func(d *diffCase) {
		ifTopology(d)
		d.Trace("v4 from tap3, no IP", tcp("tap3", "10.1.1.3:40000", "8.8.8.8:443"))
		d.Trace("v6 from tap3, no IP", tcp("tap3", "[fd00:1:1::3]:40000", "[2001:db8::8]:443"))
		d.Trace("v4 to tap3 (output needs no IP)", tcp("uplink0", "8.8.8.8:443", "10.1.1.3:40001"))
		d.Must(d.Node.SetUnnumbered("tap3", "uplink0"))
		d.Trace("v4 from tap3, unnumbered", tcp("tap3", "10.1.1.3:40002", "8.8.8.8:443"))
		d.Trace("v6 from tap3, unnumbered", tcp("tap3", "[fd00:1:1::3]:40002", "[2001:db8::8]:443"))
	})
	runDifferential(t, "interfaces/ip6-enable-only", func(d *diffCase) {
		ifTopology(d)
		c := ip.NewServiceClient(d.Conn)
		_, err := c.SwInterfaceIP6EnableDisable(d.Ctx, &ip.SwInterfaceIP6EnableDisable{SwIfIndex: d.Sw("tap3"), Enable: true})
		d.Retval("ip6 enable tap3", err)
		d.Trace("v6 from tap3, ip6 enabled", tcp("tap3", "[fd00:1:1::3]:40000", "[2001:db8::8]:443"))
		d.Trace("v4 from tap3, still no IPv4", tcp("tap3", "10.1.1.3:40000", "8.8.8.8:443"))
		_, err = c.SwInterfaceIP6EnableDisable(d.Ctx, &ip.SwInterfaceIP6EnableDisable{SwIfIndex: d.Sw("tap3"), Enable: true})
		d.Retval("ip6 enable tap3 again", err)
		_, err = c.SwInterfaceIP6EnableDisable(d.Ctx, &ip.SwInterfaceIP6EnableDisable{SwIfIndex: d.Sw("tap3"), Enable: false})
		d.Retval("ip6 disable tap3", err)
		d.Trace("v6 from tap3, disabled once of twice", tcp("tap3", "[fd00:1:1::3]:40001", "[2001:db8::8]:443"))
		_, err = c.SwInterfaceIP6EnableDisable(d.Ctx, &ip.SwInterfaceIP6EnableDisable{SwIfIndex: d.Sw("tap3"), Enable: false})
		d.Retval("ip6 disable tap3 again", err)
		d.Trace("v6 from tap3, disabled", tcp("tap3", "[fd00:1:1::3]:40002", "[2001:db8::8]:443"))
		_, err = c.SwInterfaceIP6EnableDisable(d.Ctx, &ip.SwInterfaceIP6EnableDisable{SwIfIndex: d.Sw("tap3"), Enable: false})
		d.Retval("ip6 disable tap3 a third time", err)
	})
}
