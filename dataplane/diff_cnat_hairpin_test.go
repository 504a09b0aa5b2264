package dataplane_test

// Whether cnat can source-NAT only the pod that reaches itself through a
// service (docs/renderer-ipv6.md "Hairpin"): the K8S SNAT
// policy's rule "src == dst → SNAT" seen by cnat-output-ip6 on the pod
// interfaces, after cnat-input-ip6 on the same interfaces has rewritten the
// VIP to the pod. The translations carry no source on any path.

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"go.fd.io/govpp/binapi/cnat"
	"go.fd.io/govpp/binapi/feature"
	"go.fd.io/govpp/binapi/ip_types"

	"github.com/vppsvc/vppsvc/fakevpp"
)

// Addresses of the hairpin case: two pods behind their own taps, the node's
// IPv6 address as the SNAT address.
const (
	hairpinPod     = "fd00:1:1::2"
	hairpinOther   = "fd00:1:1::3"
	hairpinSNATIP6 = "fd00:16::1"
)

func TestDiffCnatHairpinByPolicy(t *testing.T) {
	runDifferential(t, "cnat/k8s-policy-hairpin", func(d *diffCase) {
		hairpinTopology(d)
		c := cnat.NewServiceClient(d.Conn)
		_, err := c.CnatSetSnatPolicy(d.Ctx, &cnat.CnatSetSnatPolicy{Policy: cnat.CNAT_POLICY_K8S})
		d.Retval("snat policy k8s", err)
		for _, i := range []string{"tap2", "tap3"} {
			_, err = c.CnatSnatPolicyAddDelIf(d.Ctx, &cnat.CnatSnatPolicyAddDelIf{SwIfIndex: d.Sw(i), IsAdd: 1, Table: cnat.CNAT_POLICY_POD})
			d.Retval(i+" in the pod table", err)
		}
		_, err = c.CnatSetSnatAddresses(d.Ctx, &cnat.CnatSetSnatAddresses{SnatIP6: ip_types.IP6Address(addr(hairpinSNATIP6).As16()), SwIfIndex: noIf})
		d.Retval("snat address "+hairpinSNATIP6, err)
		fc := feature.NewServiceClient(d.Conn)
		for _, i := range []string{"tap2", "tap3"} {
			for _, f := range []feature.FeatureEnableDisable{
				{ArcName: "ip6-unicast", FeatureName: "cnat-input-ip6"}, {ArcName: "ip6-output", FeatureName: "cnat-output-ip6"}} {
				f.Enable, f.SwIfIndex = true, d.Sw(i)
				_, err = fc.FeatureEnableDisable(d.Ctx, &f)
				d.Retval(f.FeatureName+" on "+i, err)
			}
		}
		for _, tr := range []struct {
			vip  string
			pods []string
		}{
			{"[fd00:96::10]:80", []string{hairpinPod}},
			{"[fd00:96::11]:80", []string{hairpinOther}},
			{"[fd00:96::12]:80", []string{hairpinPod, hairpinOther}},
		} {
			var paths []cnat.CnatEndpointTuple
			for _, p := range tr.pods {
				paths = append(paths, cnat.CnatEndpointTuple{DstEp: cnatEndpoint("[" + p + "]:8080"), SrcEp: cnatEndpoint("[::]:0")})
			}
			_, err = c.CnatTranslationUpdate(d.Ctx, &cnat.CnatTranslationUpdate{Translation: cnat.CnatTranslation{
				Vip: cnatEndpoint(tr.vip), IPProto: ip_types.IP_API_PROTO_TCP, Flags: uint8(cnat.CNAT_TRANSLATION_ALLOC_PORT), Paths: paths}})
			d.Retval("translation "+tr.vip+" → "+strings.Join(tr.pods, ", ")+", no source on any path", err)
		}

		// (a) The pod reaches itself: cnat-output sees pod → pod and
		// source-NATs it; the reply is turned back into VIP → pod.
		traceAllocPort(d, "(a) the pod to a VIP whose path is itself", tcp("tap2", "["+hairpinPod+"]:40001", "[fd00:96::10]:80"))
		sessionsAllocPort(d, "cnat sessions of (a)")
		// (b) The pod reaches the other pod: its source is kept.
		d.Trace("(b) the pod to a VIP whose path is the other pod", tcp("tap2", "["+hairpinPod+"]:40002", "[fd00:96::11]:80"))
		// (c) A client on the uplink: the VIP path translates, cnat-output
		// on the pod's tap keeps the source.
		d.Trace("(c) an uplink client to the VIP of the pod", tcp("uplink0", "[2001:db8::7]:40003", "[fd00:96::10]:80"))
		d.Trace("(c) an uplink client to the VIP of the other pod", tcp("uplink0", "[2001:db8::7]:40004", "[fd00:96::11]:80"))

		// One VIP with both pods as paths: whichever path a flow takes,
		// only the flows that land on the client itself are source-NATed.
		// Which flow takes which path depends on VPP's hash, which the
		// fake does not reproduce, so only the outcome per class is kept.
		hairpinBothPaths(d, "[fd00:96::12]:80")
	})
}

// A real VPP 25.10 never returns a source port to its allocator (the
// sessions that held them, purged between tests, free them in network byte
// order), so which port a source-NATed flow gets depends on the tests that
// ran before. The hairpin records record such ports as "alloc".

// traceAllocPort is d.Trace with a source port from cnat's allocator
// (49152–65534) written as "alloc".
func traceAllocPort(d *diffCase, label string, p fakevpp.Packet) {
	d.t.Helper()
	tr := d.Node.Trace(p)
	s := string(tr.Verdict)
	if tr.Verdict == fakevpp.Forward {
		out := tr.Out.String()
		switch port := tr.Out.Src.Port(); {
		case !isAllocPort(port):
		case tr.Out.Protocol == 1 || tr.Out.Protocol == 58:
			// An echo's identifier is both its ports.
			out = strings.ReplaceAll(out, fmt.Sprintf(":%d ", port), ":alloc ")
		default:
			out = strings.Replace(out, fmt.Sprintf(":%d → ", port), ":alloc → ", 1)
		}
		s = fmt.Sprintf("forward via %s as %s reply ok %t", tr.Egress, out, tr.ReplyOK)
	}
	fmt.Fprintf(&d.out, "# %s: %s\n  %s\n", label, p, s)
}

// sessionsAllocPort records the cnat session dump with ports from the
// allocator written as 0.
func sessionsAllocPort(d *diffCase, label string) {
	d.t.Helper()
	ss, err := dumpAll[*cnat.CnatSessionDetails](d, &cnat.CnatSessionDump{})
	d.Must(err)
	for _, s := range ss {
		for _, ep := range []*cnat.CnatEndpoint{&s.Session.Src, &s.Session.Dst, &s.Session.New} {
			if isAllocPort(ep.Port) {
				ep.Port = 0
			}
		}
	}
	d.RecordExcept(label+" (allocated ports as 0)", ss, "Timestamp")
}

func isAllocPort(p uint16) bool { return p >= 49152 && p <= 65534 }

// hairpinBothPaths sends flows from the pod to vip (two paths: the pod and
// the other pod) until both paths were taken, and records per path whether
// every flow was source-NATed as the K8S policy says and got its reply.
func hairpinBothPaths(d *diffCase, vip string) {
	d.t.Helper()
	type outcome struct{ flows, asExpected int }
	seen := map[string]*outcome{hairpinPod: {}, hairpinOther: {}}
	for port := 41000; port < 41032; port++ {
		tr := d.Node.Trace(tcp("tap2", fmt.Sprintf("[%s]:%d", hairpinPod, port), vip))
		o := seen[tr.Out.Dst.Addr().String()]
		if tr.Verdict != fakevpp.Forward || o == nil {
			d.Record(fmt.Sprintf("flow from port %d", port), fmt.Sprintf("%s via %s as %s (unexpected)", tr.Verdict, tr.Egress, tr.Out))
			continue
		}
		wantSrc := addr(hairpinPod)
		if tr.Out.Dst.Addr() == addr(hairpinPod) {
			wantSrc = addr(hairpinSNATIP6)
		}
		o.flows++
		if tr.Out.Src.Addr() == wantSrc && tr.ReplyOK {
			o.asExpected++
		}
	}
	for _, p := range []struct{ label, addr string }{
		{"flows of " + vip + " that landed on the pod itself: any, all from " + hairpinSNATIP6 + " with their replies", hairpinPod},
		{"flows of " + vip + " that landed on the other pod: any, all keeping their source with their replies", hairpinOther},
	} {
		o := seen[p.addr]
		d.Record(p.label, fmt.Sprintf("%t, %t", o.flows > 0, o.flows == o.asExpected))
	}
}

// hairpinTopology is an uplink, a host interface and two pod taps unnumbered
// to it, each with one pod's /128, in IPv6.
func hairpinTopology(d *diffCase) {
	d.t.Helper()
	n := d.Node
	for _, err := range []error{
		n.AddInterface("uplink0", pfx("192.168.16.1/24"), pfx(hairpinSNATIP6+"/64")),
		n.AddInterface("host0", pfx("172.30.1.1/24"), pfx("fd00:30::1/64")),
		n.AddInterface("tap2"),
		n.SetUnnumbered("tap2", "host0"),
		n.AddInterface("tap3"),
		n.SetUnnumbered("tap3", "host0"),
		n.AddRoute(netip.PrefixFrom(addr(hairpinPod), 128), "tap2"),
		n.AddRoute(netip.PrefixFrom(addr(hairpinOther), 128), "tap3"),
		n.AddRoute(pfx("::/0"), "uplink0"),
	} {
		d.Must(err)
	}
}
