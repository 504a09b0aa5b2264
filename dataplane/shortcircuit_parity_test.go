package dataplane_test

import (
	"strconv"
	"strings"
	"testing"

	"go.fd.io/govpp/binapi/cnat"
	"go.fd.io/govpp/binapi/feature"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip_types"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/binapi/nat_types"

	"github.com/vppsvc/vppsvc/fakevpp"
)

// The construct behind the NAT44 renderer's short-circuit of internal
// clients (docs/renderer-nat44.md): NAT44-ED maps a LoadBalancer IP to the
// local endpoint only (externalTrafficPolicy Local) and the ClusterIP to
// every endpoint; cnat-input-ip4 on a pod interface rewrites the LoadBalancer
// IP to the ClusterIP before NAT44-ED, and cnat-output-ip4 on it turns the
// reply's source back. A pod then reaches every endpoint through the
// LoadBalancer IP, an external client on the uplink only the local one, and
// both get their replies from the address they dialled.
func TestCnatInputFeatureBeforeNAT44(t *testing.T) {
	n := newNode(t)
	must(t, n.AddInterface("tap9"))
	must(t, n.SetUnnumbered("tap9", "host0"))
	must(t, n.AddRoute(pfx("10.1.1.9/32"), "tap9"))
	must(t, n.AddRoute(pfx("10.1.2.0/24"), "uplink0"))
	conn := connect(t, n)
	c := ctx(t)
	nat := nat44_ed.NewServiceClient(conn)
	_, err := nat.Nat44EdPluginEnableDisable(c, &nat44_ed.Nat44EdPluginEnableDisable{Enable: true})
	must(t, err)
	_, err = nat.Nat44ForwardingEnableDisable(c, &nat44_ed.Nat44ForwardingEnableDisable{Enable: true})
	must(t, err)
	for _, i := range []string{"uplink0", "tap9", "tap2"} {
		_, err = nat.Nat44InterfaceAddDelFeature(c, &nat44_ed.Nat44InterfaceAddDelFeature{IsAdd: true, SwIfIndex: swIf(t, n, i)})
		must(t, err)
	}
	_, err = nat.Nat44InterfaceAddDelFeature(c, &nat44_ed.Nat44InterfaceAddDelFeature{IsAdd: true, Flags: nat_types.NAT_IS_INSIDE, SwIfIndex: swIf(t, n, "tap2")})
	must(t, err)
	_, err = nat.Nat44AddDelLbStaticMapping(c, &nat44_ed.Nat44AddDelLbStaticMapping{IsAdd: true, Flags: nat_types.NAT_IS_OUT2IN_ONLY,
		ExternalAddr: ip_types.IP4Address{10, 96, 0, 10}, ExternalPort: 80, Protocol: 6, LocalNum: 2, Locals: []nat44_ed.Nat44LbAddrPort{
			{Addr: ip_types.IP4Address{10, 1, 1, 2}, Port: 8080, Probability: 1}, {Addr: ip_types.IP4Address{10, 1, 2, 2}, Port: 8080, Probability: 1}}})
	must(t, err)
	_, err = nat.Nat44AddDelStaticMappingV2(c, &nat44_ed.Nat44AddDelStaticMappingV2{IsAdd: true, Flags: nat_types.NAT_IS_OUT2IN_ONLY,
		LocalIPAddress: ip_types.IP4Address{10, 1, 1, 2}, ExternalIPAddress: ip_types.IP4Address{198, 51, 100, 10},
		Protocol: 6, LocalPort: 8080, ExternalPort: 80, ExternalSwIfIndex: ^interface_types.InterfaceIndex(0)})
	must(t, err)
	_, err = cnat.NewServiceClient(conn).CnatTranslationUpdate(c, &cnat.CnatTranslationUpdate{Translation: cnat.CnatTranslation{
		Vip: cnatEndpoint("198.51.100.10:80"), IPProto: ip_types.IP_API_PROTO_TCP, IsRealIP: 1,
		Paths: []cnat.CnatEndpointTuple{{DstEp: cnatEndpoint("10.96.0.10:80"), SrcEp: cnatEndpoint("0.0.0.0:0")}}}})
	must(t, err)
	fc := feature.NewServiceClient(conn)
	for _, f := range []feature.FeatureEnableDisable{
		{ArcName: "ip4-unicast", FeatureName: "cnat-input-ip4"}, {ArcName: "ip4-output", FeatureName: "cnat-output-ip4"}} {
		f.Enable, f.SwIfIndex = true, swIf(t, n, "tap9")
		_, err = fc.FeatureEnableDisable(c, &f)
		must(t, err)
	}

	seen := map[string]bool{}
	for port := 40000; port < 40008; port++ {
		tr := n.Trace(tcp("tap9", "10.1.1.9:"+strconv.Itoa(port), "198.51.100.10:80"))
		if tr.Verdict != fakevpp.Forward || tr.SNAT || !tr.ReplyOK || !strings.Contains(strings.Join(tr.Steps, "\n"), "cnat-input") {
			t.Fatalf("pod to the LoadBalancer IP: %s to %s (%s) snat %t reply ok %t\n%s", tr.Verdict, tr.Out.Dst, tr.Reason, tr.SNAT, tr.ReplyOK, strings.Join(tr.Steps, "\n"))
		}
		seen[tr.Out.Dst.String()] = true
	}
	if !seen["10.1.1.2:8080"] || !seen["10.1.2.2:8080"] || len(seen) != 2 {
		t.Errorf("a pod reaches %v through the LoadBalancer IP, want both endpoints", seen)
	}
	tr := n.Trace(tcp("uplink0", "100.64.1.5:40100", "198.51.100.10:80"))
	if tr.Verdict != fakevpp.Forward || tr.Out.Dst.String() != "10.1.1.2:8080" || tr.SNAT || !tr.ReplyOK {
		t.Errorf("external client to the LoadBalancer IP: %s to %s (%s) reply ok %t\n%s", tr.Verdict, tr.Out.Dst, tr.Reason, tr.ReplyOK, strings.Join(tr.Steps, "\n"))
	}
	// The feature's sessions: one at INPUT (0), one at OUTPUT (1) per flow.
	s, err := cnat.NewServiceClient(conn).CnatSessionDump(c, &cnat.CnatSessionDump{})
	must(t, err)
	locs := map[uint8]int{}
	for {
		d, err := s.Recv()
		if err != nil {
			break
		}
		locs[d.Session.Location]++
	}
	if locs[0] != 8 || locs[1] != 8 || len(locs) != 2 {
		t.Errorf("cnat sessions by location: %v, want 8 at input (0) and 8 at output (1)", locs)
	}
}
