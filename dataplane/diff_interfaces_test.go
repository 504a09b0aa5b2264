package dataplane_test

// Differential cases of IP enablement: VPP drops what arrives on an
// interface where the packet's family is not enabled (no address of that
// family, not unnumbered, and for IPv6 no explicit enable).

import (
	"testing"

	"go.fd.io/govpp/binapi/feature"
	interfaces "go.fd.io/govpp/binapi/interface"
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

func TestDiffUnnumbered(t *testing.T) {
	runDifferential(t, "interfaces/unnumbered", func(d *diffCase) {
		ifTopology(d)
		d.Must(d.Node.AddInterface("host0", pfx("172.30.1.1/24")))
		c := interfaces.NewServiceClient(d.Conn)
		unnum := func(label, borrower, donor string, add bool) {
			req := &interfaces.SwInterfaceSetUnnumbered{UnnumberedSwIfIndex: noIf - 1, SwIfIndex: noIf - 1, IsAdd: add}
			if borrower != "" {
				req.UnnumberedSwIfIndex = d.Sw(borrower)
			}
			if donor != "" {
				req.SwIfIndex = d.Sw(donor)
			}
			_, err := c.SwInterfaceSetUnnumbered(d.Ctx, req)
			d.Retval(label, err)
		}
		unnum("tap3 borrows from host0 (IPv4 only)", "tap3", "host0", true)
		d.Trace("v4 from tap3", tcp("tap3", "10.1.1.3:40000", "8.8.8.8:443"))
		d.Trace("v6 from tap3: the donor has no IPv6, IPv6 is enabled all the same", tcp("tap3", "[fd00:1:1::3]:40000", "[2001:db8::8]:443"))
		for _, name := range []string{"tap3", "host0"} {
			Dump[*ip.IPAddressDetails](d, name+"'s IPv4 addresses", &ip.IPAddressDump{SwIfIndex: d.Sw(name)})
		}
		unnum("tap3 borrows from uplink0 instead", "tap3", "uplink0", true)
		unnum("tap3 no longer unnumbered", "tap3", "uplink0", false)
		d.Trace("v4 from tap3 after", tcp("tap3", "10.1.1.3:40001", "8.8.8.8:443"))
		unnum("tap3 no longer unnumbered, again", "tap3", "host0", false)
		unnum("unknown borrower", "", "host0", true)
		unnum("unknown donor", "tap3", "", true)
		unnum("unknown donor, removing", "tap3", "", false)
		// Borrower and donor must share their tables.
		d.Must(d.Node.AddTable(10, false))
		d.Must(d.Node.AddInterface("loop10"))
		d.Must(d.Node.SetTable("loop10", 10, false))
		d.Must(d.Node.AddAddress("loop10", pfx("10.10.255.1/32")))
		unnum("tap3 (table 0) borrows from loop10 (table 10)", "tap3", "loop10", true)
		d.Must(d.Node.SetTable("tap3", 10, false))
		unnum("tap3 in table 10 borrows from loop10", "tap3", "loop10", true)
		_, err := c.SwInterfaceSetTable(d.Ctx, &interfaces.SwInterfaceSetTable{SwIfIndex: d.Sw("tap3"), VrfID: 0})
		d.Retval("unnumbered tap3 back to table 0", err)
	})
}

// feature_is_enabled answers true for any feature of an arc whose
// per-interface config vector does not reach the interface: on ip4-output of
// a fresh interface, even a feature nobody enabled. The unicast arcs answer
// truly (VPP enables ip4/ip6-not-enabled there on every interface). A feature
// the driver never enables (the canary) tells the lie from the truth.
func TestDiffFeatureIsEnabled(t *testing.T) {
	runDifferential(t, "interfaces/feature-is-enabled", func(d *diffCase) {
		ifTopology(d)
		fc := feature.NewServiceClient(d.Conn)
		isEnabled := func(label, ifName, arc, name string) bool {
			r, err := fc.FeatureIsEnabled(d.Ctx, &feature.FeatureIsEnabled{SwIfIndex: d.Sw(ifName), ArcName: arc, FeatureName: name})
			d.Retval(label, err)
			return err == nil && r.IsEnabled
		}
		ask := func(label, ifName, arc, name string) {
			d.Record(label+": is_enabled", isEnabled(label, ifName, arc, name))
		}
		set := func(label, ifName, arc, name string, on bool) {
			_, err := fc.FeatureEnableDisable(d.Ctx, &feature.FeatureEnableDisable{SwIfIndex: d.Sw(ifName), ArcName: arc, FeatureName: name, Enable: on})
			d.Retval(label, err)
		}
		ask("tap3 ip4-unicast cnat-input-ip4, never enabled", "tap3", "ip4-unicast", "cnat-input-ip4")
		// Whether the ip4-output vector reaches tap3 depends on what the
		// VPP saw before (it never shrinks): on a fresh VPP both answer true.
		// What holds always is that the canary answers as the feature does.
		never := isEnabled("tap3 ip4-output cnat-output-ip4, never enabled", "tap3", "ip4-output", "cnat-output-ip4")
		canary := isEnabled("tap3 ip4-output canary", "tap3", "ip4-output", "ip4-source-and-port-range-check-tx")
		d.Record("a never-enabled feature answers as the canary", never == canary)
		set("enable cnat-output-ip4 on tap3", "tap3", "ip4-output", "cnat-output-ip4", true)
		ask("tap3 ip4-output cnat-output-ip4, enabled", "tap3", "ip4-output", "cnat-output-ip4")
		ask("tap3 ip4-output canary, after", "tap3", "ip4-output", "ip4-source-and-port-range-check-tx")
		ask("uplink0 (lower index) ip4-output canary", "uplink0", "ip4-output", "ip4-source-and-port-range-check-tx")
		set("disable cnat-output-ip4 on tap3", "tap3", "ip4-output", "cnat-output-ip4", false)
		ask("tap3 ip4-output cnat-output-ip4, disabled", "tap3", "ip4-output", "cnat-output-ip4")
	})
}
