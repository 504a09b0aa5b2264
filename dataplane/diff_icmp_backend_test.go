package dataplane_test

// Differential case of an ICMP error from a load-balanced backend behind
// the outside interface (what vppsvc's NAT44 node sees when a client pod
// calls a ClusterIP whose endpoint is on another node): the error takes
// nat44-ed-out2in and matches the session's inside flow. With forwarding
// on, the fast path translates it with that flow (the quoted header goes
// back to the ClusterIP; the outer source, not being the flow's rewritten
// source, is kept); without forwarding it is dropped.

import (
	"testing"

	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/binapi/nat_types"

	"github.com/vppsvc/vppsvc/fakevpp"
)

func TestDiffICMPFromRemoteBackend(t *testing.T) {
	runDifferential(t, "icmp/nat44-remote-backend", func(d *diffCase) {
		podNodeTopology(d)
		nat := nat44_ed.NewServiceClient(d.Conn)
		_, err := nat.Nat44EdPluginEnableDisable(d.Ctx, &nat44_ed.Nat44EdPluginEnableDisable{Enable: true})
		d.Must(err)
		for _, f := range []struct {
			ifName string
			flags  nat_types.NatConfigFlags
		}{{"uplink0", 0}, {"tap2", 0}, {"tap2", nat_types.NAT_IS_INSIDE}} {
			_, err = nat.Nat44InterfaceAddDelFeature(d.Ctx, &nat44_ed.Nat44InterfaceAddDelFeature{IsAdd: true, Flags: f.flags, SwIfIndex: d.Sw(f.ifName)})
			d.Must(err)
		}
		// One backend each: a static mapping (an LB mapping wants two
		// locals or more), as vppsvc renders a single endpoint.
		for _, m := range []struct {
			vip, local string
			proto      uint8
			lport      uint16
		}{{"10.96.0.10", "10.1.2.2", 6, 8080}, {"10.96.0.11", "10.1.2.3", 17, 5353}} {
			_, err = nat.Nat44AddDelStaticMappingV2(d.Ctx, &nat44_ed.Nat44AddDelStaticMappingV2{IsAdd: true, Flags: nat_types.NAT_IS_OUT2IN_ONLY,
				LocalIPAddress: ip4a(m.local), ExternalIPAddress: ip4a(m.vip), Protocol: m.proto, LocalPort: m.lport, ExternalPort: 80, ExternalSwIfIndex: noIf})
			d.Retval("static mapping "+m.vip+":80 → "+m.local, err)
		}
		forwarding := func(on bool) {
			_, err := nat.Nat44ForwardingEnableDisable(d.Ctx, &nat44_ed.Nat44ForwardingEnableDisable{Enable: on})
			d.Retval("forwarding", err)
		}
		unreach, fragNeeded := fakevpp.ICMP4DestUnreach, uint8(4)
		forwarding(true)
		syn := d.Trace("client pod SYN to the VIP", tcp("tap2", "10.1.1.9:41000", "10.96.0.10:80"))
		d.Trace("the backend's fragmentation needed, quoting the whole packet", icmpErrorFull("uplink0", "10.1.2.2", unreach, fragNeeded, syn.Out))
		d.Trace("the same quoting 8 bytes of TCP", icmpError("uplink0", "10.1.2.2", unreach, fragNeeded, syn.Out))
		syn2 := d.Trace("second SYN to the VIP", tcp("tap2", "10.1.1.9:41001", "10.96.0.10:80"))
		d.Trace("a router's time exceeded about it", icmpErrorFull("uplink0", "192.168.16.254", fakevpp.ICMP4TimeExceeded, 0, syn2.Out))
		udp := d.Trace("client pod UDP to the VIP", fakevpp.Packet{Ingress: "tap2", Protocol: 17, Src: ap("10.1.1.9:41002"), Dst: ap("10.96.0.11:80")})
		d.Trace("the backend's port unreachable", icmpError("uplink0", "10.1.2.3", unreach, fakevpp.ICMP4PortUnreachable, udp.Out))
		forwarding(false)
		udp2 := d.Trace("client pod UDP to the VIP, forwarding off", fakevpp.Packet{Ingress: "tap2", Protocol: 17, Src: ap("10.1.1.9:41003"), Dst: ap("10.96.0.11:80")})
		d.Trace("the backend's port unreachable, forwarding off", icmpError("uplink0", "10.1.2.3", unreach, fakevpp.ICMP4PortUnreachable, udp2.Out))
		sessions(d, "sessions", "10.1.2.2")
	})
}
